/**
 * Packed 4-bit counters in a `SharedArrayBuffer`, shared by worker threads: the storage of a
 * counting filter that several threads add to and remove from at once.
 *
 * The layout is {@link CounterArray}'s (two counters per byte, low nibble first), so the bytes
 * serialize the same way. Each change is a compare-and-swap loop on the counter's byte
 * (`Atomics.compareExchange`): read the byte, compute the new nibble, and write it only if the
 * byte is still what was read, else retry with the fresh value. So:
 * - no increment or decrement is ever lost, also when two threads change the two counters that
 *   share a byte (a plain read-modify-write of the byte would drop one of them);
 * - a counter saturates at 15 and then stays there (increment and decrement both leave it), as in
 *   the single-threaded array, and never goes below 0: the check and the write are one atomic step.
 * The loop is lock-free: a retry happens only because another thread's write to the same byte
 * succeeded. Reads (`get`, the counts) are plain loads: a snapshot that may miss changes racing it.
 *
 * Send `counters.data.buffer` (a `SharedArrayBuffer`) to a worker and wrap it there with
 * `new SharedCounterArray(size, new Uint8Array(buffer))`.
 */

import { COUNTER_MAX, CounterArray } from './counters.js';
import { sharedMemory } from './shared-memory.js';

export class SharedCounterArray extends CounterArray {
  /**
   * `size` zeroed counters in a new `SharedArrayBuffer`, or a view over shared `data`; a
   * `SharedMemoryUnavailableError` where there is none (a page that is not cross-origin isolated).
   */
  constructor(size: number, data?: Uint8Array) {
    if (data !== undefined && !(data.buffer instanceof sharedMemory())) {
      throw new TypeError('data must be a view over a SharedArrayBuffer');
    }
    super(size, data ?? new Uint8Array(new (sharedMemory())(Math.ceil(size / 2))));
  }

  /** Adds one to counter `i` unless it is saturated, atomically; returns the value it had before. */
  override increment(i: number): number {
    const d = this.data;
    const j = i >>> 1;
    const shift = (i & 1) << 2;
    for (;;) {
      const b = Atomics.load(d, j);
      const v = (b >>> shift) & 15;
      if (v >= COUNTER_MAX) return v;
      if (Atomics.compareExchange(d, j, b, b + (1 << shift)) === b) return v;
    }
  }

  /**
   * Subtracts one from counter `i` unless it is 0 or saturated, atomically; returns the value it
   * had before.
   */
  override decrement(i: number): number {
    const d = this.data;
    const j = i >>> 1;
    const shift = (i & 1) << 2;
    for (;;) {
      const b = Atomics.load(d, j);
      const v = (b >>> shift) & 15;
      if (v === 0 || v >= COUNTER_MAX) return v;
      if (Atomics.compareExchange(d, j, b, b - (1 << shift)) === b) return v;
    }
  }

  /** Sets every counter to 0 (each byte with an atomic store). */
  override clear(): void {
    const d = this.data;
    for (let j = 0; j < d.length; j++) Atomics.store(d, j, 0);
  }

  /** An independent copy, in a new `SharedArrayBuffer`. */
  override clone(): SharedCounterArray {
    const copy = new SharedCounterArray(this.size);
    copy.data.set(this.data);
    return copy;
  }
}
