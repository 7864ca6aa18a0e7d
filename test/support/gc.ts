/**
 * Garbage collection on demand, for tests that measure memory or need garbage-collected state
 * released: `--expose-gc` set at run time (vitest's workers do not start with it) and V8's `gc`
 * taken from a fresh context.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');

/** V8's `gc`: a full collection, or a young-generation one with `{ type: 'minor' }`. */
const v8gc = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;

/** A full collection. */
export const gc = (): void => v8gc();

/**
 * A full collection whose freed ArrayBuffer memory is already counted in `process.memoryUsage()`.
 * The full collection finds dead ArrayBuffers, but V8 frees their memory afterwards, on a
 * background thread; a young-generation collection first waits for that to finish. Measured on
 * the streamed loads of test/io.test.ts: the same live bytes as two full collections (within
 * 0.5 MiB), where one full collection alone still counts up to 32 MiB of spent stream chunks;
 * the young-generation collection costs about a millisecond, a full one 15 to 100 ms in a test
 * worker's heap.
 */
export function settledGc(): void {
  v8gc();
  v8gc({ type: 'minor' });
}

/**
 * Collects, then lets the finalizers that the collection queued run (they run as tasks of their
 * own, after it). The WebAssembly filter kernels are counted alive until their filter is
 * collected and at most 256 live at once (src/hash/kernel-memory.ts): test files share a worker
 * process, so a test that needs a kernel calls this first, and a file that left hundreds of
 * filters for the collector (or filled the cap on purpose) does not take the kernels of the files
 * after it.
 */
export async function collectKernels(): Promise<void> {
  gc();
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
