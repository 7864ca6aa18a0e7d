/**
 * The WebAssembly batch kernel (wasm/xxh64.wat `xxh64_batch`) hashes two keys at a time, each
 * loop running both keys while both have a stripe, lane or byte left and then the longer key
 * alone. Every pairing of lengths must give each key's own XXH64: batches of keys of every length
 * 0..300 in a shuffled order (so that pairs differ in stripes, 8-byte lanes, the 4-byte lane and
 * single bytes, either key the longer), odd counts (the last key hashed with itself) and one key,
 * checked against an independent implementation (hyparquet's, in BigInt arithmetic).
 */
import { xxhash64 as hyparquetXxhash64 } from 'hyparquet/src/xxhash.js';
import { describe, expect, it } from 'vitest';
import { useWasmXxh64, xxh64Many, xxh64UsesWasm, xxViews } from '../src/hash/xxhash64.js';
import { mulberry32, shuffledKeys } from './support/random.js';

/** XXH64 of keys[start, start + count) through the batch kernel, as unsigned bigints. */
function batch(keys: Uint8Array[], start: number, count: number): bigint[] {
  xxh64Many('bytes', keys, start, count);
  const many = xxViews.many;
  return Array.from(
    { length: count },
    (_, i) => (BigInt(many[2 * i + 1]! >>> 0) << 32n) | BigInt(many[2 * i]! >>> 0),
  );
}

describe('XXH64 batch kernel, two keys at a time', () => {
  it('runs in WebAssembly here', () => {
    useWasmXxh64(true);
    expect(xxh64UsesWasm()).toBe(true);
  });

  it('gives every key its own hash whatever length its pair has (lengths 0..300, shuffled)', () => {
    useWasmXxh64(true);
    const keys = shuffledKeys(5, 3);
    // Chunks of odd and even sizes, so that keys pair up differently and some end alone.
    for (const size of [1, 2, 3, 301, 302]) {
      // Small chunks over the first 90 keys only (each chunk is a call), large ones over all.
      const span = size < 4 ? 90 : keys.length;
      for (let start = 0; start + size <= span; start += size) {
        const got = batch(keys, start, size);
        for (let i = 0; i < size; i++) {
          const key = keys[start + i]!;
          expect(got[i], `chunk of ${size} at ${start}, key ${i} (${key.length} bytes)`).toBe(
            hyparquetXxhash64(key),
          );
        }
      }
    }
  });

  it('hashes every pair of lengths 0..40 and 60..100 both ways round', () => {
    useWasmXxh64(true);
    const next = mulberry32(9);
    const lengths = [...Array.from({ length: 41 }, (_, i) => i), 60, 63, 64, 71, 95, 96, 100];
    const byLength = lengths.map((len) =>
      Uint8Array.from({ length: len }, () => Math.floor(next() * 256)),
    );
    const expected = byLength.map((key) => hyparquetXxhash64(key));
    for (let a = 0; a < byLength.length; a++) {
      for (let b = 0; b < byLength.length; b++) {
        const got = batch([byLength[a]!, byLength[b]!], 0, 2);
        expect(got, `lengths ${lengths[a]} and ${lengths[b]}`).toEqual([expected[a], expected[b]]);
      }
    }
  });
});
