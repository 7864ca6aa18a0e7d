/**
 * Sizing both ways, for every type that is sized from (capacity, fpp): how many bytes a filter
 * for (capacity, fpp) takes, and, from a memory budget, the most keys it holds at a rate
 * (`{ bytes, fpp }` → capacity) or the lowest rate it reaches for a count (`{ bytes, capacity }`
 * → fpp). Each type's own sizing decides (Guava's for the classic and counting filters, the
 * Poisson block models for the blocked and split-block filters, the fingerprint width and safe
 * load for the cuckoo filter), so a filter created with the answer fits the budget exactly.
 *
 * Both inverses search the forward sizing, which only grows with capacity and with 1/fpp:
 * capacity by bisection over integers, fpp by bisection over log(fpp) to 1e-9 relative.
 */

import { checkOptions, checkPositiveInteger, checkProbability, mustBe } from '../errors.js';
import { bloomSize } from '../math.js';
import { blockedSize } from './blocked/sizing.js';
import { cuckooSize } from './cuckoo/sizing.js';
import { splitBlockSize } from './split-block/sizing.js';

/** The types sized from (capacity, fpp) with a fixed memory. */
export type SizedType = 'classic' | 'blocked' | 'split-block' | 'counting' | 'cuckoo';

const BYTES: Readonly<Record<SizedType, (capacity: number, fpp: number) => number>> = {
  classic: (n, p) => bloomSize(n, p).bits / 8,
  counting: (n, p) => bloomSize(n, p).bits / 2,
  blocked: (n, p) => blockedSize(n, p).blocks * 64,
  'split-block': (n, p) => splitBlockSize(n, p).blocks * 32,
  cuckoo: (n, p) => cuckooSize(n, p).bytes,
};

function checkType(type: unknown): SizedType {
  if (typeof type === 'string' && Object.hasOwn(BYTES, type)) return type as SizedType;
  throw mustBe('type', `one of ${Object.keys(BYTES).join(', ')}`, type);
}

/** Bytes a `type` filter sized for (capacity, fpp) holds its bits in. */
export function filterBytes(type: SizedType, capacity: number, fpp: number): number {
  return BYTES[checkType(type)](capacity, fpp);
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
  const cost = BYTES[checkType(type)];
  checkOptions('budget', budget);
  const bytes = checkPositiveInteger('bytes', budget.bytes);
  if ('fpp' in budget && budget.fpp !== undefined) {
    const fpp = checkProbability('fpp', budget.fpp);
    if (!fits(cost, 1, fpp, bytes)) {
      throw new RangeError(
        `bytes ${bytes} is too small for one key at fpp ${fpp} in a ${type} filter`,
      );
    }
    let lo = 1;
    let hi = 2;
    while (hi < Number.MAX_SAFE_INTEGER && fits(cost, hi, fpp, bytes)) {
      lo = hi;
      hi = Math.min(Number.MAX_SAFE_INTEGER, hi * 2);
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (fits(cost, mid, fpp, bytes)) lo = mid;
      else hi = mid;
    }
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
