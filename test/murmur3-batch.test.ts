/**
 * The WebAssembly batch kernel (wasm/murmur3.wat `murmur3_batch`) against an independent
 * MurmurHash3 x64 128 written here from Appleby's MurmurHash3_x64_128 in BigInt arithmetic (itself
 * checked against the published hash of "The quick brown fox..."): keys of every length 0..300
 * in a shuffled order, hashed in chunks of odd and even sizes and of one key, every pair of
 * lengths 0..40 (and some of 47..100) side by side in one chunk both ways round (keys that differ
 * in 16-byte blocks and in tail bytes, each key's tail loads reading into its neighbour's bytes),
 * and the per-key path (`murmur3`, a batch of one).
 */
import { describe, expect, it } from 'vitest';
import { batchScratch, hashIndex, murmur3Batch, releaseBatch } from '../src/hash/batch.js';
import { hashKey, useWasm, usingWasm, views } from '../src/hash/hasher.js';
import { packAll } from '../src/hash/pack.js';

const M64 = (1n << 64n) - 1n;
const C1 = 0x87c37b91114253d5n;
const C2 = 0x4cf5ad432745937fn;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64;
const fmix = (x: bigint): bigint => {
  x ^= x >> 33n;
  x = (x * 0xff51afd7ed558ccdn) & M64;
  x ^= x >> 33n;
  x = (x * 0xc4ceb9fe1a85ec53n) & M64;
  return x ^ (x >> 33n);
};
/** Little-endian u64 of bytes [at, at + n) (n <= 8). */
const le = (b: Uint8Array, at: number, n: number): bigint => {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[at + i]!);
  return v;
};

/** MurmurHash3 x64 128, seed 0, after Appleby's MurmurHash3_x64_128: [h1, h2]. */
function reference(b: Uint8Array): [bigint, bigint] {
  let h1 = 0n;
  let h2 = 0n;
  const blocks = b.length >> 4;
  for (let i = 0; i < blocks; i++) {
    h1 ^= (rotl((le(b, 16 * i, 8) * C1) & M64, 31n) * C2) & M64;
    h1 = ((rotl(h1, 27n) + h2) * 5n + 0x52dce729n) & M64;
    h2 ^= (rotl((le(b, 16 * i + 8, 8) * C2) & M64, 33n) * C1) & M64;
    h2 = ((rotl(h2, 31n) + h1) * 5n + 0x38495ab5n) & M64;
  }
  const rest = b.length & 15;
  if (rest > 8) h2 ^= (rotl((le(b, 16 * blocks + 8, rest - 8) * C2) & M64, 33n) * C1) & M64;
  if (rest > 0) h1 ^= (rotl((le(b, 16 * blocks, Math.min(rest, 8)) * C1) & M64, 31n) * C2) & M64;
  h1 ^= BigInt(b.length);
  h2 ^= BigInt(b.length);
  h1 = (h1 + h2) & M64;
  h2 = (h2 + h1) & M64;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = (h1 + h2) & M64;
  h2 = (h2 + h1) & M64;
  return [h1, h2];
}

/** A seeded xorshift generator for reproducible inputs. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

/** Random keys of lengths 0..300, each length `copies` times, in a seeded random order. */
function shuffledKeys(seed: number, copies: number): Uint8Array[] {
  const next = rng(seed);
  const keys: Uint8Array[] = [];
  for (let c = 0; c < copies; c++) {
    for (let len = 0; len <= 300; len++) {
      keys.push(Uint8Array.from({ length: len }, () => Math.floor(next() * 256)));
    }
  }
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return keys;
}

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
    const next = rng(9);
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
    const next = rng(11);
    for (let len = 0; len <= 300; len++) {
      const key = Uint8Array.from({ length: len }, () => Math.floor(next() * 256));
      hashKey('bytes', key);
      const h = views.hash;
      expect([u64(h[0]!, h[1]!), u64(h[2]!, h[3]!)], `${len} bytes`).toEqual(reference(key));
    }
  });
});
