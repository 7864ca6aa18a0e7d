/**
 * Where shared memory comes from, and what a caller is told when there is none.
 *
 * Node always has `SharedArrayBuffer`, but a browser defines it only on a cross-origin-isolated
 * page (served with `Cross-Origin-Opener-Policy: same-origin` and
 * `Cross-Origin-Embedder-Policy: require-corp`) and in that page's workers (whose scripts need the
 * second header too, or Chromium does not start them). Elsewhere the global is missing, and every
 * way into shared storage (`{ shared: true }`, `share()`, `fromShared()`, `new SharedBitArray`,
 * `new SharedCounterArray`) throws {@link SharedMemoryUnavailableError} saying so, instead of the
 * bare `ReferenceError: SharedArrayBuffer is not defined`.
 */

/** `SharedArrayBuffer` is missing here: in a browser, the page is not cross-origin isolated. */
export class SharedMemoryUnavailableError extends Error {
  override readonly name = 'SharedMemoryUnavailableError';
}

/**
 * The `SharedArrayBuffer` constructor, or {@link SharedMemoryUnavailableError} where there is none.
 * Every use of the global goes through this, so that no `ReferenceError` escapes.
 */
export function sharedMemory(): typeof SharedArrayBuffer {
  if (!(globalThis as { SharedArrayBuffer?: unknown }).SharedArrayBuffer) {
    throw new SharedMemoryUnavailableError(
      'SharedArrayBuffer needs a cross-origin-isolated page: serve it with ' +
        'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp',
    );
  }
  return SharedArrayBuffer;
}
