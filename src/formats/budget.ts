/**
 * Sizing both ways, for every type that is sized from (capacity, fpp): how many bytes a filter
 * for (capacity, fpp) takes, and, from a memory budget, the most keys it holds at a rate
 * (`{ bytes, fpp }` → capacity) or the lowest rate it reaches for a count (`{ bytes, capacity }`
 * → fpp). Each type's own sizing decides (Guava's for the classic and counting filters, the
 * Poisson block models for the blocked and split-block filters, the fingerprint width and safe
 * load for the cuckoo filter), so a filter created with the answer fits the budget exactly.
 *
 * Each type's size model (its row of the codec table) decides the forward sizing. Both inverses
 * search it, since it only grows with capacity and with 1/fpp: capacity with the one integer
 * solver (`largestInteger`), fpp by bisection over log(fpp) to 1e-9 relative.
 */

import { checkOptions, checkPositiveInteger, checkProbability, mustBe } from '../errors.js';
import { largestInteger } from '../math.js';
import { typeNamed, typesWith } from './registry.js';

/**
 * A type sized from (capacity, fpp) with a fixed memory: a row of the codec table with both a
 * `create` and a size `model` (`classic`, `blocked`, `split-block`, `counting`, `cuckoo`).
 */
export type SizedType = string;

/** The bytes function of a sized type, from its size model. */
function costOf(type: unknown): (capacity: number, fpp: number) => number {
  const sized = typesWith('create').filter((name) => typesWith('model').includes(name));
  let row: ReturnType<typeof typeNamed<'model'>> | undefined;
  try {
    row = typeNamed(type, 'model');
  } catch {
    row = undefined;
  }
  if (row?.create === undefined) throw mustBe('type', `one of ${sized.join(', ')}`, type);
  const model = row.model;
  return (n, p) => {
    const shape = model.solve('np', { n, p }).shape;
    return model.bytes?.(shape) ?? Math.ceil(model.bits(shape) / 8);
  };
}

/** Bytes a `type` filter sized for (capacity, fpp) holds its bits in. */
export function filterBytes(type: SizedType, capacity: number, fpp: number): number {
  return costOf(type)(capacity, fpp);
}

/** A size in both directions: what fits, and what it costs. */
export interface BudgetSize {
  readonly capacity: number;
  readonly fpp: number;
  /** Bytes the filter for (capacity, fpp) takes: at most the budget. */
  readonly bytes: number;
}

/** Would a filter of this shape fit, or is the shape impossible (a RangeError from sizing)? */
function fits(
  cost: (n: number, p: number) => number,
  n: number,
  p: number,
  budget: number,
): boolean {
  try {
    return cost(n, p) <= budget;
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/**
 * From a memory budget: `{ bytes, fpp }` gives the most keys a `type` filter of at most `bytes`
 * holds at rate `fpp`; `{ bytes, capacity }` gives the lowest rate it reaches for `capacity`
 * keys. Throws `RangeError` when not even one key (or no rate below 1) fits the budget.
 * `budgetSize('classic', { bytes: 1 << 20, fpp: 0.01 })` → capacity 875,175 (exactly 1 MiB of bits).
 */
export function budgetSize(
  type: SizedType,
  budget: { bytes: number; fpp: number } | { bytes: number; capacity: number },
): BudgetSize {
  const cost = costOf(type);
  checkOptions('budget', budget);
  const bytes = checkPositiveInteger('bytes', budget.bytes);
  if ('fpp' in budget && budget.fpp !== undefined) {
    const fpp = checkProbability('fpp', budget.fpp);
    if (!fits(cost, 1, fpp, bytes)) {
      throw new RangeError(
        `bytes ${bytes} is too small for one key at fpp ${fpp} in a ${type} filter`,
      );
    }
    const lo = largestInteger(1, 2, (n) => fits(cost, n, fpp, bytes));
    return { capacity: lo, fpp, bytes: cost(lo, fpp) };
  }
  const capacity = checkPositiveInteger('capacity', (budget as { capacity: number }).capacity);
  // Search log(fpp) in (log 1e-15, log 0.5]: lower rates need more bytes.
  let good = Math.log(0.5);
  if (!fits(cost, capacity, 0.5, bytes)) {
    throw new RangeError(
      `bytes ${bytes} is too small for ${capacity} keys at any rate below 0.5 in a ${type} filter`,
    );
  }
  let bad = Math.log(1e-15);
  if (fits(cost, capacity, 1e-15, bytes)) good = bad;
  while (good - bad > 1e-9 * Math.abs(good)) {
    const mid = (good + bad) / 2;
    if (fits(cost, capacity, Math.exp(mid), bytes)) good = mid;
    else bad = mid;
  }
  const fpp = Math.exp(good);
  return { capacity, fpp, bytes: cost(capacity, fpp) };
}
