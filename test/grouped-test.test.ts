/**
 * The classic filter's grouped batch test (wasm/murmur3.wat `walk_batch` mode 3, taken by
 * `hasBatch` on bit arrays over GROUPED_TEST_BYTES): the same answers as `has` key by key (the
 * per-key walk that stops at the first clear bit) and as Guava's bits say. The bits are drawn
 * so that about half of the absent keys find all their bits set: then a probe tested wrongly,
 * skipped or taken from another key of the group changes many answers (a filter with a few
 * thousand keys in 8.8 MB answers "absent" at its first probe and would hide such a fault).
 */
import { describe, expect, it } from 'vitest';
import { GROUPED_TEST_BYTES } from '../src/hash/hasher.js';
import { BloomFilter, packKeys } from '../src/index.js';
import { expectBytes } from './support/bytes.js';
import { mixedStrings } from './support/mixed-keys.js';
import { mulberry32 } from './support/random.js';

/**
 * Guava `writeTo` bytes of a MITZ_64 filter with `k` hashes and `longs` 64-bit words, each bit
 * set with probability 1 - 2^-ors (the OR of `ors` random words), from `seed`.
 */
function guavaBytes(k: number, longs: number, ors: number, seed: number): Uint8Array {
  const rnd = mulberry32(seed);
  const bytes = new Uint8Array(6 + 8 * longs);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, 1);
  view.setUint8(1, k);
  view.setInt32(2, longs);
  for (let at = 6; at < bytes.length; at += 4) {
    let word = 0;
    for (let j = 0; j < ors; j++) word |= (rnd() * 4294967296) >>> 0;
    view.setUint32(at, word >>> 0);
  }
  return bytes;
}

describe('hasBatch on a classic filter over GROUPED_TEST_BYTES', () => {
  // k = 7 (fpp 0.01's k); k = 199, where a group holds 61 keys rather than 64.
  for (const [k, ors] of [
    [7, 3],
    [199, 8],
  ] as const) {
    it(`k = ${k}: the same answers as has key by key, about half of them 1`, () => {
      const filter = BloomFilter.fromGuava(guavaBytes(k, 1_100_000, ors, k));
      expect(filter.bitSize / 8).toBeGreaterThan(GROUPED_TEST_BYTES);
      const keys = mixedStrings(6000, 11, 300);
      const found = filter.hasBatch(packKeys('string', keys));
      const want = Uint8Array.from(keys, (key) => (filter.has(key) ? 1 : 0));
      expectBytes(found, want, 'hasBatch vs has');
      const hits = want.reduce((a, b) => a + b, 0);
      expect(hits).toBeGreaterThan(keys.length * 0.25);
      expect(hits).toBeLessThan(keys.length * 0.75);
    });
  }
});
