/**
 * What `filter.share()` returns: everything another thread needs to open the same filter on the
 * same memory with `X.fromShared(handle)`. A plain object holding a `SharedArrayBuffer`, so it
 * passes through `postMessage` (Node `worker_threads`, and browser Web Workers on a
 * cross-origin-isolated page) without copying the bits: both sides then read and write one
 * memory, with the atomic storages (`SharedBitArray`: `Atomics.or`; `SharedCounterArray`: a
 * compare-and-swap loop) making concurrent adds lossless.
 */

/** The filter types that can live on shared memory. */
export type SharedFilterType = 'bloom' | 'blocked' | 'split-block' | 'counting';

export interface SharedFilterHandle {
  /** Marks the object as a bloomkit handle. */
  readonly kind: 'bloomkit-shared';
  /** Which class opens it (`BloomFilter`, `BlockedBloomFilter`, ...). */
  readonly type: SharedFilterType;
  /** The class's explicit shape (what its constructor takes), without `shared`. */
  readonly shape: Readonly<Record<string, unknown>>;
  /** The filter's bits (or packed counters). */
  readonly buffer: SharedArrayBuffer;
}

/**
 * Throws a `TypeError` unless `handle` is a {@link SharedFilterHandle} of `type`; returns it.
 * `fromShared` of every class starts with this check.
 */
export function checkSharedHandle(handle: unknown, type: SharedFilterType): SharedFilterHandle {
  const h = handle as SharedFilterHandle | null;
  if (h === null || typeof h !== 'object' || h.kind !== 'bloomkit-shared') {
    throw new TypeError(`handle must be what share() returns, got ${String(handle)}`);
  }
  if (h.type !== type) {
    throw new TypeError(`handle is of a '${String(h.type)}' filter, not a '${type}' filter`);
  }
  if (!(h.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError('handle.buffer must be a SharedArrayBuffer');
  }
  if (h.shape === null || typeof h.shape !== 'object') {
    throw new TypeError('handle.shape must be the filter shape object');
  }
  return h;
}
