/**
 * The committed WebAssembly modules (src/hash/*-wasm.ts, base64) are what scripts/build-wasm.ts
 * compiles from their .wat sources now: an edit to a .wat file without `npm run build:wasm` fails
 * here, instead of shipping the old kernel under the new source.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileWat, wasmModuleSource } from '../scripts/build-wasm.js';

const ROOT = join(import.meta.dirname, '..');
const DIR = 'src/hash/wasm';
const sources = readdirSync(join(ROOT, DIR)).filter((f) => f.endsWith('.wat'));

describe('committed WebAssembly modules', () => {
  it('has a .wat source for each kernel', () => {
    expect(sources.length).toBeGreaterThanOrEqual(6);
  });

  for (const file of sources) {
    it(`src/hash/${file.replace(/\.wat$/, '')}-wasm.ts is ${DIR}/${file} compiled now`, async () => {
      const binary = await compileWat(readFileSync(join(ROOT, DIR, file), 'utf8'), file);
      const out = join(ROOT, 'src/hash', `${file.replace(/\.wat$/, '')}-wasm.ts`);
      expect(readFileSync(out, 'utf8'), 'run npm run build:wasm').toBe(
        wasmModuleSource(`${DIR}/${file}`, binary),
      );
    });
  }
});
