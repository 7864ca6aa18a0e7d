/**
 * What `filter.share()` returns: everything another thread needs to open the same filter on the
 * same memory with `X.fromShared(handle)`. A plain object holding a `SharedArrayBuffer`, so it
 * passes through `postMessage` (Node `worker_threads`, and browser Web Workers on a
 * cross-origin-isolated page) without copying the bits: both sides then read and write one
 * memory, with the atomic storages (`SharedBitArray`: `Atomics.or`; `SharedCounterArray`: a
 * compare-and-swap loop) making concurrent adds lossless. Where there is no shared memory (a
 * browser page that is not cross-origin isolated), `share()` and `fromShared()` throw a
 * `SharedMemoryUnavailableError` saying so.
 */

import { sharedMemory } from './shared-memory.js';

/**
 * The name of a filter type that can live on shared memory: a row of the codec table with an
 * `openShared` (`classic`, `blocked`, `split-block`, `counting`).
 */
export type SharedFilterType = string;

export interface SharedFilterHandle {
  /** Marks the object as a bloomkit handle. */
  readonly kind: 'bloomkit-shared';
  /** Which class opens it (`BloomFilter`, `BlockedBloomFilter`, ...). */
  readonly type: SharedFilterType;
  /** The class's explicit shape (what its constructor takes), without `shared`. */
  readonly shape: Readonly<Record<string, unknown>>;
  /** The memory holding the filter's bits (or packed counters)... */
  readonly buffer: SharedArrayBuffer;
  /** ...from this byte on. */
  readonly byteOffset: number;
}

/**
 * The handle of a filter whose storage `data` lives in a `SharedArrayBuffer`; a `TypeError`
 * naming the class when it lives in plain memory (such a filter cannot be shared: make it with
 * `{ shared: true }`).
 */
export function shareStorage(
  type: SharedFilterType,
  name: string,
  shape: object,
  data: Uint32Array | Uint8Array,
): SharedFilterHandle {
  if (!(data.buffer instanceof sharedMemory())) {
    throw new TypeError(
      `this ${name} keeps its bits in plain memory: create it with { shared: true } to share it`,
    );
  }
  const plain = { ...(shape as Record<string, unknown>) };
  delete plain.shared;
  return {
    kind: 'bloomkit-shared',
    type,
    shape: plain,
    buffer: data.buffer,
    byteOffset: data.byteOffset,
  };
}

/** The `length` elements of the handle's memory as `Ctor` (a `RangeError` if it is too small). */
export function sharedView<T extends Uint32Array | Uint8Array>(
  handle: SharedFilterHandle,
  Ctor: {
    new (buffer: SharedArrayBuffer, byteOffset: number, length: number): T;
    BYTES_PER_ELEMENT: number;
  },
  length: number,
): T {
  const offset = handle.byteOffset ?? 0;
  const need = offset + length * Ctor.BYTES_PER_ELEMENT;
  if (!Number.isInteger(offset) || offset < 0 || need > handle.buffer.byteLength) {
    throw new RangeError(
      `handle.buffer holds ${handle.buffer.byteLength} bytes, the filter's shape needs ${need}`,
    );
  }
  return new Ctor(handle.buffer, offset, length);
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
  if (!(h.buffer instanceof sharedMemory())) {
    throw new TypeError('handle.buffer must be a SharedArrayBuffer');
  }
  if (h.shape === null || typeof h.shape !== 'object') {
    throw new TypeError('handle.shape must be the filter shape object');
  }
  return h;
}
