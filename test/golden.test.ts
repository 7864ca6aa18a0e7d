/**
 * Frozen outputs: the bytes bloomkit writes for each filter type and format version are stored
 * under test/fixtures/golden/ (made by scripts/make-golden.ts from scripts/golden-cases.ts). This
 * test fails if the writer ever produces different bytes, if a stored file stops decoding, or if a
 * decoded file stops answering as recorded. Adding a filter type = adding rows to the table.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from '../scripts/golden-cases.js';
import { FILTER_TYPES, FORMAT_VERSION } from '../src/formats/native.js';
import { decodeSidecar } from '../src/node/sidecar.js';
import { ChunkedBloomFilter, type Key } from '../src/node.js';
import { decodeAny } from './support/any-filter.js';

const DIR = join(import.meta.dirname, 'fixtures', 'golden');
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'bloomkit-golden-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Answers of a fixture, whatever kind of file it is. */
async function answers(file: string, bytes: Uint8Array, keys: readonly Key[]): Promise<boolean[]> {
  const c = GOLDEN_CASES.find((g) => g.file === file)!;
  if (c.type === 7) {
    const path = join(scratch, file);
    await writeFile(path, bytes);
    const f = await ChunkedBloomFilter.open(path);
    try {
      await f.verify();
      return await f.hasMany(keys);
    } finally {
      await f.close();
    }
  }
  const filter: { has(key: Key): boolean } =
    c.kind === 'sidecar' ? decodeSidecar(bytes).filter : decodeAny(bytes);
  return keys.map((k) => filter.has(k));
}

describe('golden files', () => {
  it('has a fixture for every row and a row for every fixture', () => {
    const files = readdirSync(DIR).sort();
    expect(files).toEqual(GOLDEN_CASES.map((c) => c.file).sort());
    expect(new Set(GOLDEN_CASES.map((c) => c.file)).size).toBe(GOLDEN_CASES.length);
  });

  it('freezes every filter type id that exists (a new type must add its rows)', () => {
    const frozen = new Set(GOLDEN_CASES.map((c) => c.type));
    for (const [name, id] of Object.entries(FILTER_TYPES)) {
      expect(frozen.has(id), `no golden file for filter type ${id} (${name})`).toBe(true);
    }
  });

  for (const c of GOLDEN_CASES) {
    describe(c.file, () => {
      const path = join(DIR, c.file);

      it('still decodes and answers as recorded', async () => {
        expect(existsSync(path), `missing fixture: run npx tsx scripts/make-golden.ts`).toBe(true);
        const bytes = new Uint8Array(readFileSync(path));
        if (c.present.length > 0) {
          expect((await answers(c.file, bytes, c.present)).every(Boolean)).toBe(true);
        }
        expect(await answers(c.file, bytes, c.absent)).toEqual(c.absent.map(() => false));
      });

      if (c.version === FORMAT_VERSION) {
        it('is exactly what the current writer produces', async () => {
          const stored = new Uint8Array(readFileSync(path));
          const now = await c.build();
          // Compare as hex so a failure shows where the bytes moved.
          expect(Buffer.from(now).toString('hex')).toBe(Buffer.from(stored).toString('hex'));
        });
      }

      if (c.type !== 7 && c.kind !== 'sidecar') {
        it('re-encodes to the same bytes after decoding', () => {
          const stored = new Uint8Array(readFileSync(path));
          expect(Buffer.from(decodeAny(stored).toBytes()).equals(Buffer.from(stored))).toBe(true);
        });
      }
    });
  }
});
