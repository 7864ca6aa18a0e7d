/**
 * The hot path shared by every MurmurHash3-based filter: encode a key, hash it, derive probes.
 *
 * Where WebAssembly runs (every current browser and Node.js), keys are encoded straight into the
 * memory of a tiny wasm module (wasm/murmur3.wat, under 1 KiB) that computes MurmurHash3 x64 128
 * with native 64-bit multiplies and, for Guava's MURMUR128_MITZ_64, the k probe positions with two
 * 64-bit divisions per key. Without WebAssembly (a CSP that forbids it), the same layout lives in
 * a plain buffer and the JavaScript core computes the same values. Nothing is allocated per key.
 *
 * Memory layout (bytes), the same in both modes:
 *   [0, 16)       h1, h2 (little-endian u64 each), also readable as `hash` = [h1 lo, h1 hi, h2 lo, h2 hi]
 *   [64, 1088)    `probes.words`: the 32-bit word index of each MITZ_64 probe (k ≤ 255)
 *   [1088, 2112)  `probes.masks`: the bit mask within that word
 *   [2112, ...)   the encoded key
 */

import { encodeKeyInto, type Funnel, type Key } from './keys.js';
import { LITTLE_ENDIAN } from './murmur3.js';
import { murmur3Core } from './murmur3-core.js';
import { WASM_BASE64 } from './murmur3-wasm.js';
import { Mitz64Walk, type Modulus } from './strategies.js';
import { compileWasm } from './wasm-loader.js';

const WORDS = 64;
const MASKS = 1088;
const KEY = 2112;
const INITIAL_BYTES = 65536;

interface WasmExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  murmur3: (len: number, seed: number) => void;
  mitz64: (len: number, k: number, m: number, p63: number, inv: number) => void;
  bloom_has: (len: number, k: number, m: number, p63: number, inv: number, base: number) => number;
  bloom_add: (len: number, k: number, m: number, p63: number, inv: number, base: number) => number;
}

/** Views over the shared memory, replaced when it grows. */
export interface HasherViews {
  /** [h1 lo, h1 hi, h2 lo, h2 hi] of the last key hashed. */
  hash: Int32Array;
  /** Word index of each probe of the last `mitz64Probes` call. */
  words: Int32Array;
  /** Bit mask of each probe of the last `mitz64Probes` call. */
  masks: Int32Array;
}

const MODULE = compileWasm<WasmExports>(WASM_BASE64);

function instantiate(): WasmExports | null {
  return MODULE === null ? null : MODULE.instantiate();
}

let wasm: WasmExports | null = instantiate();
let buffer: ArrayBuffer = wasm === null ? new ArrayBuffer(INITIAL_BYTES) : wasm.memory.buffer;
let bytes = new Uint8Array(buffer);
let words32: Int32Array | null = wasm === null && LITTLE_ENDIAN ? new Int32Array(buffer) : null;

/** Live views; read the fields after each call (growing the memory replaces them). */
export const views: HasherViews = {
  hash: new Int32Array(buffer, 0, 4),
  words: new Int32Array(buffer, WORDS, 256),
  masks: new Int32Array(buffer, MASKS, 256),
};

function remap(): void {
  bytes = new Uint8Array(buffer);
  words32 = wasm === null && LITTLE_ENDIAN ? new Int32Array(buffer) : null;
  views.hash = new Int32Array(buffer, 0, 4);
  views.words = new Int32Array(buffer, WORDS, 256);
  views.masks = new Int32Array(buffer, MASKS, 256);
}

/**
 * Encodes `key` into `area` at KEY and returns the length, or a negative number when it does not
 * fit (see `encodeKeyInto`). ASCII strings take a fast path that copies char codes straight in.
 */
function encodeIn(funnel: Funnel, key: Key, area: Uint8Array): number {
  if (typeof key === 'string' && funnel === 'string') {
    const n = key.length;
    if (n + KEY + 16 <= area.length) {
      let i = 0;
      for (; i < n; i++) {
        const c = key.charCodeAt(i);
        if (c >= 0x80) break;
        area[KEY + i] = c;
      }
      if (i === n) return n;
    }
  }
  return encodeKeyInto(funnel, key, area, KEY);
}

/** Encodes `key` at KEY in the shared scratch memory, growing it when needed; returns the length. */
function encode(funnel: Funnel, key: Key): number {
  let len = encodeIn(funnel, key, bytes);
  if (len < 0) {
    const need = KEY - len + 32;
    if (wasm !== null) {
      wasm.memory.grow(Math.ceil((need - buffer.byteLength) / 65536));
      buffer = wasm.memory.buffer;
    } else {
      const next = new ArrayBuffer(Math.max(need, buffer.byteLength * 2));
      new Uint8Array(next).set(bytes.subarray(0, KEY));
      buffer = next;
    }
    remap();
    len = encodeKeyInto(funnel, key, bytes, KEY);
  }
  return len;
}

/**
 * Scratch memory kept between calls. A longer key grows the scratch for its own call, and
 * {@link shrinkScratch} then hands the memory back (a wasm memory cannot shrink, so a fresh
 * instance replaces it), so one huge key does not pin its size for the life of the process.
 */
const KEPT_SCRATCH_BYTES = 1 << 20;

/** After an oversized key: a scratch of the initial size again, keeping the results at [0, KEY). */
function shrinkScratch(): void {
  const results = bytes.slice(0, KEY);
  if (wasm !== null) {
    wasm = instantiate();
    buffer = wasm === null ? new ArrayBuffer(INITIAL_BYTES) : wasm.memory.buffer;
  } else {
    buffer = new ArrayBuffer(INITIAL_BYTES);
  }
  remap();
  bytes.set(results);
}

/** Test hook: bytes of scratch memory held now. */
export function scratchBytes(): number {
  return buffer.byteLength;
}

/** Hashes `key` with MurmurHash3 x64 128 (seed 0); the result is in `views.hash`. */
export function hashKey(funnel: Funnel, key: Key): void {
  const len = encode(funnel, key);
  if (wasm !== null) wasm.murmur3(len, 0);
  else murmur3Core(bytes, words32, KEY, len, views.hash, 0);
  if (buffer.byteLength > KEPT_SCRATCH_BYTES) shrinkScratch();
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
  const len = encode(funnel, key);
  if (wasm !== null) {
    wasm.mitz64(len, k, mod.m, mod.p63, mod.inv);
  } else {
    murmur3Core(bytes, words32, KEY, len, views.hash, 0);
    mitz64Fallback(views.hash, k, mod, views.words, views.masks);
  }
  if (buffer.byteLength > KEPT_SCRATCH_BYTES) shrinkScratch();
}

const WALK = new Mitz64Walk();

/** The JavaScript form of the wasm `mitz64` probe walk. */
function mitz64Fallback(
  h: Int32Array,
  k: number,
  mod: Modulus,
  words: Int32Array,
  masks: Int32Array,
): void {
  WALK.start(h, mod);
  for (let i = 0; i < k; i++) {
    const idx = WALK.next();
    words[i] = (idx / 32) | 0;
    masks[i] = 1 << (idx & 31);
  }
}

/** Test hook: use the JavaScript core (false) or WebAssembly (true, where available). */
export function useWasm(enabled: boolean): void {
  wasm = enabled ? instantiate() : null;
  buffer = wasm === null ? new ArrayBuffer(INITIAL_BYTES) : wasm.memory.buffer;
  remap();
}

/** True when keys are hashed by WebAssembly. */
export function usingWasm(): boolean {
  return wasm !== null;
}

/** Where a kernel's bit array starts: after the scratch area and the largest key it encodes. */
const KERNEL_BASE = 65536;
/** Largest bit array placed in a kernel (1 GiB); larger filters use the general path. */
const KERNEL_MAX_BYTES = 2 ** 30;
/**
 * Smallest bit array placed in a kernel (4 KiB). Each kernel costs a 64 KiB page plus the
 * virtual address space an engine reserves per wasm memory (about 8 GiB in V8, so some ten
 * thousand memories exhaust a 47-bit address space); small filters, which sit in cache anyway,
 * stay on the general path.
 */
const KERNEL_MIN_BYTES = 4096;
/** At most this many kernels are alive at once; later filters use the general path. */
const KERNEL_MAX_LIVE = 256;
let liveKernels = 0;
const kernelRegistry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<null>(() => {
        liveKernels--;
      })
    : null;

/**
 * A classic filter's bits living inside a wasm instance of their own, so that `has` and `add`
 * (hash, probe walk and bit tests) run in one call with no per-probe JavaScript. The instance's
 * memory is sized once and never grows, so `data` stays valid for the filter's lifetime.
 */
export class BloomKernel {
  /** The filter's 64-bit words as little-endian u32 pairs, inside the kernel's memory. */
  readonly data: Uint32Array;
  private readonly ex: WasmExports;
  private readonly keyArea: Uint8Array;

  private constructor(ex: WasmExports, bitSize: number) {
    this.ex = ex;
    this.keyArea = new Uint8Array(ex.memory.buffer, 0, KERNEL_BASE);
    this.data = new Uint32Array(ex.memory.buffer, KERNEL_BASE, bitSize / 32);
  }

  /**
   * A kernel for `bitSize` bits, or null where WebAssembly is unavailable, the array is outside
   * [4 KiB, 1 GiB], or {@link KERNEL_MAX_LIVE} kernels are alive (the caller then uses the general
   * path, which gives the same answers).
   */
  static create(bitSize: number): BloomKernel | null {
    const bytes = bitSize / 8;
    if (wasm === null || bytes > KERNEL_MAX_BYTES || bytes < KERNEL_MIN_BYTES) return null;
    if (kernelRegistry === null || liveKernels >= KERNEL_MAX_LIVE) return null;
    const ex = instantiate();
    if (ex === null) return null;
    const pages = Math.ceil((KERNEL_BASE + bitSize / 8) / 65536);
    const have = ex.memory.buffer.byteLength / 65536;
    try {
      if (pages > have) ex.memory.grow(pages - have);
    } catch {
      return null;
    }
    const kernel = new BloomKernel(ex, bitSize);
    liveKernels++;
    kernelRegistry.register(kernel, null);
    return kernel;
  }

  /** 1 if all MITZ_64 bits of `key` are set, 0 if not, -1 if the key is too long for the kernel. */
  has(funnel: Funnel, key: Key, k: number, mod: Modulus): number {
    const len = encodeIn(funnel, key, this.keyArea);
    if (len < 0) return -1;
    return this.ex.bloom_has(len, k, mod.m, mod.p63, mod.inv, KERNEL_BASE);
  }

  /** Sets the MITZ_64 bits of `key`; returns how many were clear, or -1 if the key is too long. */
  add(funnel: Funnel, key: Key, k: number, mod: Modulus): number {
    const len = encodeIn(funnel, key, this.keyArea);
    if (len < 0) return -1;
    return this.ex.bloom_add(len, k, mod.m, mod.p63, mod.inv, KERNEL_BASE);
  }
}
