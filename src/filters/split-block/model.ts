/**
 * The split-block (Parquet) filter's size model (formats/size-model.ts): z blocks of 256 bits,
 * always 8 probes (one per 32-bit word), rate Σ_j Pois(j; λ)·(1 − (1 − 1/32)^j)^8 at λ = n/z
 * (`splitBlockFalsePositiveRate`). (n, p) sizes as `splitBlockSize`; k is fixed, so a k given
 * is noted and not used.
 */

import { grouped, type SizeModel } from '../../formats/size-model.js';
import { largestInteger } from '../../math.js';
import { SplitBlockBloomFilter } from './filter.js';
import { SPLIT_BLOCK_BITS, splitBlockFalsePositiveRate, splitBlockSize } from './sizing.js';

export type SplitBlockModelShape = {
  readonly kind: 'split-block';
  readonly blocks: number;
};

/** Probes per key of a split-block filter: one bit in each of a block's eight words. */
const PROBES = 8;

export const splitBlockModel: SizeModel<SplitBlockModelShape> = {
  solve(pair, input) {
    const { n, p, m } = input;
    const notes = input.k === undefined ? [] : [`k is fixed at ${PROBES}`];
    const shape = (blocks: number): SplitBlockModelShape => ({ kind: 'split-block', blocks });
    const blocksOf = (bits: number): number => Math.max(1, Math.ceil(bits / SPLIT_BLOCK_BITS));
    switch (pair) {
      case 'np':
        return { shape: shape(splitBlockSize(n!, p!).blocks), n: n!, notes };
      case 'nm':
        return { shape: shape(blocksOf(m!)), n: n!, notes };
      case 'mp': {
        const blocks = blocksOf(m!);
        const ok = (x: number): boolean => splitBlockFalsePositiveRate(x / blocks) <= p!;
        if (!ok(1)) throw new RangeError(`${blocks} blocks cannot hold even one key at rate ${p}`);
        return { shape: shape(blocks), n: largestInteger(1, blocks * 8, ok), notes };
      }
      default:
        throw new RangeError('the split-block filter needs a rate p or a size m along with n');
    }
  },
  bits: (shape) => shape.blocks * SPLIT_BLOCK_BITS,
  rate: (shape, n) => splitBlockFalsePositiveRate(n / shape.blocks),
  cells: (shape) => shape.blocks * SPLIT_BLOCK_BITS,
  hashes: () => PROBES,
  maxKeys: () => Number.POSITIVE_INFINITY,
  describe: (shape) => [
    ['blocks of 256 bits', grouped(shape.blocks)],
    ['bits per key (fixed)', String(PROBES)],
  ],
  make: (shape) => new SplitBlockBloomFilter({ blocks: shape.blocks }),
};
