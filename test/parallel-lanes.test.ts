/**
 * The worker pool's chunk lanes (src/node/parallel-lanes.ts): chunks cut by key count and by
 * bytes, keys longer than a chunk's byte limit, records with `ends` (lines viewed in place), and
 * several runs at once on one pool, all giving the answers and bits of the filter's own batch
 * calls on one thread. A lane reused before its worker was done, offsets left unrebased, or
 * answers copied to the wrong place would show here as a wrong answer or a differing bit.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { expectBytes } from './support/bytes.js';
import { mulberry32 } from './support/random.js';
import { importNodeBundle, removeBundles } from './support/worker-bundle.js';

const {
  BlockedBloomFilter,
  FilterWorkerPool,
  packKeys,
  POOL_CHUNK_BYTES,
  POOL_CHUNK_KEYS,
  splitRecords,
} = await importNodeBundle();
afterAll(removeBundles);

/** 2 MiB of seeded pseudo-random lowercase letters: one string, not a concatenation per letter. */
const LETTERS = (() => {
  const rand = mulberry32(0x1a7e5);
  const bytes = Buffer.alloc(2 << 20);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 97 + Math.floor(rand() * 26);
  return bytes.toString('latin1');
})();
let next = 0;

/** A key of `length` pseudo-random lowercase letters: the next ones of {@link LETTERS}. */
function word(length: number): string {
  if (next + length > LETTERS.length) next = 0;
  next += length;
  return LETTERS.slice(next - length, next);
}

describe('worker pool lanes', () => {
  it('cuts chunks by keys and by bytes (keys longer than a chunk too), with the answers of one thread', async () => {
    // Enough short keys for several key-limited chunks, then long keys: three chunks' worth of
    // bytes in a few keys, one key longer than the byte limit by itself.
    const keys: string[] = [];
    for (let i = 0; i < POOL_CHUNK_KEYS + 123; i++) keys.push(`k${i}-${word(6)}`);
    const long = (length: number): string =>
      word(16)
        .repeat(Math.ceil(length / 16))
        .slice(0, length);
    for (let i = 0; i < 5; i++) keys.push(long(POOL_CHUNK_BYTES / 2 + 17 * i));
    keys.push(long(POOL_CHUNK_BYTES + 5));
    for (let i = 0; i < 1000; i++) keys.push(`tail${i}`);
    const added = keys.filter((_, i) => i % 3 !== 0);
    const one = BlockedBloomFilter.create({ capacity: keys.length, fpp: 0.01, shared: true });
    const packed = packKeys('string', added);
    const mine = one.addBatch(packed);
    const pooled = BlockedBloomFilter.create({ capacity: keys.length, fpp: 0.01, shared: true });
    const pool = await FilterWorkerPool.open(pooled, { workers: 2 });
    try {
      const progress: number[] = [];
      const news = await pool.addBatch(packed, {
        onProgress: (done: number) => progress.push(done),
      });
      // Which of two keys with the same bits counts as new depends on the order the workers
      // reach them: only the total bits must agree exactly.
      expect(Math.abs(news - mine)).toBeLessThan(100);
      expect(progress.at(-1)).toBe(added.length);
      // Chunks: a full key-limited one at least, and the long keys one or two per chunk.
      expect(progress.length).toBeGreaterThanOrEqual(1 + 3);
      expectBytes(pooled.toBytes(), one.toBytes());
      const batch = packKeys('string', keys);
      const found = await pool.hasBatch(batch);
      expectBytes(found, one.hasBatch(batch), 'pool hasBatch');
    } finally {
      await pool.close();
    }
  });

  it('reads lines in place (offsets with ends) and serves several runs at once', async () => {
    const lines: string[] = [];
    for (let i = 0; i < POOL_CHUNK_KEYS + 5000; i++) lines.push(`line ${i} ${word(1 + (i % 40))}`);
    const text = new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);
    const records = splitRecords(text);
    expect(records.ends).toBeDefined();
    const one = BlockedBloomFilter.create({ capacity: lines.length, fpp: 0.01, shared: true });
    // splitRecords leaves the \r out of each line (its `ends`), by both paths.
    one.addBatch(records);
    const pooled = BlockedBloomFilter.create({ capacity: lines.length, fpp: 0.01, shared: true });
    const pool = await FilterWorkerPool.open(pooled, { workers: 2 });
    try {
      await pool.addBatch(records);
      expectBytes(pooled.toBytes(), one.toBytes());
      const probes = lines.map((l, i) => (i % 2 === 0 ? l : `absent ${l}`));
      const batches = [0, 1, 2].map((j) => packKeys('string', probes.slice(j * 20000)));
      const answers = await Promise.all(batches.map((b) => pool.hasBatch(b)));
      for (let j = 0; j < 3; j++) expectBytes(answers[j]!, one.hasBatch(batches[j]!), `run ${j}`);
      // Every present line found (no false negative through the lanes).
      const missed: number[] = [];
      for (let i = 0; i < probes.length; i += 2) if (answers[0]![i] !== 1) missed.push(i);
      expect(missed).toEqual([]);
    } finally {
      await pool.close();
    }
  });
});
