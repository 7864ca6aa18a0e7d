/**
 * The blocked filter's size model (formats/size-model.ts): z blocks of 512 bits, k probes per
 * key in one block, rate p(λ, k) = Σ_j Pois(j; λ)·(1 − (1 − 1/512)^(kj))^k at λ = n/z keys per
 * block (`blockedFalsePositiveRate`). (n, p) sizes as `blockedSize` (with headroom 0.97); with a
 * k given, the fewest blocks that reach p; (n, m) and (m, p) take the best k for the load.
 */

import { grouped, type SizeModel } from '../../formats/size-model.js';
import { largestInteger, smallestInteger } from '../../math.js';
import { BlockedBloomFilter } from './filter.js';
import {
  BLOCK_BITS,
  bestProbes,
  blockedFalsePositiveRate,
  blockedSize,
  MAX_PROBES,
} from './sizing.js';

export type BlockedShape = {
  readonly kind: 'blocked';
  readonly blocks: number;
  readonly hashes: number;
};

export const blockedModel: SizeModel<BlockedShape> = {
  solve(pair, input) {
    const { n, p, m, k } = input;
    if (k !== undefined && k > MAX_PROBES) {
      throw new RangeError(`the blocked filter takes 1 to ${MAX_PROBES} probes, got k = ${k}`);
    }
    const kAt = (lambda: number): number => k ?? bestProbes(lambda).k;
    const shape = (blocks: number, hashes: number): BlockedShape => ({
      kind: 'blocked',
      blocks,
      hashes,
    });
    switch (pair) {
      case 'np': {
        if (k === undefined) {
          const size = blockedSize(n!, p!);
          return { shape: shape(size.blocks, size.hashes), n: n! };
        }
        const blocks = smallestInteger(
          (z) => blockedFalsePositiveRate(n! / z, k) <= p!,
          `rate ${p} with k = ${k}`,
        );
        return { shape: shape(blocks, k), n: n! };
      }
      case 'nm': {
        const blocks = Math.max(1, Math.ceil(m! / BLOCK_BITS));
        return { shape: shape(blocks, kAt(n! / blocks)), n: n! };
      }
      case 'mp': {
        const blocks = Math.max(1, Math.ceil(m! / BLOCK_BITS));
        const ok = (x: number): boolean =>
          blockedFalsePositiveRate(x / blocks, kAt(x / blocks)) <= p!;
        if (!ok(1)) throw new RangeError(`${blocks} blocks cannot hold even one key at rate ${p}`);
        const keys = largestInteger(1, blocks * 8, ok);
        return { shape: shape(blocks, kAt(keys / blocks)), n: keys };
      }
      default:
        throw new RangeError('the blocked filter needs a rate p or a size m along with n');
    }
  },
  bits: (shape) => shape.blocks * BLOCK_BITS,
  rate: (shape, n) => blockedFalsePositiveRate(n / shape.blocks, shape.hashes),
  cells: (shape) => shape.blocks * BLOCK_BITS,
  hashes: (shape) => shape.hashes,
  maxKeys: () => Number.POSITIVE_INFINITY,
  describe: (shape) => [
    ['blocks of 512 bits', grouped(shape.blocks)],
    ['probes per key (k)', grouped(shape.hashes)],
  ],
  make: (shape) => new BlockedBloomFilter({ blocks: shape.blocks, hashes: shape.hashes }),
};
