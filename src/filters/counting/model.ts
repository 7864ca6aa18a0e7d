/**
 * The counting filter's size model: the classic filter's (bloom/model.ts) with a 4-bit counter
 * where the classic filter has a bit, so m bits of memory hold m/4 counters and the rate is the
 * classic filter's (1 − e^(−kn/m))^k over the counters.
 */

import { grouped, type SizeModel } from '../../formats/size-model.js';
import { falsePositiveRate } from '../../math.js';
import { bloomCells } from '../bloom/model.js';
import { CountingBloomFilter } from './filter.js';

export type CountingShape = {
  readonly kind: 'counting';
  readonly counters: number;
  readonly hashes: number;
};

/** Bits per counter. */
const COUNTER_BITS = 4;

export const countingModel: SizeModel<CountingShape> = {
  solve(pair, input) {
    const cells =
      input.m === undefined ? undefined : Math.max(1, Math.floor(input.m / COUNTER_BITS));
    const r = bloomCells(pair, input, cells);
    return {
      shape: { kind: 'counting', counters: r.cells, hashes: r.k },
      n: r.n,
    };
  },
  bits: (shape) => shape.counters * COUNTER_BITS,
  rate: (shape, n) => falsePositiveRate(n, shape.counters, shape.hashes),
  cells: (shape) => shape.counters,
  hashes: (shape) => shape.hashes,
  maxKeys: () => Number.POSITIVE_INFINITY,
  describe: (shape) => [
    ['4-bit counters (m)', grouped(shape.counters)],
    ['hashes (k)', grouped(shape.hashes)],
  ],
  make: (shape) => new CountingBloomFilter({ counters: shape.counters, hashes: shape.hashes }),
};
