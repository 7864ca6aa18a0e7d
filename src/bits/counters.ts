/**
 * Packed 4-bit saturating counters, two per byte: the storage of the counting Bloom filter.
 *
 * Counter i lives in byte i >>> 1: the low nibble (bits 0–3) for an even i, the high nibble
 * (bits 4–7) for an odd i. So n counters take ⌈n/2⌉ bytes, half a byte each, and the bytes are
 * the same on every platform (no multi-byte words, no endianness).
 *
 * A counter counts from 0 to 15. At 15 it saturates: `increment` leaves it at 15 and `decrement`
 * leaves it at 15 too, until `clear`. A saturated counter no longer knows how many increments it
 * has seen (15 or a thousand), so lowering it could bring it to 0 while keys that set it are still
 * present: a false negative. Keeping it at 15 costs at most a stale positive. With Guava sizing
 * (k ≈ (m/n)·ln 2), the chance that any counter ever reaches 16 is about m·1.37e−15 (Fan, Cao,
 * Almeida and Broder, "Summary Cache", IEEE/ACM ToN 2000), so saturation needs duplicate keys or a
 * filter loaded far past its capacity.
 *
 * Indexes are exact up to {@link MAX_COUNTERS} (2^32 counters, 2 GiB of bytes).
 */

import { checkPositiveInteger } from '../errors.js';

/** The most counters a {@link CounterArray} holds: 2^32 (2 GiB). */
export const MAX_COUNTERS = 2 ** 32;

/** The value at which a counter saturates. */
export const COUNTER_MAX = 15;

export class CounterArray {
  /** Number of counters. */
  declare readonly size: number;
  /** The packed nibbles: counter i is `(data[i >>> 1] >>> 4 * (i & 1)) & 15`. */
  declare readonly data: Uint8Array;

  /** `size` zeroed counters, or a view over existing packed `data` (not copied). */
  constructor(size: number, data?: Uint8Array) {
    this.size = checkPositiveInteger('counters', size, MAX_COUNTERS);
    const bytes = Math.ceil(size / 2);
    if (data === undefined) {
      this.data = new Uint8Array(bytes);
    } else {
      if (!(data instanceof Uint8Array) || data.length !== bytes) {
        throw new RangeError(`data must hold ${bytes} bytes for ${size} counters`);
      }
      this.data = data;
    }
  }

  /** The value of counter `i` (0..15). */
  get(i: number): number {
    const b = this.data[i >>> 1]!;
    return (i & 1) === 0 ? b & 15 : b >>> 4;
  }

  /** Adds one to counter `i` unless it is saturated; returns the value it had before. */
  increment(i: number): number {
    const j = i >>> 1;
    const b = this.data[j]!;
    const shift = (i & 1) << 2;
    const v = (b >>> shift) & 15;
    if (v < COUNTER_MAX) this.data[j] = b + (1 << shift);
    return v;
  }

  /**
   * Subtracts one from counter `i` unless it is 0 or saturated (15 stays 15: see the module
   * comment); returns the value it had before.
   */
  decrement(i: number): number {
    const j = i >>> 1;
    const b = this.data[j]!;
    const shift = (i & 1) << 2;
    const v = (b >>> shift) & 15;
    if (v > 0 && v < COUNTER_MAX) this.data[j] = b - (1 << shift);
    return v;
  }

  /** Number of counters above 0. */
  nonZeroCount(): number {
    let n = 0;
    const d = this.data;
    for (let j = 0; j < d.length; j++) {
      const b = d[j]!;
      if ((b & 15) !== 0) n++;
      if (b >>> 4 !== 0) n++;
    }
    return n;
  }

  /** Number of saturated counters (at 15). */
  saturatedCount(): number {
    let n = 0;
    const d = this.data;
    for (let j = 0; j < d.length; j++) {
      const b = d[j]!;
      if ((b & 15) === COUNTER_MAX) n++;
      if (b >>> 4 === COUNTER_MAX) n++;
    }
    return n;
  }

  /** Sets every counter to 0. */
  clear(): void {
    this.data.fill(0);
  }

  /** An independent copy. */
  clone(): CounterArray {
    return new CounterArray(this.size, this.data.slice());
  }
}
