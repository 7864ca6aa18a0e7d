/**
 * The one scratch memory behind every hash in bloomkit: a WebAssembly memory that the hashing
 * modules import (wasm/murmur3.wat: MurmurHash3 x64 128 with Guava's MITZ_64 walk; wasm/xxh64.wat:
 * XXH64; each per key and over packed batches), so a process holds one key scratch rather than one
 * per hash, while a bundle that hashes with one of them never carries the other.
 *
 * Nothing is compiled or instantiated when bloomkit is imported: a module is compiled on its first
 * hash (so a bundle that never hashes can drop it, and importing costs nothing), then
 * instantiated over this memory ({@link Scratch.instance}) and once per classic filter kernel
 * (hash/hasher.ts). Each module is under 2 KiB, well under the 4 KiB that browsers allow to
 * compile synchronously on the main thread. Where WebAssembly is missing or forbidden (a CSP
 * without 'wasm-unsafe-eval'), the scratch is a buffer with the same layout and the JavaScript
 * cores compute the same values.
 *
 * Layout (bytes; wasm/murmur3.wat repeats it):
 *   [0, 16)          the last per-key hash (MurmurHash3 h1, h2; XXH64 in [0, 8))
 *   [64, 1088)       MITZ_64 probe word indexes; [1088, 2112) their masks
 *   [4096, 8196)     a batch chunk's key offsets (u32, up to {@link CHUNK_KEYS} + 1)
 *   [8448, 9472)     a chunk's per-key result bytes
 *   [9728, 13828)    a chunk's key ends, for packed keys with separators between them
 *   [14336, 30720)   a chunk's hashes (16 bytes per key for MurmurHash3, 8 for XXH64)
 *   [32768, ...)     key bytes: one key, or a chunk of packed keys (then any probe lists)
 */

import { newMemory, type WasmInstantiator, type WasmMemory } from './wasm-loader.js';

/** Where the last per-key hash is written. */
export const HASH_AT = 0;
/** Where `mitz64` writes probe word indexes; the masks follow at {@link PROBE_MASKS_AT}. */
export const PROBE_WORDS_AT = 64;
export const PROBE_MASKS_AT = 1088;
/** A chunk's key offsets. */
export const OFFSETS_AT = 4096;
/** A chunk's result bytes. */
export const RESULTS_AT = 8448;
/** A chunk's key ends (when `PackedKeys.ends` is given). */
export const ENDS_AT = 9728;
/** A chunk's hashes. */
export const HASHES_AT = 14336;
/** Key bytes. */
export const KEY_AT = 32768;
/** Most keys in one batch chunk (the offsets, results and hashes areas are sized for it). */
export const CHUNK_KEYS = 1024;
/**
 * Key bytes per chunk that the batch paths aim for: 64 KiB with the hashes and the probe state
 * stays in L2 while a chunk is hashed, touched and probed.
 */
export const CHUNK_BYTES = 65536;

/** The scratch memory and its views; the views are replaced when the memory grows. */
export class Scratch {
  /** The memory the hashing modules import, or null: a plain buffer for the JavaScript cores. */
  declare readonly memory: WasmMemory | null;
  declare buffer: ArrayBuffer;
  declare bytes: Uint8Array;
  /** The memory as int32 (for 4-byte stores and hashes as [lo, hi] pairs). */
  declare i32: Int32Array;
  /** The memory as uint32 (offsets). */
  declare u32: Uint32Array;
  /** The memory from KEY_AT on (where a single key is encoded). */
  declare keyView: Uint8Array;
  /** Byte length of the memory. */
  declare capacity: number;
  /** Changes on every growth, so that callers holding views can tell them stale. */
  generation = 0;
  /** The modules instantiated over this memory so far (null: that module cannot run here). */
  private readonly instances = new Map<WasmInstantiator<unknown>, unknown>();

  constructor(memory: WasmMemory | null) {
    this.memory = memory;
    this.view(memory === null ? new ArrayBuffer(2 * 65536) : memory.buffer);
  }

  /** Points the views at `buffer` (the memory, new or grown). */
  private view(buffer: ArrayBuffer): void {
    this.buffer = buffer;
    this.bytes = new Uint8Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.keyView = this.bytes.subarray(KEY_AT);
    this.capacity = buffer.byteLength;
    this.generation++;
  }

  /**
   * `module` instantiated over this memory (compiled and instantiated on the first call), or null
   * when it cannot run here: the caller then runs its JavaScript core over the same bytes.
   */
  instance<T>(module: WasmInstantiator<T>): T | null {
    let ex = this.instances.get(module) as T | null | undefined;
    if (ex === undefined) {
      ex = this.memory === null ? null : module(this.memory);
      this.instances.set(module, ex);
    }
    return ex;
  }

  /** Makes the memory hold at least `need` bytes, keeping the first `keep`. */
  grow(need: number, keep: number): void {
    if (need <= this.capacity) return;
    if (this.memory !== null) {
      this.memory.grow(Math.ceil((need - this.capacity) / 65536));
      this.view(this.memory.buffer);
    } else {
      const next = new ArrayBuffer(Math.max(need, this.capacity * 2));
      new Uint8Array(next).set(this.bytes.subarray(0, keep));
      this.view(next);
    }
  }
}

let current: Scratch | null = null;
let preferWasm = true;

/** The process-wide scratch, made on first use (no module is compiled before a hash needs it). */
export function scratch(): Scratch {
  if (current === null) current = new Scratch(preferWasm ? newMemory(2) : null);
  return current;
}

/** Test hook: hash with WebAssembly (true, where available) or the JavaScript cores (false). */
export function setScratchWasm(enabled: boolean): void {
  preferWasm = enabled;
  current = null;
}

/**
 * Scratch bytes kept between calls. One oversized key (50 M characters is 150 MB of worst-case
 * UTF-8) grows the scratch for its own call only; {@link shrinkScratch} then drops it.
 */
export const SCRATCH_KEEP_BYTES = 1 << 20;

/**
 * After a call that grew the scratch past {@link SCRATCH_KEEP_BYTES}: replaces it with a fresh
 * small one holding the same results area (everything below the key bytes), so the last hash and
 * probes stay readable. Callers re-read their views afterwards.
 */
export function shrinkScratch(): void {
  const s = current;
  if (s === null || s.capacity <= SCRATCH_KEEP_BYTES) return;
  const fresh = new Scratch(s.memory === null ? null : newMemory(2));
  fresh.bytes.set(s.bytes.subarray(0, KEY_AT));
  current = fresh;
}

/** Bytes the scratch memory holds now. */
export function scratchBytes(): number {
  return scratch().capacity;
}

/** Keys packed in one buffer (see `PackedKeys` in filters/filter.ts). */
export interface KeyBatch {
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
  readonly ends?: Uint32Array;
}

/**
 * Copies keys [start, stop) of `keys` into a memory laid out as the scratch (`u32` and `bytes`
 * view the same buffer): offsets at OFFSETS_AT, ends at ENDS_AT when the batch has them, bytes at
 * KEY_AT. Returns the byte offset of the ends array to pass to the batch kernels (OFFSETS_AT + 4
 * when each key ends where the next begins). The caller made sure the bytes fit.
 */
export function copyChunk(
  keys: KeyBatch,
  start: number,
  stop: number,
  bytes: Uint8Array,
  u32: Uint32Array,
): number {
  const offsets = keys.offsets;
  const first = offsets[start]!;
  u32.set(offsets.subarray(start, stop + 1), OFFSETS_AT >> 2);
  bytes.set(keys.bytes.subarray(first, offsets[stop]), KEY_AT);
  if (keys.ends === undefined) return OFFSETS_AT + 4;
  u32.set(keys.ends.subarray(start, stop), ENDS_AT >> 2);
  return ENDS_AT;
}

/**
 * How many keys from `start` (at most `max`, at least one if any remain before `end`) fit in
 * `room` bytes; 0 when key `start` alone is longer than `room`.
 */
export function chunkEnd(
  offsets: Uint32Array,
  start: number,
  end: number,
  max: number,
  room: number,
): number {
  let stop = Math.min(end, start + max);
  const limit = offsets[start]! + room;
  if (offsets[stop]! <= limit) return stop;
  // Binary search for the last key boundary within the room.
  let lo = start;
  while (lo < stop) {
    const mid = (lo + stop + 1) >>> 1;
    if (offsets[mid]! <= limit) lo = mid;
    else stop = mid - 1;
  }
  return lo;
}
