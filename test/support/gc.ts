/**
 * Garbage collection on demand, for tests that measure memory or need garbage-collected state
 * released: `--expose-gc` set at run time (vitest's workers do not start with it) and V8's `gc`
 * taken from a fresh context.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');

/** A full collection. */
export const gc = runInNewContext('gc') as () => void;

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
