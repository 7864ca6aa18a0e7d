/**
 * The WebAssembly batch kernel (wasm/murmur3.wat `murmur3_batch`) against an independent
 * MurmurHash3 x64 128 in BigInt arithmetic after Appleby's MurmurHash3_x64_128 (test/support/
 * murmur3-bigint.ts, checked here against the published hash of "The quick brown fox..."): keys of every length 0..300
 * in a shuffled order, hashed in chunks of odd and even sizes and of one key, every pair of
 * lengths 0..40 (and some of 47..100) side by side in one chunk both ways round (keys that differ
 * in 16-byte blocks and in tail bytes, each key's tail loads reading into its neighbour's bytes),
 * and the per-key path (`murmur3`, a batch of one).
 */
import { describe, expect, it } from 'vitest';
import { batchScratch, hashIndex, murmur3Batch, releaseBatch } from '../src/hash/batch.js';
import { hashKey, useWasm, usingWasm, views } from '../src/hash/hasher.js';
import { packAll } from '../src/hash/pack.js';
import { murmur3BigInt } from './support/murmur3-bigint.js';
import { mulberry32, shuffledKeys } from './support/random.js';

/** MurmurHash3 x64 128, seed 0: [h1, h2] (test/support/murmur3-bigint.ts). */
const reference = (b: Uint8Array): [bigint, bigint] => murmur3BigInt(b);

const u64 = (lo: number, hi: number): bigint => (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);

/** [h1, h2] of each of keys[start, start + count), hashed as one chunk by the batch kernel. */
function batch(keys: Uint8Array[], start: number, count: number): [bigint, bigint][] {
  const packed = packAll('bytes', keys.slice(start, start + count));
  expect(murmur3Batch(packed, 0, count)).toBe(count);
  const h = batchScratch!.i32;
  const got = Array.from({ length: count }, (_, i): [bigint, bigint] => {
    const at = hashIndex + 4 * i;
    return [u64(h[at]!, h[at + 1]!), u64(h[at + 2]!, h[at + 3]!)];
  });
  releaseBatch();
  return got;
}

describe('MurmurHash3 batch kernel against an independent reference', () => {
  it('has a reference that gives the published hash', () => {
    const fox = new TextEncoder().encode('The quick brown fox jumps over the lazy dog');
    expect(reference(fox)).toEqual([0xe34bbc7bbc071b6cn, 0x7a433ca9c49a9347n]);
  });

  it('runs in WebAssembly here', () => {
    useWasm(true);
    expect(usingWasm()).toBe(true);
  });

  it('gives every key its own hash whatever its neighbours (lengths 0..300, shuffled)', () => {
    useWasm(true);
    const keys = shuffledKeys(5, 3);
    const expected = keys.map(reference);
    // Chunks of odd and even sizes and of one key, so that keys have different neighbours.
    for (const size of [1, 2, 3, 301, 302]) {
      // Small chunks over the first 90 keys only (each chunk is a call), large ones over all.
      const span = size < 4 ? 90 : keys.length;
      for (let start = 0; start + size <= span; start += size) {
        const got = batch(keys, start, size);
        for (let i = 0; i < size; i++) {
          const what = `chunk of ${size} at ${start}, key ${i} (${keys[start + i]!.length} bytes)`;
          expect(got[i], what).toEqual(expected[start + i]);
        }
      }
    }
  });

  it('hashes every pair of lengths 0..40 and some of 47..100 both ways round', () => {
    useWasm(true);
    const next = mulberry32(9);
    const lengths = [...Array.from({ length: 41 }, (_, i) => i), 47, 48, 63, 64, 65, 80, 95, 100];
    const byLength = lengths.map((len) =>
      Uint8Array.from({ length: len }, () => Math.floor(next() * 256)),
    );
    const expected = byLength.map(reference);
    for (let a = 0; a < byLength.length; a++) {
      for (let b = 0; b < byLength.length; b++) {
        const got = batch([byLength[a]!, byLength[b]!], 0, 2);
        expect(got, `lengths ${lengths[a]} and ${lengths[b]}`).toEqual([expected[a], expected[b]]);
      }
    }
  });

  it('hashes one key alone (the per-key path) the same', () => {
    useWasm(true);
    const next = mulberry32(11);
    for (let len = 0; len <= 300; len++) {
      const key = Uint8Array.from({ length: len }, () => Math.floor(next() * 256));
      hashKey('bytes', key);
      const h = views.hash;
      expect([u64(h[0]!, h[1]!), u64(h[2]!, h[3]!)], `${len} bytes`).toEqual(reference(key));
    }
  });
});
