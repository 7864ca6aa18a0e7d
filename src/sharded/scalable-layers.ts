/**
 * The layers of `StoredScalableBloomFilter` (stored-scalable.ts) and so of
 * `RedisScalableBloomFilter`: the sizing of layer i and its text form
 * in the metadata (`layer:i` = `capacity,fpp,shards,bits,hashes,share`).
 *
 * Layer i holds c_i = c0·s^i keys at rate P_i = P·(1 − r)·r^i. Its k and total bits come from
 * Guava's formulas for (c_i, P_i); it is cut into S shards of at most the shard limit, each taking
 * at most share = ⌈c_i / S⌉ keys, and each shard's b bits are widened by 64 until
 * (1 − e^(−k·share/b))^k ≤ P_i (Guava's rounding of m and k can leave the rate a little above P_i,
 * and shards hold up to share keys). If a shard cannot reach the rate within the limit, S grows.
 */

import { FormatError, show } from '../errors.js';
import { bloomSize, falsePositiveRate, MAX_BITS, scalableLayerTarget } from '../math.js';

/** One layer's parameters and shape. */
export interface RedisLayerSpec {
  /** Keys the layer holds when full: c0·s^i. */
  readonly capacity: number;
  /** The layer's rate: P0·r^i. */
  readonly fpp: number;
  readonly shards: number;
  /** Bits per shard. */
  readonly bits: number;
  readonly hashes: number;
  /** Keys each shard takes at most: ⌈capacity / shards⌉. */
  readonly share: number;
}

/** A layer's spec with the number of keys it took (from `info()`). */
export interface RedisLayerInfo extends RedisLayerSpec {
  readonly count: number;
  /** Whether the layer is sealed (a newer layer exists or is being made). */
  readonly sealed: boolean;
}

/**
 * The spec of layer `i` (see the class comment). Throws `RangeError` when it cannot be made
 * (capacity past 2^53, more than 2^36 bits, more than 255 hashes, or shards too small).
 */
export function scalableLayerSpec(
  i: number,
  capacity: number,
  fpp: number,
  growth: number,
  ratio: number,
  maxShardBits: number,
): RedisLayerSpec {
  const { capacity: c, fpp: p } = scalableLayerTarget(i, capacity, fpp, growth, ratio);
  if (!Number.isSafeInteger(c)) {
    throw new RangeError(`layer ${i} would hold ${c} keys, past 2^53`);
  }
  const size = bloomSize(c, p);
  const k = size.hashes;
  if (k > 255) throw new RangeError(`layer ${i} at fpp ${p} needs ${k} hashes, more than 255`);
  for (let shards = Math.ceil(size.bits / maxShardBits); ; shards++) {
    const share = Math.ceil(c / shards);
    let bits = 64 * Math.ceil(size.bits / (64 * shards));
    while (bits <= maxShardBits && falsePositiveRate(share, bits, k) > p) bits += 64;
    if (bits <= maxShardBits) {
      if (shards * bits > MAX_BITS) {
        throw new RangeError(`layer ${i} needs ${shards * bits} bits, more than ${MAX_BITS}`);
      }
      return { capacity: c, fpp: p, shards, bits, hashes: k, share };
    }
    if (share === 1) {
      throw new RangeError(
        `layer ${i} at fpp ${p} cannot meet its rate in shards of ${maxShardBits} bits`,
      );
    }
  }
}

export function specText(s: RedisLayerSpec): string {
  return `${s.capacity},${s.fpp},${s.shards},${s.bits},${s.hashes},${s.share}`;
}

export function parseSpec(who: string, i: number, text: string | undefined): RedisLayerSpec {
  const parts = (text ?? '').split(',').map(Number);
  const [capacity, fpp, shards, bits, hashes, share] = parts;
  const ints = [capacity, shards, bits, hashes, share];
  if (
    parts.length !== 6 ||
    ints.some((v) => !Number.isSafeInteger(v) || v! < 1) ||
    !(fpp! > 0 && fpp! < 1) ||
    bits! % 64 !== 0 ||
    hashes! > 255
  ) {
    throw new FormatError(`${who} has a bad layer:${i}: ${show(text)}`);
  }
  return {
    capacity: capacity!,
    fpp: fpp!,
    shards: shards!,
    bits: bits!,
    hashes: hashes!,
    share: share!,
  };
}
