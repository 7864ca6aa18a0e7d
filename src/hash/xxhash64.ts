/**
 * XXH64 (Yann Collet, https://github.com/Cyan4973/xxHash, doc/xxhash_spec.md): the 64-bit hash
 * behind the blocked filter and Parquet's split-block filter (seed 0 over the value's PLAIN
 * encoding, as parquet-java, Arrow and DuckDB compute it).
 *
 * Two implementations give the same result: WebAssembly with native 64-bit multiplies (the
 * hashing module of hash/scratch.ts, shared with MurmurHash3 and compiled on first use), used
 * wherever WebAssembly runs, and a JavaScript core on 32-bit halves for hosts without it (a CSP
 * that forbids wasm). Measured on 30-byte URL keys (Node 20, x64, encoding included): 43 ns per
 * key in WebAssembly, 216 ns in the JavaScript core, so WebAssembly is the default. About 33 of
 * those 43 ns are reading the key's characters (`charCodeAt`), a floor every JavaScript hash of
 * a string pays; the batch paths (hash/batch.ts) avoid it by hashing packed bytes.
 *
 * Hot path: {@link xxh64Key} encodes a key with its funnel straight into the scratch memory and
 * leaves the hash in {@link xxViews}`.hash` = [low 32 bits, high 32 bits] (int32 each). Nothing is
 * allocated per key and no BigInt is involved. {@link xxhash64} is the allocating convenience
 * form (returns a `bigint`) for tests and tools.
 */

import { encodeKeyInto, type Funnel, type Key } from './keys.js';
import { LITTLE_ENDIAN } from './murmur3.js';
import { ENCODER_MIN_LENGTH, encodeLongString } from './pack.js';
import {
  HASH_AT,
  HASHES_AT,
  KEY_AT,
  OFFSETS_AT,
  SCRATCH_KEEP_BYTES,
  type Scratch,
  scratch,
  scratchUsesWasm,
  setScratchWasm,
  shrinkScratch,
} from './scratch.js';

/** Most keys {@link xxh64Many} hashes in one call. */
export const MAX_BATCH = 1020;

/** Views over the scratch memory, replaced when it grows: read them after each call. */
export interface XxViews {
  /** [low 32 bits, high 32 bits] of the last hash, as int32. */
  hash: Int32Array;
  /** After {@link xxh64Many}: [lo, hi] of key i at 2i, 2i + 1. */
  many: Int32Array;
}

const EMPTY = new Int32Array(0);

/** Live views; read the fields after each call (growing the memory replaces them). */
export const xxViews: XxViews = { hash: EMPTY, many: EMPTY };

let viewsOf: Scratch | null = null;
let viewsGeneration = -1;
/** The memory as int32 words, for writing four ASCII bytes at once (little-endian hosts only). */
let words: Int32Array | null = null;

/** The scratch, with {@link xxViews} pointing into its current memory. */
function current(): Scratch {
  const s = scratch();
  if (s !== viewsOf || s.generation !== viewsGeneration) {
    viewsOf = s;
    viewsGeneration = s.generation;
    xxViews.hash = new Int32Array(s.buffer, HASH_AT, 2);
    xxViews.many = new Int32Array(s.buffer, HASHES_AT, 2 * MAX_BATCH);
    words = LITTLE_ENDIAN ? s.i32 : null;
  }
  return s;
}

/**
 * The fast path of the 'string' funnel: writes `s` at `at` (a multiple of 4) four characters per
 * int32 store and returns its length, or −1 if `s` is not pure ASCII (then nothing is promised
 * about the bytes written, and the caller encodes it again with `encodeKeyInto`). For ASCII the
 * UTF-8 bytes are the character codes, so the result is the same as `encodeKeyInto`'s.
 */
function encodeAscii(s: string, at: number, capacity: number): number {
  const w = words;
  const n = s.length;
  if (w === null || at + n + 16 > capacity) return -1;
  let q = at >> 2;
  let seen = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    const d = s.charCodeAt(i + 3);
    seen |= a | b | c | d;
    w[q++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  if (i < n) {
    let last = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = s.charCodeAt(i);
      seen |= c;
      last |= c << shift;
    }
    w[q] = last;
  }
  return seen < 0x80 ? n : -1;
}

/** Encodes `key` at `at`, growing the memory when needed; returns the length. */
function encodeAt(sc: Scratch, funnel: Funnel, key: Key, at: number, aligned: boolean): number {
  if (aligned && funnel === 'string' && typeof key === 'string') {
    const n =
      key.length >= ENCODER_MIN_LENGTH && at === KEY_AT
        ? encodeLongString(key, sc.keyView)
        : encodeAscii(key, at, sc.capacity);
    if (n >= 0) return n;
  }
  let len = encodeKeyInto(funnel, key, sc.bytes, at);
  if (len < 0) {
    sc.grow(at - len + 32, at);
    current();
    len = encodeKeyInto(funnel, key, sc.bytes, at);
  }
  return len;
}

/** Hashes the `len` bytes at `p` in the memory (seed 0) into `xxViews.hash`. */
function hashAt(sc: Scratch, p: number, len: number): void {
  if (sc.wasm !== null) sc.wasm.xxh64(p, len, 0, 0);
  else xxh64Core(sc.bytes, p, len, 0, 0, xxViews.hash);
}

/**
 * XXH64 (seed 0) of `key`'s funnel bytes (hash/keys.ts); the result is in `xxViews.hash` =
 * [lo, hi]. ASCII strings take a fast path that writes four bytes per store.
 */
export function xxh64Key(funnel: Funnel, key: Key): void {
  const sc = current();
  hashAt(sc, KEY_AT, encodeAt(sc, funnel, key, KEY_AT, true));
  if (sc.capacity > SCRATCH_KEEP_BYTES) {
    shrinkScratch();
    current();
  }
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const f32 = new Float32Array(1);
const f32Bytes = new Uint8Array(f32.buffer);

/**
 * XXH64 (seed 0) of `value` as an IEEE 754 float of `width` bytes, little-endian (Parquet PLAIN
 * FLOAT and DOUBLE); the result is in `xxViews.hash`.
 */
export function xxh64Float(value: number, width: 4 | 8): void {
  const sc = current();
  const src = width === 8 ? f64Bytes : f32Bytes;
  if (width === 8) f64[0] = value;
  else f32[0] = value;
  const bytes = sc.bytes;
  for (let i = 0; i < width; i++) bytes[KEY_AT + i] = src[LITTLE_ENDIAN ? i : width - 1 - i]!;
  hashAt(sc, KEY_AT, width);
}

/**
 * Hashes `count` keys (count ≤ {@link MAX_BATCH}) from `keys[start]` on in one WebAssembly call;
 * hash i is at `xxViews.many[2i]` (lo) and `[2i + 1]` (hi). The keys are encoded back to back
 * in the scratch, as a packed batch.
 */
export function xxh64Many(
  funnel: Funnel,
  keys: ArrayLike<Key>,
  start: number,
  count: number,
): void {
  let sc = current();
  let p = KEY_AT;
  for (let i = 0; i < count; i++) {
    sc.u32[(OFFSETS_AT >> 2) + i] = p - KEY_AT;
    p += encodeAt(sc, funnel, keys[start + i]!, p, false);
    sc = current();
  }
  sc.u32[(OFFSETS_AT >> 2) + count] = p - KEY_AT;
  xxh64Offsets(sc, KEY_AT, OFFSETS_AT + 4, count);
}

/**
 * XXH64 (seed 0) of `count` packed keys at `keys` in the scratch: key i is [keys + offsets[i],
 * keys + ends[i]) (i32 arithmetic), the offsets at OFFSETS_AT and the ends at byte `ends`; the
 * hashes go to HASHES_AT as [lo, hi] pairs.
 */
export function xxh64Offsets(sc: Scratch, keys: number, ends: number, count: number): void {
  if (sc.wasm !== null) {
    sc.wasm.xxh64_batch(keys, OFFSETS_AT, ends, count, HASHES_AT);
    return;
  }
  const out = new Int32Array(2);
  const many = sc.i32;
  const u32 = sc.u32;
  for (let i = 0; i < count; i++) {
    const a = u32[(OFFSETS_AT >> 2) + i]!;
    const b = u32[(ends >> 2) + i]!;
    xxh64Core(sc.bytes, (keys + a) | 0, b - a, 0, 0, out);
    many[(HASHES_AT >> 2) + 2 * i] = out[0]!;
    many[(HASHES_AT >> 2) + 2 * i + 1] = out[1]!;
  }
}

/**
 * XXH64 of `data` with a 64-bit `seed` (default 0), as an unsigned `bigint`. Allocates; for
 * tests and tools, not for hot paths.
 */
export function xxhash64(data: Uint8Array, seed: bigint | number = 0): bigint {
  if (!(data instanceof Uint8Array)) throw new TypeError('data must be a Uint8Array');
  const s = BigInt.asUintN(64, BigInt(seed));
  const out = new Int32Array(2);
  xxh64Core(data, 0, data.length, Number(s & 0xffffffffn) | 0, Number(s >> 32n) | 0, out);
  return (BigInt(out[1]! >>> 0) << 32n) | BigInt(out[0]! >>> 0);
}

/** Test hook: hash with WebAssembly (true, where available) or the JavaScript cores (false). */
export function useWasmXxh64(enabled: boolean): void {
  setScratchWasm(enabled);
}

/** True when XXH64 runs in WebAssembly. */
export function xxh64UsesWasm(): boolean {
  return scratchUsesWasm();
}

// ------------------------------------------------------------------------------------------------
// The JavaScript core: 64-bit arithmetic on (hi, lo) int32 halves. Helpers return through rh/rl.

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

let rh = 0;
let rl = 0;

/** (ah:al) · (bh:bl) mod 2^64 into rh:rl. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  rl = (mid << 16) | (p00 & 0xffff);
  rh =
    (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(ah, bl) + Math.imul(al, bh)) |
    0;
}

/** (ah:al) + (bh:bl) mod 2^64 into rh:rl. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = (al >>> 0) + (bl >>> 0);
  rl = lo | 0;
  rh = (ah + bh + (lo >= TWO_32 ? 1 : 0)) | 0;
}

/** rotl((h:l), r) for 0 < r < 32 into rh:rl. */
function rotl(h: number, l: number, r: number): void {
  rh = (h << r) | (l >>> (32 - r));
  rl = (l << r) | (h >>> (32 - r));
}

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
