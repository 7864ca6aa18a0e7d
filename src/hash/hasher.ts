/**
 * The hot path shared by every MurmurHash3-based filter: encode a key, hash it, derive probes.
 *
 * Keys are encoded straight into the shared scratch memory (hash/scratch.ts), where the MurmurHash3
 * WebAssembly module (wasm/murmur3.wat, compiled on first use) computes MurmurHash3 x64 128 with
 * native 64-bit multiplies and, for Guava's MURMUR128_MITZ_64, the k probe positions with two
 * reductions per key. Without WebAssembly (a
 * CSP that forbids it), the same layout lives in a plain buffer and the JavaScript core computes
 * the same values. Nothing is allocated per key.
 *
 * Results (read them right after the call; the views are replaced when the scratch grows):
 *   `views.hash`   [h1 lo, h1 hi, h2 lo, h2 hi] of the last key hashed
 *   `views.words`  the 32-bit word index of each MITZ_64 probe (k ≤ 255)
 *   `views.masks`  the bit mask within that word
 */

import {
  KERNEL_BASE,
  kernelEnds,
  kernelKeys,
  kernelMemory,
  loadKernelChunk,
  registerKernel,
} from './kernel-memory.js';
import { encodeKeyInto, type Funnel, type Key } from './keys.js';
import { LITTLE_ENDIAN } from './murmur3.js';
import { murmur3Core } from './murmur3-core.js';
import { WASM_BASE64 as MURMUR3_WASM } from './murmur3-wasm.js';
import { ENCODER_MIN_LENGTH, encodeLongString, packStringsInto, stringTarget } from './pack.js';
import {
  CHUNK_KEYS,
  HASH_AT,
  HASHES_AT,
  KEY_AT,
  type KeyBatch,
  OFFSETS_AT,
  PROBE_MASKS_AT,
  PROBE_WORDS_AT,
  RESULTS_AT,
  SCRATCH_KEEP_BYTES,
  type Scratch,
  scratch,
  scratchBytes,
  setScratchWasm,
  shrinkScratch,
} from './scratch.js';
import { type Modulus, mitz64Into } from './strategies.js';
import { lazyWasm } from './wasm-loader.js';

export type { KeyBatch };

/** The MurmurHash3 module's exports (see wasm/murmur3.wat for each function's contract). */
export interface MurmurExports {
  /** MurmurHash3 (seed 0) of the `len` key bytes at KEY_AT into the hash view. */
  murmur3(len: number): void;
  murmur3_batch(keys: number, offsets: number, ends: number, count: number, out: number): void;
  /** Mode 0: the key's MITZ_64 probes to the scratch; 1: test them at `base`; 2: set them. */
  probe(
    len: number,
    k: number,
    m: number,
    p63: number,
    inv: number,
    mode: number,
    base: number,
  ): number;
  /**
   * {@link probe}'s walks over `count` hashes at `hashes` (mode 0: probes to `out`); mode 3 tests
   * as mode 1 does, a group of keys' probe words loaded before any is tested.
   */
  walk_batch(
    hashes: number,
    count: number,
    k: number,
    m: number,
    p63: number,
    inv: number,
    base: number,
    mode: number,
    out: number,
  ): number;
}

/** The MurmurHash3 module, compiled on its first instantiation. */
export const MURMUR3_MODULE = /* @__PURE__ */ lazyWasm<MurmurExports>(MURMUR3_WASM);

/** Views over the shared memory, replaced when it grows. */
export interface HasherViews {
  /** [h1 lo, h1 hi, h2 lo, h2 hi] of the last key hashed. */
  hash: Int32Array;
  /** Word index of each probe of the last `mitz64Probes` call. */
  words: Int32Array;
  /** Bit mask of each probe of the last `mitz64Probes` call. */
  masks: Int32Array;
}

const EMPTY = new Int32Array(0);

/** Live views; read the fields after each call (growing the memory replaces them). */
export const views: HasherViews = { hash: EMPTY, words: EMPTY, masks: EMPTY };

/** The scratch and growth generation the views were made for. */
let viewsOf: Scratch | null = null;
let viewsGeneration = -1;
let words32: Int32Array | null = null;
/** The MurmurHash3 module over that scratch, or null: the JavaScript core runs. */
let murmur: MurmurExports | null = null;

/** The scratch, with {@link views} pointing into its current memory. */
function current(): Scratch {
  const s = scratch();
  if (s !== viewsOf || s.generation !== viewsGeneration) {
    viewsOf = s;
    viewsGeneration = s.generation;
    views.hash = new Int32Array(s.buffer, HASH_AT, 4);
    views.words = new Int32Array(s.buffer, PROBE_WORDS_AT, 256);
    views.masks = new Int32Array(s.buffer, PROBE_MASKS_AT, 256);
    murmur = s.instance(MURMUR3_MODULE);
    words32 = murmur === null && LITTLE_ENDIAN ? s.i32 : null;
  }
  return s;
}

/**
 * Encodes `key` into `area` at KEY_AT and returns the length, or a negative number when it does
 * not fit (see `encodeKeyInto`). ASCII strings take a fast path that copies char codes straight in,
 * four per 32-bit store into `words` (a view of `area`'s memory from byte 0; KEY_AT is a multiple
 * of 4) on little-endian machines, then one by one.
 */
function encodeIn(
  funnel: Funnel,
  key: Key,
  area: Uint8Array,
  keyView: Uint8Array,
  words: Int32Array | Uint32Array,
): number {
  if (typeof key === 'string' && funnel === 'string') {
    const n = key.length;
    if (n >= ENCODER_MIN_LENGTH) {
      const len = encodeLongString(key, keyView);
      if (len >= 0) return len;
    } else if (n + KEY_AT + 16 <= area.length) {
      let i = 0;
      if (LITTLE_ENDIAN) {
        for (let w = KEY_AT >> 2; i + 4 <= n; i += 4) {
          const a = key.charCodeAt(i);
          const b = key.charCodeAt(i + 1);
          const c = key.charCodeAt(i + 2);
          const d = key.charCodeAt(i + 3);
          if ((a | b | c | d) >= 0x80) break;
          words[w++] = a | (b << 8) | (c << 16) | (d << 24);
        }
      }
      for (; i < n; i++) {
        const c = key.charCodeAt(i);
        if (c >= 0x80) break;
        area[KEY_AT + i] = c;
      }
      if (i === n) return n;
    }
  }
  return encodeKeyInto(funnel, key, area, KEY_AT);
}

/** Encodes `key` at KEY_AT in the scratch, growing it when needed; returns the length. */
function encode(s: Scratch, funnel: Funnel, key: Key): number {
  let len = encodeIn(funnel, key, s.bytes, s.keyView, s.i32);
  if (len < 0) {
    s.grow(KEY_AT - len + 32, KEY_AT);
    current();
    len = encodeKeyInto(funnel, key, s.bytes, KEY_AT);
  }
  return len;
}

/** Hashes `key` with MurmurHash3 x64 128 (seed 0); the result is in `views.hash`. */
export function hashKey(funnel: Funnel, key: Key): void {
  const s = current();
  const len = encode(s, funnel, key);
  if (murmur !== null) murmur.murmur3(len);
  else murmur3Core(s.bytes, words32, KEY_AT, len, views.hash, 0);
  if (s.capacity > SCRATCH_KEEP_BYTES) afterOversized();
}

/** Drops the memory an oversized key grew (hash/scratch.ts) and points the views at the new one. */
function afterOversized(): void {
  shrinkScratch();
  current();
}

/** Copies the MurmurHash3 of `key` into `out` = [h1 lo, h1 hi, h2 lo, h2 hi]. */
export function hashKeyInto(funnel: Funnel, key: Key, out: Int32Array): void {
  hashKey(funnel, key);
  out.set(views.hash);
}

/**
 * Hashes `key` and writes its k Guava MURMUR128_MITZ_64 probes into `views.words` and
 * `views.masks` for a bit array of `mod.m` bits: probe i is bit `masks[i]` of 32-bit word
 * `words[i]`.
 */
export function mitz64Probes(funnel: Funnel, key: Key, k: number, mod: Modulus): void {
  const s = current();
  const len = encode(s, funnel, key);
  if (murmur !== null) murmur.probe(len, k, mod.m, mod.p63, mod.inv, 0, 0);
  else {
    murmur3Core(s.bytes, words32, KEY_AT, len, views.hash, 0);
    mitz64Into(views.hash, 0, k, mod, views.words, 0, views.masks, 0);
  }
  if (s.capacity > SCRATCH_KEEP_BYTES) afterOversized();
}

export { scratchBytes };

/** Test hook: hash with WebAssembly (true, where available) or the JavaScript cores (false). */
export function useWasm(enabled: boolean): void {
  setScratchWasm(enabled);
}

/** True when keys are hashed by WebAssembly. */
export function usingWasm(): boolean {
  current();
  return murmur !== null;
}

/**
 * Bit arrays larger than this (bytes) are tested in batches by groups of keys, every probed word
 * loaded before any is tested (wasm/murmur3.wat, `walk_batch` mode 3), so that the cache misses
 * of a group overlap; smaller ones walk key by key and stop at the first clear bit (mode 1), which
 * is faster while most probes hit the caches. Measured on URL keys, k = 7, CPU time, the grouped
 * test against the walk, five runs: 1.0 to 1.6x faster for present keys (the walk took 97 to
 * 148 ns per key from run to run, the grouped test 86 to 102) and 1.0 to 1.1x for absent ones on
 * a 12 MB array; 0.89x and 0.74x on a 7.2 MB one, 0.85x and 1.02x on 3.6 MB, 0.89x and 0.93x on
 * 1.2 MB. Where between 7.2 and 12 MB the two cross depends on the machine's caches.
 */
export const GROUPED_TEST_BYTES = 8 << 20;

/**
 * A classic filter's bits living inside a wasm instance of their own, so that `has` and `add`
 * (hash, probe walk and bit tests) run in one call with no per-probe JavaScript. The instance's
 * memory (hash/kernel-memory.ts, which also bounds how many kernels live at once) is sized once and
 * never grows, so `data` stays valid for the filter's lifetime.
 */
export class BloomKernel {
  /** The filter's 64-bit words as little-endian u32 pairs, inside the kernel's memory. */
  declare readonly data: Uint32Array;
  /** `walk_batch`'s test mode for this array's size (see {@link GROUPED_TEST_BYTES}). */
  declare private readonly testMode: number;
  declare private readonly ex: MurmurExports;
  declare private readonly keyArea: Uint8Array;
  declare private readonly keyView: Uint8Array;
  declare private readonly words: Uint32Array;
  declare private readonly hashArea: Int32Array;
  /** A chunk's key offsets, where {@link strings} packs them. */
  declare private readonly offsets: Uint32Array;

  private constructor(ex: MurmurExports, buffer: ArrayBuffer, bitSize: number) {
    this.ex = ex;
    this.keyArea = stringTarget(buffer, 0, KERNEL_BASE - 16);
    this.keyView = this.keyArea.subarray(KEY_AT);
    this.words = new Uint32Array(buffer, 0, KERNEL_BASE / 4);
    this.hashArea = new Int32Array(buffer, HASHES_AT, 4 * CHUNK_KEYS);
    this.offsets = new Uint32Array(buffer, OFFSETS_AT, CHUNK_KEYS + 1);
    this.data = new Uint32Array(buffer, KERNEL_BASE, bitSize / 32);
    this.testMode = bitSize / 8 > GROUPED_TEST_BYTES ? 3 : 1;
  }

  /**
   * A kernel for `bitSize` bits, or null where WebAssembly is unavailable or `kernelMemory` gives
   * none (the array is outside [4 KiB, 1 GiB], or too many kernels are alive): the caller then
   * uses the general path, which gives the same answers.
   */
  static create(bitSize: number): BloomKernel | null {
    if (!usingWasm()) return null;
    const memory = kernelMemory(bitSize / 8);
    const ex = memory === null ? null : MURMUR3_MODULE(memory);
    if (ex === null) return null;
    const kernel = new BloomKernel(ex, memory!.buffer, bitSize);
    registerKernel(kernel);
    return kernel;
  }

  /** 1 if all MITZ_64 bits of `key` are set, 0 if not, -1 if the key is too long for the kernel. */
  has(funnel: Funnel, key: Key, k: number, mod: Modulus): number {
    const len = encodeIn(funnel, key, this.keyArea, this.keyView, this.words);
    if (len < 0) return -1;
    return this.ex.probe(len, k, mod.m, mod.p63, mod.inv, 1, KERNEL_BASE);
  }

  /** Sets the MITZ_64 bits of `key`; returns how many were clear, or -1 if the key is too long. */
  add(funnel: Funnel, key: Key, k: number, mod: Modulus): number {
    const len = encodeIn(funnel, key, this.keyArea, this.keyView, this.words);
    if (len < 0) return -1;
    return this.ex.probe(len, k, mod.m, mod.p63, mod.inv, 2, KERNEL_BASE);
  }

  /**
   * One chunk of a batch: copies the packed keys from `start` on (as many whole keys as fit the
   * kernel's key area, at most {@link CHUNK_KEYS}, none past `end`) into the kernel, hashes them
   * all, then walks their probes: tests them (`add` false) or sets them (`add` true). Key i's
   * answer goes to `out[i]`: 1/0 for a test, the number of bits it set for an add (so nonzero
   * means new). Returns the index after the last key done; `start` itself when key `start` is
   * longer than the key area (the caller takes the per-key path for it).
   */
  batch(
    keys: KeyBatch,
    start: number,
    end: number,
    k: number,
    mod: Modulus,
    add: boolean,
    out: Uint8Array,
  ): number {
    const stop = loadKernelChunk(keys, start, end, this.keyArea, this.words);
    if (stop === start) return start;
    this.ex.murmur3_batch(kernelKeys, OFFSETS_AT, kernelEnds, stop - start, HASHES_AT);
    this.probe(stop - start, k, mod, add, out, start);
    return stop;
  }

  /**
   * {@link batch} over JavaScript strings ('string' funnel bytes, see hash/pack.ts): packs
   * `keys[start, end)` (as many as fit the key area, at most {@link CHUNK_KEYS}) straight into
   * the kernel's memory, hashes them and walks their probes; key i's answer to `out[i]`. Returns
   * the index after the last key done; `start` itself when key `start` is not a string or is
   * longer than the key area (the caller takes the per-key path for it).
   */
  strings(
    keys: ArrayLike<unknown>,
    start: number,
    end: number,
    k: number,
    mod: Modulus,
    add: boolean,
    out: Uint8Array,
  ): number {
    const count = packStringsInto(keys, start, end, this.keyArea, this.offsets, KEY_AT);
    if (count === 0) return start;
    this.ex.murmur3_batch(0, OFFSETS_AT, OFFSETS_AT + 4, count, HASHES_AT);
    this.probe(count, k, mod, add, out, start);
    return start + count;
  }

  /** Walks the `count` hashes at HASHES_AT (see {@link batch}); answers to `out`, returns their sum. */
  private probe(
    count: number,
    k: number,
    mod: Modulus,
    add: boolean,
    out: Uint8Array,
    outAt: number,
  ): number {
    const sum = this.ex.walk_batch(
      HASHES_AT,
      count,
      k,
      mod.m,
      mod.p63,
      mod.inv,
      KERNEL_BASE,
      add ? 2 : this.testMode,
      RESULTS_AT,
    );
    out.set(this.keyArea.subarray(RESULTS_AT, RESULTS_AT + count), outAt);
    return sum;
  }

  /**
   * {@link batch} over hashes already computed, so that a filter testing the same keys in several
   * bit arrays (the scalable filter's layers) hashes each key once: `count` (at most
   * {@link CHUNK_KEYS}) MurmurHash3 rows [h1 lo, h1 hi, h2 lo, h2 hi] of `h` from row `at` are
   * copied into the kernel and walked. Key j's answer goes to `out[j]` (1/0 for a test, the bits
   * it set for an add); returns their sum.
   */
  hashes(
    h: Int32Array,
    at: number,
    count: number,
    k: number,
    mod: Modulus,
    add: boolean,
    out: Uint8Array,
  ): number {
    this.hashArea.set(h.subarray(4 * at, 4 * (at + count)));
    return this.probe(count, k, mod, add, out, 0);
  }
}
