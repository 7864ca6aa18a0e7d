/**
 * XXH64 in JavaScript, for hosts without WebAssembly (see xxhash64.ts): 64-bit arithmetic on
 * (hi, lo) int32 halves (u64.ts), no BigInt, nothing allocated.
 */

import { add, mul, rh, rl, rotl } from './u64.js';

// Primes as [hi, lo].
const P1H = 0x9e3779b1 | 0;
const P1L = 0x85ebca87 | 0;
const P2H = 0xc2b2ae3d | 0;
const P2L = 0x27d4eb4f | 0;
const P3H = 0x165667b1 | 0;
const P3L = 0x9e3779f9 | 0;
const P4H = 0x85ebca77 | 0;
const P4L = 0xc2b2ae63 | 0;
const P5H = 0x27d4eb2f | 0;
const P5L = 0x165667c5 | 0;
const TWO_32 = 4294967296;

/** round(acc, lane) = rotl(acc + lane·P2, 31)·P1 into rh:rl. */
function round(ah: number, al: number, lh: number, ll: number): void {
  mul(lh, ll, P2H, P2L);
  add(ah, al, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, P1H, P1L);
}

/** mergeRound(acc, v) = (acc ^ round(0, v))·P1 + P4 into rh:rl. */
function merge(ah: number, al: number, vh: number, vl: number): void {
  round(0, 0, vh, vl);
  mul(ah ^ rh, al ^ rl, P1H, P1L);
  add(rh, rl, P4H, P4L);
}

function read32(b: Uint8Array, p: number): number {
  return b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24);
}

/**
 * XXH64 of `b[off, off + len)` with seed (seedHi:seedLo), written to `out` = [lo, hi], in
 * JavaScript (no WebAssembly, no BigInt).
 */
export function xxh64Core(
  b: Uint8Array,
  off: number,
  len: number,
  seedLo: number,
  seedHi: number,
  out: Int32Array,
): void {
  let p = off;
  const end = off + len;
  let hh: number;
  let hl: number;
  if (len >= 32) {
    add(seedHi, seedLo, 0x60ea27ee | 0, 0xadc0b5d6 | 0);
    let v1h = rh;
    let v1l = rl;
    add(seedHi, seedLo, P2H, P2L);
    let v2h = rh;
    let v2l = rl;
    let v3h = seedHi;
    let v3l = seedLo;
    // seed − P1 = seed + (~P1 + 1); the +1 carries into the high half only if P1's low half is 0.
    add(seedHi, seedLo, ~P1H, -P1L | 0);
    let v4h = rh;
    let v4l = rl;
    const limit = end - 32;
    do {
      round(v1h, v1l, read32(b, p + 4), read32(b, p));
      v1h = rh;
      v1l = rl;
      round(v2h, v2l, read32(b, p + 12), read32(b, p + 8));
      v2h = rh;
      v2l = rl;
      round(v3h, v3l, read32(b, p + 20), read32(b, p + 16));
      v3h = rh;
      v3l = rl;
      round(v4h, v4l, read32(b, p + 28), read32(b, p + 24));
      v4h = rh;
      v4l = rl;
      p += 32;
    } while (p <= limit);
    rotl(v1h, v1l, 1);
    hh = rh;
    hl = rl;
    rotl(v2h, v2l, 7);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    rotl(v3h, v3l, 12);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    rotl(v4h, v4l, 18);
    add(hh, hl, rh, rl);
    merge(rh, rl, v1h, v1l);
    merge(rh, rl, v2h, v2l);
    merge(rh, rl, v3h, v3l);
    merge(rh, rl, v4h, v4l);
    hh = rh;
    hl = rl;
  } else {
    add(seedHi, seedLo, P5H, P5L);
    hh = rh;
    hl = rl;
  }
  add(hh, hl, Math.floor(len / TWO_32) | 0, len | 0);
  hh = rh;
  hl = rl;
  while (p + 8 <= end) {
    round(0, 0, read32(b, p + 4), read32(b, p));
    // rotl(h ^ k, 27)·P1 + P4
    rotl(hh ^ rh, hl ^ rl, 27);
    mul(rh, rl, P1H, P1L);
    add(rh, rl, P4H, P4L);
    hh = rh;
    hl = rl;
    p += 8;
  }
  if (p + 4 <= end) {
    mul(0, read32(b, p), P1H, P1L);
    // rotl(h ^ (u32·P1), 23)·P2 + P3
    rotl(hh ^ rh, hl ^ rl, 23);
    mul(rh, rl, P2H, P2L);
    add(rh, rl, P3H, P3L);
    hh = rh;
    hl = rl;
    p += 4;
  }
  while (p < end) {
    mul(0, b[p]!, P5H, P5L);
    rotl(hh ^ rh, hl ^ rl, 11);
    mul(rh, rl, P1H, P1L);
    hh = rh;
    hl = rl;
    p++;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hl ^= hh >>> 1;
  mul(hh, hl, P2H, P2L);
  hl = rl ^ ((rl >>> 29) | (rh << 3));
  hh = rh ^ (rh >>> 29);
  mul(hh, hl, P3H, P3L);
  out[0] = rl ^ rh;
  out[1] = rh;
}
