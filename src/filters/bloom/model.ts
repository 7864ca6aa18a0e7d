/**
 * The classic filter's size model (formats/size-model.ts), Guava's sizing:
 *
 *   (n, p)      m = ⌊−n·ln p / ln²2⌋ rounded up to 64, k = max(1, round(m/n·ln 2))   (bloomSize)
 *   (n, p, k)   the fewest 64-bit words with (1 − e^(−kn/m))^k ≤ p, from m = −k·n / ln(1 − p^(1/k))
 *   (n, m)      k = max(1, round(m/n·ln 2))
 *   (m, p)      the most keys n with (1 − e^(−kn/m))^k ≤ p, k chosen for each n as above
 *   (n, k)      m = k·n / ln 2;   (m, k): n = m·ln 2 / k   (the k that is optimal for them)
 *
 * m is always rounded up to whole 64-bit words, as Guava stores it. The counting filter has the
 * same cells with 4 bits each (counting/model.ts).
 */

import {
  grouped,
  type SizeInputs,
  type SizeModel,
  type SizePair,
} from '../../formats/size-model.js';
import {
  bloomSize,
  checkHashesFor,
  falsePositiveRate,
  largestInteger,
  MAX_HASHES,
  optimalNumOfHashFunctions,
} from '../../math.js';
import { BloomFilter } from './filter.js';

export type ClassicShape = {
  readonly kind: 'classic';
  readonly bits: number;
  readonly hashes: number;
};

const LN2 = Math.LN2;

function roundUp64(bits: number): number {
  return Math.max(64, Math.ceil(bits / 64) * 64);
}

/** The classic filter's cells for n keys at rate p with a fixed k. */
function cellsForFixedK(n: number, p: number, k: number): number {
  let cells = roundUp64(Math.ceil((-k * n) / Math.log1p(-(p ** (1 / k)))));
  while (falsePositiveRate(n, cells, k) > p) cells += 64;
  return cells;
}

/**
 * The classic (and counting) filter's cells, k and n for `pair`; `cells` is the memory given
 * as cells (bits, or 4-bit counters). A `RangeError` for a k above 255.
 */
export function bloomCells(
  pair: SizePair,
  input: SizeInputs,
  cells: number | undefined,
): { cells: number; k: number; n: number } {
  const { n, p, k } = input;
  let r: { cells: number; k: number; n: number };
  switch (pair) {
    case 'np': {
      if (k === undefined) {
        const size = bloomSize(n!, p!);
        r = { cells: size.bits, k: checkHashesFor(p!, size.hashes), n: n! };
      } else r = { cells: cellsForFixedK(n!, p!, k), k, n: n! };
      break;
    }
    case 'nm': {
      const m = roundUp64(cells!);
      r = { cells: m, k: k ?? optimalNumOfHashFunctions(n!, cells!), n: n! };
      break;
    }
    case 'mp': {
      const m = roundUp64(cells!);
      const kOf = (x: number): number => k ?? optimalNumOfHashFunctions(x, m);
      const ok = (x: number): boolean => falsePositiveRate(x, m, kOf(x)) <= p!;
      if (!ok(1)) throw new RangeError(`${m} cells cannot hold even one key at rate ${p}`);
      // Guava's n = m·ln²2 / −ln p, a first guess only: for p near 1 it passes 2^53 keys,
      // where (1 − e^(−kn/m))^k is long 1; the search then bisects down from there.
      const guess = Math.min(
        Number.MAX_SAFE_INTEGER,
        Math.max(1, Math.floor((m * LN2 * LN2) / -Math.log(p!))),
      );
      const keys = largestInteger(ok(guess) ? guess : 1, Math.max(2, guess), ok);
      r = { cells: m, k: kOf(keys), n: keys };
      break;
    }
    case 'nk':
      r = { cells: roundUp64(Math.ceil((k! * n!) / LN2)), k: k!, n: n! };
      break;
    case 'mk': {
      const m = roundUp64(cells!);
      r = { cells: m, k: k!, n: Math.max(1, Math.floor((m * LN2) / k!)) };
      break;
    }
  }
  if (r.k > MAX_HASHES) throw new RangeError(`k = ${r.k} is above the maximum of ${MAX_HASHES}`);
  return r;
}

export const classicModel: SizeModel<ClassicShape> = {
  solve(pair, input) {
    const cells = input.m === undefined ? undefined : Math.max(1, Math.floor(input.m));
    const r = bloomCells(pair, input, cells);
    return {
      shape: { kind: 'classic', bits: r.cells, hashes: r.k },
      n: r.n,
    };
  },
  bits: (shape) => shape.bits,
  rate: (shape, n) => falsePositiveRate(n, shape.bits, shape.hashes),
  cells: (shape) => shape.bits,
  hashes: (shape) => shape.hashes,
  maxKeys: () => Number.POSITIVE_INFINITY,
  describe: (shape) => [
    ['bits (m)', grouped(shape.bits)],
    ['hashes (k)', grouped(shape.hashes)],
  ],
  make: (shape) => new BloomFilter({ bits: shape.bits, hashes: shape.hashes }),
};
