/**
 * Sizing of the blocked Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient
 * Bloom Filters", WEA 2007): keys spread over 512-bit blocks by a Poisson(λ = n/z) load, so the
 * rate is Σ_j Pois(j; λ)·(1 − (1 − 1/512)^(k·j))^k; sizing picks the fewest blocks whose rate,
 * with the best k, is at most the target. Also the multiply-shift range reduction both block
 * filters use. See filter.ts.
 */

import { checkPositiveInteger, checkProbability, show } from '../../errors.js';
import { halfFillLoad } from '../../math.js';

/** Bits per block: one 64-byte cache line. */
export const BLOCK_BITS = 512;
/** Most blocks a blocked filter may have: 2^27 (2^36 bits). */
export const MAX_BLOCKS = 2 ** 27;
/** Most probes per key. */
export const MAX_PROBES = 32;
/** The model rate a new filter is sized for, as a fraction of the requested fpp. */
export const SIZING_HEADROOM = 0.97;

const TWO_32 = 4294967296;

/**
 * Loads above which {@link poissonMix} gives f(λ) instead of the sum: 2^16 keys per block, over a
 * thousand times any load a filter is sized for. There the load's relative spread √λ/λ is below
 * 0.4%, and the rates mixed here are 1 to double precision (a 512-bit or 256-bit block holding
 * 2^16 keys has every bit set), so f(λ) is the sum's value.
 */
export const POISSON_MIX_MAX_LOAD = 2 ** 16;

/**
 * Σ_j Pois(j; λ)·f(j): the expectation of `f` over a Poisson(λ) load, summed in log space from
 * j = 0 to λ + 12√λ + 30 (the rest of the mass is below 1e-30). Bounded work for every λ: above
 * {@link POISSON_MIX_MAX_LOAD}, and for λ = ∞ (a full filter's estimated count), it is f(λ);
 * NaN gives NaN.
 */
export function poissonMix(lambda: number, f: (j: number) => number): number {
  if (lambda === 0) return f(0);
  if (Number.isNaN(lambda)) return Number.NaN;
  if (lambda > POISSON_MIX_MAX_LOAD) return f(lambda);
  const last = Math.ceil(lambda + 12 * Math.sqrt(lambda) + 30);
  const logLambda = Math.log(lambda);
  let logP = -lambda;
  let sum = 0;
  for (let j = 0; j <= last; j++) {
    if (j > 0) logP += logLambda - Math.log(j);
    sum += Math.exp(logP) * f(j);
  }
  return sum;
}

/**
 * The model false positive rate of a 512-bit blocked filter at λ keys per block, k probes: a
 * probability, at most 1 (the summed series can pass 1 by rounding when every term is 1).
 */
export function blockedFalsePositiveRate(lambda: number, k: number): number {
  const q = k * Math.log1p(-1 / BLOCK_BITS);
  return Math.min(
    1,
    poissonMix(lambda, (j) => (-Math.expm1(q * j)) ** k),
  );
}

/**
 * The largest load λ (keys per block) at which `rate(λ)` stays at or below `target`, by doubling
 * then bisection (the rate grows with λ). `rate` must be increasing.
 */
export function maxLoad(target: number, rate: (lambda: number) => number): number {
  let lo = 0;
  let hi = 1;
  while (rate(hi) <= target) {
    lo = hi;
    hi *= 2;
    if (hi > 2 ** 40) return hi;
  }
  for (let i = 0; i < 60 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (rate(mid) <= target) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The k in 1..MAX_PROBES with the lowest model rate at load λ (the rate is unimodal in k). */
export function bestProbes(lambda: number): { k: number; rate: number } {
  let best = { k: 1, rate: blockedFalsePositiveRate(lambda, 1) };
  for (let k = 2; k <= MAX_PROBES; k++) {
    const rate = blockedFalsePositiveRate(lambda, k);
    if (rate >= best.rate) break;
    best = { k, rate };
  }
  return best;
}

/**
 * Block counts for a model of the rate at a load λ (keys per block), increasing in λ: the fewest
 * blocks of `blockBits` bits whose model rate at `capacity` keys is at most
 * `SIZING_HEADROOM`·fpp, from the largest such load ({@link maxLoad}, cached per fpp).
 */
export class BlockSizing {
  private readonly loads = new Map<number, number>();

  constructor(
    private readonly rate: (lambda: number) => number,
    private readonly blockBits: number,
    private readonly maxBlocks: number,
  ) {}

  /** The block count for `capacity` keys at `fpp`; a `RangeError` past the maximum. */
  blocks(capacity: number, fpp: number): number {
    checkPositiveInteger('capacity', capacity);
    checkProbability('fpp', fpp);
    let lambda = this.loads.get(fpp);
    if (lambda === undefined) {
      lambda = maxLoad(SIZING_HEADROOM * fpp, this.rate);
      if (this.loads.size > 256) this.loads.clear();
      this.loads.set(fpp, lambda);
    }
    const blocks = Math.max(1, Math.ceil(capacity / lambda));
    if (!(blocks <= this.maxBlocks)) {
      // λ = 0: not even one key per block keeps the rate at fpp; no count of blocks is enough.
      const needs = Number.isFinite(blocks)
        ? `${blocks} blocks of ${this.blockBits} bits, more than the maximum ${this.maxBlocks}`
        : `more than the maximum ${this.maxBlocks} blocks of ${this.blockBits} bits`;
      throw new RangeError(`capacity ${show(capacity)} at fpp ${show(fpp)} needs ${needs}`);
    }
    return blocks;
  }
}

const SIZING = /* @__PURE__ */ new BlockSizing((l) => bestProbes(l).rate, BLOCK_BITS, MAX_BLOCKS);

const DESIGN_LOADS = new Map<number, number>();

/**
 * The design load of k probes: the most keys per block at which k is still the best probe count
 * (the k that sizing picks, {@link bestProbes}); past it k − 1 probes give a lower model rate.
 * Found by bisection (the comparison flips once as λ grows), cached per k. For k = 1 (best at
 * every high load) it is the half-fill load, `halfFillLoad(512, 1)`.
 */
function designLoad(k: number): number {
  let lambda = DESIGN_LOADS.get(k);
  if (lambda !== undefined) return lambda;
  if (k <= 1) {
    lambda = halfFillLoad(BLOCK_BITS, 1);
  } else {
    let lo = 1e-3;
    let hi = halfFillLoad(BLOCK_BITS, k - 1) * 4;
    for (let i = 0; i < 50; i++) {
      const mid = (lo + hi) / 2;
      if (blockedFalsePositiveRate(mid, k) <= blockedFalsePositiveRate(mid, k - 1)) lo = mid;
      else hi = mid;
    }
    lambda = lo;
  }
  DESIGN_LOADS.set(k, lambda);
  return lambda;
}

/**
 * The design point of z blocks with k probes, read from the shape alone: the most keys at which
 * sizing would pick these k probes ({@link designLoad} per block) and the model rate there. A
 * filter made by `create` for (n, fpp) has its design capacity at or above n, and its design
 * rate within a factor of about 3 of the rate at n (1% → 2.1%, 1e-6 → 2.6e-6 at 10,000 keys).
 */
export function blockedDesignPoint(blocks: number, k: number): { capacity: number; fpp: number } {
  const lambda = designLoad(k);
  return { capacity: lambda * blocks, fpp: blockedFalsePositiveRate(lambda, k) };
}

/** The shape {@link BlockedBloomFilter.create} picks. */
export interface BlockedSize {
  /** Number of 512-bit blocks (z). */
  readonly blocks: number;
  /** Probes per key (k). */
  readonly hashes: number;
  /** Bits per key at capacity: 512·z/n. */
  readonly bitsPerKey: number;
  /** The model false positive rate at capacity. */
  readonly expectedRate: number;
}

/**
 * Sizes a blocked filter: the fewest 512-bit blocks z whose model rate (with the best k) at
 * `capacity` keys is at most `SIZING_HEADROOM`·fpp. `capacity: 1e6, fpp: 0.01` →
 * 19,471 blocks (9.97 bits/key), k = 6, model rate 0.970%.
 */
export function blockedSize(capacity: number, fpp: number): BlockedSize {
  const blocks = SIZING.blocks(capacity, fpp);
  const { k, rate } = bestProbes(capacity / blocks);
  return { blocks, hashes: k, bitsPerKey: (blocks * BLOCK_BITS) / capacity, expectedRate: rate };
}

/**
 * ⌊x·n / 2^32⌋ for a 32-bit x (taken unsigned) and 1 ≤ n ≤ 2^31, exactly: Lemire's
 * multiply-shift range reduction ("Fast random integer generation in an interval", ACM TOMACS
 * 2019) without `%` or BigInt. Below n = 2^21 the product fits a double's 53 bits; above, x is
 * split into 16-bit halves so that every partial product is exact.
 */
export function fastRange32(x: number, n: number): number {
  const u = x >>> 0;
  if (n <= 0x200000) return Math.floor((u * n) / TWO_32);
  return Math.floor(((u >>> 16) * n + Math.floor(((u & 0xffff) * n) / 65536)) / 65536);
}
