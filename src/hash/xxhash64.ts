/**
 * XXH64 (Yann Collet, https://github.com/Cyan4973/xxHash, doc/xxhash_spec.md): the 64-bit hash
 * behind the blocked filter and Parquet's split-block filter (seed 0 over the value's PLAIN
 * encoding, as parquet-java, Arrow and DuckDB compute it).
 *
 * Two implementations give the same result: WebAssembly with native 64-bit multiplies
 * (wasm/xxh64.wat, a module of its own over the scratch memory of hash/scratch.ts, compiled on
 * first use), used wherever WebAssembly runs, and a JavaScript core on 32-bit halves (xxhash64-core.ts) for
 * hosts without it (a CSP that forbids wasm). Measured on 30-byte URL keys (Node 20, x64,
 * encoding included): 43 ns per key in WebAssembly, 216 ns in the JavaScript core, so
 * WebAssembly is the default. About 33 of those 43 ns are reading the key's characters
 * (`charCodeAt`), a floor every JavaScript hash of a string pays; the batch paths (hash/batch.ts)
 * avoid it by hashing packed bytes.
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
  ENDS_AT,
  HASH_AT,
  HASHES_AT,
  KEY_AT,
  OFFSETS_AT,
  SCRATCH_KEEP_BYTES,
  type Scratch,
  scratch,
  setScratchWasm,
  shrinkScratch,
} from './scratch.js';
import { lazyWasm } from './wasm-loader.js';
import { WASM_BASE64 as XXH64_WASM } from './xxh64-wasm.js';
import { xxh64Core } from './xxhash64-core.js';

/** The XXH64 module's exports (see wasm/xxh64.wat). */
export interface Xxh64Exports {
  /** XXH64 (seed 0) of the `len` bytes at `p`, into [0, 8). */
  xxh64(p: number, len: number): void;
  xxh64_batch(keys: number, offsets: number, ends: number, count: number, out: number): void;
}

/** The XXH64 module, compiled on its first instantiation. */
export const XXH64_MODULE = /* @__PURE__ */ lazyWasm<Xxh64Exports>(XXH64_WASM);

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
/** The XXH64 module over that scratch, or null: the JavaScript core runs. */
let xxh: Xxh64Exports | null = null;
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
    xxh = s.instance(XXH64_MODULE);
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

/**
 * Encodes `key` at `at` (4-byte aligned: ASCII strings are written four bytes per store), growing
 * the memory when needed; returns the length.
 */
function encodeAt(sc: Scratch, funnel: Funnel, key: Key, at: number): number {
  if (funnel === 'string' && typeof key === 'string') {
    const n =
      key.length >= ENCODER_MIN_LENGTH
        ? encodeLongString(key, at === KEY_AT ? sc.keyView : sc.bytes.subarray(at))
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
  if (xxh !== null) xxh.xxh64(p, len);
  else xxh64Core(sc.bytes, p, len, 0, 0, xxViews.hash);
}

/**
 * XXH64 (seed 0) of `key`'s funnel bytes (hash/keys.ts); the result is in `xxViews.hash` =
 * [lo, hi]. ASCII strings take a fast path that writes four bytes per store.
 */
export function xxh64Key(funnel: Funnel, key: Key): void {
  const sc = current();
  hashAt(sc, KEY_AT, encodeAt(sc, funnel, key, KEY_AT));
  if (sc.capacity > SCRATCH_KEEP_BYTES) {
    shrinkScratch();
    current();
  }
}

/** Eight bytes seen as a double and as a float (made on the first float hashed). */
let float: { f64: Float64Array; f32: Float32Array; bytes: Uint8Array } | null = null;

/**
 * XXH64 (seed 0) of `value` as an IEEE 754 float of `width` bytes, little-endian (Parquet PLAIN
 * FLOAT and DOUBLE); the result is in `xxViews.hash`.
 */
export function xxh64Float(value: number, width: 4 | 8): void {
  const sc = current();
  if (float === null) {
    const buffer = new ArrayBuffer(8);
    float = {
      f64: new Float64Array(buffer),
      f32: new Float32Array(buffer),
      bytes: new Uint8Array(buffer),
    };
  }
  const src = float.bytes;
  if (width === 8) float.f64[0] = value;
  else float.f32[0] = value;
  const bytes = sc.bytes;
  for (let i = 0; i < width; i++) bytes[KEY_AT + i] = src[LITTLE_ENDIAN ? i : width - 1 - i]!;
  hashAt(sc, KEY_AT, width);
}

/**
 * Hashes `count` keys (count ≤ {@link MAX_BATCH}) from `keys[start]` on in one WebAssembly call;
 * hash i is at `xxViews.many[2i]` (lo) and `[2i + 1]` (hi). The keys are encoded in the scratch
 * as a packed batch with ends (each key starting 4-byte aligned).
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
    // Each key starts 4-byte aligned, so strings take the per-key paths' fast encoders (four
    // ASCII bytes per store, `TextEncoder` for long ones); key i ends at ends[i].
    p = (p + 3) & ~3;
    sc.u32[(OFFSETS_AT >> 2) + i] = p - KEY_AT;
    p += encodeAt(sc, funnel, keys[start + i]!, p);
    sc = current();
    sc.u32[(ENDS_AT >> 2) + i] = p - KEY_AT;
  }
  xxh64Offsets(sc, KEY_AT, ENDS_AT, count);
}

/**
 * XXH64 (seed 0) of `count` packed keys at `keys` in the scratch: key i is [keys + offsets[i],
 * keys + ends[i]) (i32 arithmetic), the offsets at OFFSETS_AT and the ends at byte `ends`; the
 * hashes go to HASHES_AT as [lo, hi] pairs.
 */
export function xxh64Offsets(sc: Scratch, keys: number, ends: number, count: number): void {
  const ex = sc.instance(XXH64_MODULE);
  if (ex !== null) {
    ex.xxh64_batch(keys, OFFSETS_AT, ends, count, HASHES_AT);
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
  current();
  return xxh !== null;
}
