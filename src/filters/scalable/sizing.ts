/**
 * The scalable filter's sizing: the default growth and tightening, and the shape of each layer
 * (Guava sizing for its capacity c0·s^i and rate P·(1 − r)·r^i, see `scalableLayerTarget` in
 * math.ts, widened until the layer's rate at capacity is within its share). See filter.ts.
 */

import { bloomSize, falsePositiveRate, MAX_BITS } from '../../math.js';

/** The default tightening ratio r. */
export const SCALABLE_DEFAULT_RATIO = 0.9;
/** The default growth factor s. */
export const SCALABLE_DEFAULT_GROWTH = 2;

/**
 * The shape of layer i: Guava sizing for (c_i, P_i), widened by 64-bit words until the rate at
 * capacity is at most P_i. Throws `RangeError` when the layer would pass {@link MAX_BITS}.
 */
export function scalableLayerSize(capacity: number, fpp: number): { bits: number; hashes: number } {
  const size = bloomSize(capacity, fpp);
  let bits = size.bits;
  while (bits <= MAX_BITS && falsePositiveRate(capacity, bits, size.hashes) > fpp) bits += 64;
  if (bits > MAX_BITS) {
    throw new RangeError(
      `a layer of ${capacity} keys at fpp ${fpp} needs ${bits} bits, more than the maximum ${MAX_BITS}`,
    );
  }
  return { bits, hashes: size.hashes };
}
