/**
 * Memories for filter kernels: a filter whose bits live inside a WebAssembly memory of their own,
 * after the scratch layout (hash/scratch.ts) and a key area, so that hashing and probing a chunk
 * of keys runs in WebAssembly with no per-key JavaScript (the classic filter's kernel in
 * hash/hasher.ts, the blocked filter's in filters/blocked/kernel.ts). A kernel's memory is sized
 * once and never grows, so views of its bits stay valid for the filter's lifetime.
 */
import { CHUNK_KEYS, chunkEnd, copyChunk, KEY_AT, type KeyBatch } from './scratch.js';
import { stageInPlace } from './utf16-stage.js';
import { newMemory, type WasmMemory } from './wasm-loader.js';

/**
 * Where a kernel's bits start: after the scratch layout and a key area of 96 KiB, which holds
 * the largest single key a kernel hashes and each chunk of a batch.
 */
export const KERNEL_BASE = 131072;
/** Key bytes a kernel chunk may hold (16 spare bytes stay free for the hashes' tail loads). */
export const KERNEL_KEY_ROOM = KERNEL_BASE - KEY_AT - 16;
/** Largest bit array placed in a kernel (1 GiB); larger filters use the general path. */
const KERNEL_MAX_BYTES = 2 ** 30;
/**
 * Smallest bit array placed in a kernel (4 KiB). Each kernel costs two 64 KiB pages plus the
 * virtual address space an engine reserves per wasm memory (about 8 GiB in V8, so some ten
 * thousand memories exhaust a 47-bit address space); small filters, which sit in cache anyway,
 * stay on the general path.
 */
const KERNEL_MIN_BYTES = 4096;
/** At most this many kernels are alive at once; later filters use the general path. */
const KERNEL_MAX_LIVE = 256;
let live = 0;
const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<null>(() => {
        live--;
      })
    : null;

/**
 * A memory for a kernel holding `bytes` of bits at {@link KERNEL_BASE}, or null when the bits are
 * outside [4 KiB, 1 GiB], {@link KERNEL_MAX_LIVE} kernels are alive, or WebAssembly memories
 * cannot be had (the caller then uses the general path, which gives the same answers).
 */
export function kernelMemory(bytes: number): WasmMemory | null {
  if (bytes > KERNEL_MAX_BYTES || bytes < KERNEL_MIN_BYTES) return null;
  if (registry === null || live >= KERNEL_MAX_LIVE) return null;
  const memory = newMemory(Math.ceil((KERNEL_BASE + bytes) / 65536));
  // String runs are transcoded straight into the key area (hash/utf16-stage.ts).
  if (memory !== null) stageInPlace(memory);
  return memory;
}

/** Counts `kernel` as alive until it is garbage-collected. */
export function registerKernel(kernel: object): void {
  live++;
  registry!.register(kernel, null);
}

/** Where {@link loadKernelChunk} put the chunk's key ends (see `copyChunk`). */
export let kernelEnds = 0;
/** The `keys` address of that chunk for a batch hash call: key i starts at it + offsets[i]. */
export let kernelKeys = 0;

/**
 * Copies the packed keys of `keys` from `start` on (as many whole keys as fit a kernel's key
 * area, at most {@link CHUNK_KEYS}, none past `end`) into a kernel's memory (`bytes` and `u32`
 * view it from 0), for its hash's batch function: its `keys` argument is {@link kernelKeys}
 * (key i of the chunk at KEY_AT - offsets[start] + offsets[start + i]) and its ends
 * {@link kernelEnds}. Returns the index
 * after the last key copied; `start` itself when key `start` alone is longer than the area (the
 * caller takes the per-key path for it).
 */
export function loadKernelChunk(
  keys: KeyBatch,
  start: number,
  end: number,
  bytes: Uint8Array,
  u32: Uint32Array,
): number {
  const stop = chunkEnd(keys.offsets, start, end, CHUNK_KEYS, KERNEL_KEY_ROOM);
  if (stop !== start) {
    kernelEnds = copyChunk(keys, start, stop, bytes, u32);
    kernelKeys = (KEY_AT - keys.offsets[start]!) | 0;
  }
  return stop;
}
