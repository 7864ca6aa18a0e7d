/**
 * What one import costs a browser application: the published ESM build (tsup.config.ts's `esm`,
 * built here without declarations) is bundled by esbuild for the browser, minified, once per
 * filter type, importing that type alone, the way an application would. Each must stay within the
 * budget (30 kB minified) or the bound stated for it below, the figures in README.md's size table
 * must be what this test measures (within a small margin), and importing the core must compile no
 * WebAssembly: each hashing module is compiled on first use.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { build as tsup } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esm } from '../tsup.config.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The bound on importing one filter type, minified (1 kB = 1000 bytes). */
const BUDGET = 30_000;
/**
 * The types whose public API alone weighs more than {@link BUDGET}, each bound at what it
 * measures plus about 3% (for growth elsewhere; the test fails, asking to drop the entry, once a
 * type fits the budget). A class's static methods cannot be tree-shaken, so a type carries every
 * reader and writer its class offers. What stays after the cuts (per-hash WebAssembly modules
 * compiled on first use, format detection out of the class paths, the streaming sinks only in the
 * codec table, one JavaScript MITZ_64 walk, CRC-32C without argument checks inside the container,
 * one copy of each MurmurHash3 step in both its forms, hash scheme ids checked at compile time):
 * - `BloomFilter` (35.2 kB when this bound was set): MurmurHash3 with Guava's MITZ_64 walk and the
 *   kernels' batch walks as a WebAssembly module (2.5 kB of base64) and its JavaScript fallback
 *   for hosts that forbid WebAssembly (1.8 kB); the scratch memory, per-filter kernels, batch
 *   chunks and loader (5.7 kB); the key funnels (2.4 kB); `fromBytes`/`toBytes`: the native
 *   container with its CRC-32C and the Guava/native advice (7.0 kB); `fromGuava`/`toGuava`
 *   (1.3 kB); `{ shared: true }`/`fromShared` (2.2 kB); typed errors naming parameter and value
 *   (1.2 kB); the class, its bases, bit array, probe strategies, packed keys and sizing math
 *   (11.0 kB).
 * - `BlockedBloomFilter` (31.6 kB): the same container, storage and funnels, XXH64 in WebAssembly
 *   and JavaScript (3.8 kB), and since its batch paths run in a WebAssembly kernel of their own,
 *   that kernel (the blocked-probe module, 0.5 kB of base64; its memory and calls, 1.5 kB; the
 *   class's kernel paths), about 2.4 kB in all.
 * - `SplitBlockBloomFilter` (35.7 kB): the same container, storage and funnels, XXH64 in
 *   WebAssembly and JavaScript (3.9 kB), Parquet's thrift header for `fromParquet` /
 *   `toParquet` (2.7 kB, plus its part of format.ts), and the same kind of kernel as the blocked
 *   filter's with its own probe module (about 2.4 kB: batch adds and tests 2.4x / 2x faster).
 * - `CountingBloomFilter` (42.1 kB) and `ScalableBloomFilter` (43.2 kB): a whole `BloomFilter`
 *   (`toBloomFilter()` returns one; a scalable filter's layers are classic filters, `layer(i)`),
 *   whose static readers and writers come with the class, plus 6.9 and 7.5 kB of their own (the
 *   scalable filter's batch path, which hashes a chunk of keys once for all layers and walks each
 *   layer in its kernel, is 1.5 kB of that).
 * Each bound was then raised by the string batch paths (about 1.4 kB in each type that has a
 * kernel: `addMany` / `hasMany` pack strings straight into the kernel's memory, with Node's
 * `Buffer` where there is one; BloomFilter 36.9 kB, BlockedBloomFilter 33.1 kB, split-block
 * 37.5 kB, counting 43.8 kB, scalable 44.9 kB when raised), and again by the string runs
 * (hash/utf16-stage.ts and its UTF-16 to UTF-8 transcoder, 0.8 kB of base64: about 1.7 kB in each
 * type with a kernel; they run only where Node's `Buffer` is, and pack strings 1.5x faster:
 * BloomFilter 39.6 kB, BlockedBloomFilter 35.9 kB, split-block 40.1 kB, counting 46.5 kB,
 * scalable 47.4 kB when raised), and by the runs transcoded in place in a kernel's memory and
 * the transcoder as one stream per run (0.2 to 0.6 kB; blocked `addMany` / `hasMany` of URLs took
 * 0.96 / 0.97 / 0.98 of the time: BloomFilter 41.2 kB, BlockedBloomFilter 37.4 kB, split-block
 * 41.6 kB, counting 48.2 kB, scalable 49.0 kB when raised), and by `hasMany(keys, out)` with
 * its reused answer bytes (0.2 to 0.4 kB; a million answers into a reused array cost 1 ms where a
 * new array costs 25 ms: BloomFilter 41.6 kB when raised), and by XXH64 hashing two keys a step
 * with branch-free tails (0.9 kB more base64 in the types that hash with XXH64; the blocked batch
 * kernel 1.18x as fast at 10M URL keys: BlockedBloomFilter 38.7 kB, split-block 42.8 kB when
 * raised).
 */
const OVER_BUDGET: Readonly<Record<string, number>> = {
  // The string batch paths, the saturation figure (FilterBase.saturation), then the string runs.
  BloomFilter: 41_800,
  BlockedBloomFilter: 39_200,
  SplitBlockBloomFilter: 43_300,
  CountingBloomFilter: 48_800,
  ScalableBloomFilter: 49_600,
};
/** How far README.md's figures may drift from what is measured before the test asks for an update. */
const MARGIN = 0.05;
/** The imports measured: each filter type alone, then the sizing math alone, then everything. */
const IMPORTS = [
  'BloomFilter',
  'BlockedBloomFilter',
  'SplitBlockBloomFilter',
  'CountingBloomFilter',
  'ScalableBloomFilter',
  'CuckooFilter',
] as const;

interface Size {
  /** How README.md's size table names the import. */
  what: string;
  minified: number;
  gzip: number;
  /** The modules that make up the minified bundle, largest first (for a budget failure). */
  parts: string;
}

let dir = '';
const sizes: Size[] = [];

/** Bundles `code` (an application module beside the built dist/) for the browser. */
async function bundle(code: string): Promise<{ js: string; parts: string }> {
  const out = await build({
    stdin: { contents: code, resolveDir: dir, sourcefile: 'app.js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    write: false,
    metafile: true,
    // bloomkit's own dependencies (hyparquet, ...) resolve as they would in an application.
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'silent',
  });
  const inputs = Object.values(out.metafile.outputs)[0]!.inputs;
  const parts = Object.entries(inputs)
    .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
    .map(([file, { bytesInOutput }]) => `${file.replace(/^.*?dist\//, '')} ${bytesInOutput}`)
    .join(', ');
  return { js: out.outputFiles[0]!.text, parts };
}

async function measure(what: string, code: string): Promise<Size> {
  const { js, parts } = await bundle(code);
  return { what, minified: js.length, gzip: gzipSync(js, { level: 9 }).length, parts };
}

const EVERYTHING = 'the whole core (`import *`)';
const kB = (n: number): string => (n / 1000).toFixed(1);

describe('browser bundle size of one import', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bloomkit-size-'));
    await tsup({
      ...esm,
      config: false,
      dts: false,
      sourcemap: false,
      silent: true,
      outDir: join(dir, 'dist'),
    });
    // The bundler reads `sideEffects` from the package the files belong to: the real value.
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'bloomkit', type: 'module', sideEffects: pkg.sideEffects }),
    );
    for (const name of IMPORTS) {
      const code = `import { ${name} } from './dist/index.js'; globalThis.x = ${name};`;
      sizes.push(await measure(`\`${name}\``, code));
    }
    const all = `import * as all from './dist/index.js'; globalThis.x = all;`;
    sizes.push(await measure(EVERYTHING, all));
    console.log(
      `measured (minified / gzip, kB):\n${sizes.map((s) => `| ${s.what} | ${kB(s.minified)} | ${kB(s.gzip)} |`).join('\n')}`,
    );
  }, 120_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every filter type within 30 kB minified when imported alone, or its stated bound', () => {
    for (const name of IMPORTS) {
      const s = sizes.find((x) => x.what === `\`${name}\``)!;
      const bound = OVER_BUDGET[name] ?? BUDGET;
      expect(s.minified, `${s.what}: ${s.minified} bytes: ${s.parts}`).toBeLessThanOrEqual(bound);
      if (name in OVER_BUDGET) {
        expect(
          s.minified,
          `${name} now fits ${BUDGET} bytes: drop it from OVER_BUDGET`,
        ).toBeGreaterThan(BUDGET);
      }
    }
  });

  it('drops what is not imported: one filter type costs well under the whole core', () => {
    const everything = sizes.find((s) => s.what === EVERYTHING)!;
    const classic = sizes.find((s) => s.what === '`BloomFilter`')!;
    expect(classic.minified).toBeLessThan(everything.minified / 2);
  });

  it('states in README.md the sizes this test measures (within 5%)', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const rows = new Map<string, [number, number]>();
    for (const m of readme.matchAll(/^\| (.+?) \| ([\d.]+) kB \| ([\d.]+) kB \|$/gm)) {
      rows.set(m[1]!, [Number(m[2]) * 1000, Number(m[3]) * 1000]);
    }
    const table = sizes.map((s) => `| ${s.what} | ${kB(s.minified)} kB | ${kB(s.gzip)} kB |`);
    for (const s of sizes) {
      const stated = rows.get(s.what);
      const hint = `README.md's size table should read:\n${table.join('\n')}`;
      expect(stated, hint).toBeDefined();
      expect(Math.abs(stated![0] - s.minified) / s.minified, hint).toBeLessThanOrEqual(MARGIN);
      expect(Math.abs(stated![1] - s.gzip) / s.gzip, hint).toBeLessThanOrEqual(MARGIN);
    }
  });

  it('compiles no WebAssembly on import, and compiles it on first use', async () => {
    const { js } = await bundle(
      `import { BloomFilter } from './dist/index.js';
const count = () => globalThis.__wasm.compiled;
const afterImport = count();
const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
f.add('a');
console.log(JSON.stringify({ afterImport, afterUse: count(), has: f.has('a') }));`,
    );
    const file = join(dir, 'lazy.mjs');
    // Counts every way a module can be compiled, installed before the bundle is evaluated.
    writeFileSync(
      file,
      `const W = globalThis.WebAssembly; globalThis.__wasm = { compiled: 0 };
class Module extends W.Module { constructor(b) { super(b); globalThis.__wasm.compiled++; } }
const compile = W.compile; const instantiate = W.instantiate;
globalThis.WebAssembly = Object.assign(Object.create(W), { Module, Instance: W.Instance, Memory: W.Memory,
  compile: (b) => (globalThis.__wasm.compiled++, compile(b)),
  instantiate: (b, i) => (b instanceof W.Module ? 0 : globalThis.__wasm.compiled++, instantiate(b, i)) });
await import('./lazy-app.mjs');`,
    );
    writeFileSync(join(dir, 'lazy-app.mjs'), js);
    const { stdout } = await promisify(execFile)('node', [file], { cwd: dir });
    const result = JSON.parse(stdout);
    expect(result.has).toBe(true);
    expect(result.afterImport, 'WebAssembly compiled while importing').toBe(0);
    expect(result.afterUse, 'the hashing module was never compiled').toBeGreaterThan(0);
  });

  it('states the WebAssembly module sizes README.md gives', () => {
    // Each embedded module: a base64 string literal that starts with the wasm magic ("\0asm").
    const size = (file: string): number => {
      const source = readFileSync(join(root, 'src', 'hash', file), 'utf8');
      const m = /'(AGFzbQ[A-Za-z0-9+/=]+)'/.exec(source);
      expect(m, `${file} embeds no WebAssembly module`).not.toBeNull();
      return Buffer.from(m![1]!, 'base64').length;
    };
    const murmur = size('murmur3-wasm.ts');
    const xxh = size('xxh64-wasm.ts');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const n = (x: number): string => x.toLocaleString('en-US');
    const hint = `README.md should say "WebAssembly modules of ${n(murmur)} bytes (MurmurHash3) and ${n(xxh)} bytes\n  (XXH64)"`;
    const stated =
      /WebAssembly modules of ([\d,]+) bytes \(MurmurHash3\) and ([\d,]+) bytes\s+\(XXH64\)/.exec(
        readme,
      );
    expect(stated, hint).not.toBeNull();
    expect([stated![1], stated![2]], hint).toEqual([n(murmur), n(xxh)]);
  });
});
