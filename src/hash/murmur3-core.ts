/**
 * MurmurHash3 x64 128 in JavaScript, for hosts without WebAssembly (see murmur3.ts): 64-bit lanes
 * as (hi, lo) int32 halves through the helpers of u64.ts (shared with XXH64's core), no BigInt,
 * nothing allocated. One copy of each mixing step: the tail goes through the block loop (its k1
 * and k2 zero-padded, skipping the rotate-add steps, as MurmurHash3's tail does), fmix64 is one
 * function.
 */

import { add, mul, rh, rl, rotl } from './u64.js';

// c1 = 0x87c37b91114253d5, c2 = 0x4cf5ad432745937f, as [hi, lo].
const C1H = 0x87c37b91 | 0;
const C1L = 0x114253d5;
const C2H = 0x4cf5ad43;
const C2L = 0x2745937f;

/**
 * fmix64 of (h:l) but its last step into rh:rl: k ^= k >>> 33; k *= 0xff51afd7ed558ccd;
 * k ^= k >>> 33; k *= 0xc4ceb9fe1a85ec53 (the caller does the last k ^= k >>> 33).
 */
function fmix(h: number, l: number): void {
  mul(h, l ^ (h >>> 1), 0xff51afd7 | 0, 0xed558ccd | 0);
  mul(rh, rl ^ (rh >>> 1), 0xc4ceb9fe | 0, 0x1a85ec53);
}

/** h·5 + n into rh:rl, after `rotl` and `add` left h in rh:rl. */
function times5(n: number): void {
  mul(rh, rl, 0, 5);
  add(rh, rl, 0, n);
}

/**
 * Hashes `len` bytes of `data` from offset `base` (a multiple of 4) into
 * `out = [h1 lo, h1 hi, h2 lo, h2 hi]`. `words`, if not null, is an Int32Array over the whole
 * same buffer on a little-endian host (whole words are read at once).
 */
export function murmur3Core(
  data: Uint8Array,
  words: Int32Array | null,
  base: number,
  len: number,
  out: Int32Array,
  seed: number,
): void {
  let h1l = seed | 0;
  let h1h = 0;
  let h2l = seed | 0;
  let h2h = 0;
  let k1l = 0;
  let k1h = 0;
  let k2l = 0;
  let k2h = 0;
  const blocks = len >>> 4;
  for (let i = 0; ; i++) {
    if (i < blocks) {
      if (words !== null) {
        const w = (base >> 2) + (i << 2);
        k1l = words[w]!;
        k1h = words[w + 1]!;
        k2l = words[w + 2]!;
        k2h = words[w + 3]!;
      } else {
        const o = base + (i << 4);
        k1l = data[o]! | (data[o + 1]! << 8) | (data[o + 2]! << 16) | (data[o + 3]! << 24);
        k1h = data[o + 4]! | (data[o + 5]! << 8) | (data[o + 6]! << 16) | (data[o + 7]! << 24);
        k2l = data[o + 8]! | (data[o + 9]! << 8) | (data[o + 10]! << 16) | (data[o + 11]! << 24);
        k2h = data[o + 12]! | (data[o + 13]! << 8) | (data[o + 14]! << 16) | (data[o + 15]! << 24);
      }
    } else {
      const tail = base + (blocks << 4);
      const rem = len & 15;
      k1l = 0;
      k1h = 0;
      k2l = 0;
      k2h = 0;
      for (let j = rem - 1; j >= 12; j--) k2h = (k2h << 8) | data[tail + j]!;
      for (let j = rem > 12 ? 11 : rem - 1; j >= 8; j--) k2l = (k2l << 8) | data[tail + j]!;
      for (let j = rem > 8 ? 7 : rem - 1; j >= 4; j--) k1h = (k1h << 8) | data[tail + j]!;
      for (let j = rem > 4 ? 3 : rem - 1; j >= 0; j--) k1l = (k1l << 8) | data[tail + j]!;
    }
    // h1 ^= rotl(k1·c1, 31)·c2
    mul(k1h, k1l, C1H, C1L);
    rotl(rh, rl, 31);
    mul(rh, rl, C2H, C2L);
    h1h ^= rh;
    h1l ^= rl;
    if (i < blocks) {
      // h1 = (rotl(h1, 27) + h2)·5 + 0x52dce729
      rotl(h1h, h1l, 27);
      add(rh, rl, h2h, h2l);
      times5(0x52dce729);
      h1h = rh;
      h1l = rl;
    }
    // h2 ^= rotl(k2·c2, 33)·c1 (a rotation by 33 is one by 1 of the swapped halves)
    mul(k2h, k2l, C2H, C2L);
    rotl(rl, rh, 1);
    mul(rh, rl, C1H, C1L);
    h2h ^= rh;
    h2l ^= rl;
    if (i === blocks) break;
    // h2 = (rotl(h2, 31) + h1)·5 + 0x38495ab5
    rotl(h2h, h2l, 31);
    add(rh, rl, h1h, h1l);
    times5(0x38495ab5);
    h2h = rh;
    h2l = rl;
  }
  h1l ^= len;
  h2l ^= len;
  // h1 += h2; h2 += h1; h1 = fmix64(h1); h2 = fmix64(h2); h1 += h2; h2 += h1
  add(h1h, h1l, h2h, h2l);
  h1h = rh;
  h1l = rl;
  add(h2h, h2l, h1h, h1l);
  h2h = rh;
  h2l = rl;
  fmix(h1h, h1l);
  h1h = rh;
  h1l = rl ^ (rh >>> 1);
  fmix(h2h, h2l);
  h2h = rh;
  h2l = rl ^ (rh >>> 1);
  add(h1h, h1l, h2h, h2l);
  out[0] = rl;
  out[1] = rh;
  add(h2h, h2l, rh, rl);
  out[2] = rl;
  out[3] = rh;
}
