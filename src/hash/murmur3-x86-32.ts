/**
 * MurmurHash3 x86 32 (Austin Appleby, public domain): the 32-bit variant, as Mozilla's MLBF
 * cascades use it (seed `(i << 16) + layer`, see filters/cascade/hashing.ts) and as the
 * `murmurhash3` Rust crate and Python's `mmh3.hash(key, seed, signed=False)` compute it.
 *
 * Blocks of 4 bytes are read little-endian; the tail (1 to 3 bytes) is mixed in as one
 * little-endian word; the result is the fmix32 finalizer over h ^ length. All arithmetic is
 * 32-bit (`Math.imul`), so nothing is allocated and no BigInt is involved.
 */

import { checkUint8Array, mustBe } from '../errors.js';

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/**
 * MurmurHash3 x86 32 of `bytes[start, end)` with `seed` (an unsigned 32-bit integer); returns
 * an unsigned 32-bit integer. No argument checks: the hot path of the cascade.
 */
export function murmur3x86_32Range(
  bytes: Uint8Array,
  start: number,
  end: number,
  seed: number,
): number {
  let h = seed | 0;
  const blocksEnd = start + ((end - start) & ~3);
  let p = start;
  for (; p < blocksEnd; p += 4) {
    let k = bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = end - p;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[p + 2]! << 16;
    if (tail >= 2) k ^= bytes[p + 1]! << 8;
    k ^= bytes[p]!;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
  }
  h ^= end - start;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** MurmurHash3 x86 32 of `bytes` with `seed` (default 0), an unsigned 32-bit integer. */
export function murmur3x86_32(bytes: Uint8Array, seed = 0): number {
  checkUint8Array('bytes', bytes);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw mustBe('seed', 'an integer in [0, 2^32)', seed);
  }
  return murmur3x86_32Range(bytes, 0, bytes.length, seed);
}
