/**
 * Sizing and false-positive formulas for Bloom filters, in one pure module.
 *
 * Cheat sheet (the notation of Guava's BloomFilter):
 *
 *   m: total bits   n: expected insertions   k: hash functions per key
 *   b = m / n: bits per key   p: false positive probability (fpp)
 *
 *   m = -n·ln(p) / (ln 2)²            optimal bits for n keys at rate p      (Guava: truncated)
 *   k = (m / n)·ln 2                  optimal number of hashes               (Guava 31.1: rounded)
 *   p ≈ (1 − e^(−k·n/m))^k            rate after n inserts                   (Bloom 1970; Broder-Mitzenmacher)
 *   p̂ = (bitCount / m)^k              rate implied by the bits actually set  (Guava expectedFpp)
 *   n̂ = −(m / k)·ln(1 − bitCount / m) inserts implied by the bits set        (Swamidass-Baldi 2007)
 *   lower bound: log2(1/p) bits per key; an optimal Bloom filter needs log2(e) = 1.4427× that.
 *   n½ = ln 2 / (−k·ln(1 − 1/m))      design load: keys that set half the bits (≈ m·ln 2 / k)
 *   saturation = p̂ / p(n½)           saturated past SATURATION_LIMIT = 10
 *
 * Guava 31.1 (the version pinned by our interop tests) computes
 *   m = (long) (-n * Math.log(p) / (Math.log(2) * Math.log(2)))
 *   k = max(1, (int) Math.round((double) m / n * Math.log(2)))
 * and stores m rounded up to whole 64-bit words. n = 1000, p = 0.01 gives m = 9585, k = 7, 150 words.
 * Newer Guava computes k from p alone; readers must take k and the size from the serialized header.
 */

import { checkPositiveInteger, checkProbability, mustBe, show } from './errors.js';

/**
 * The largest bit array bloomkit allocates: 2^36 bits (8 GiB). Index arithmetic is exact below it,
 * and Guava's own limit (2^31 − 1 words of 64 bits) is larger, so every such filter can be exchanged.
 */
export const MAX_BITS = 2 ** 36;

const LN2 = Math.log(2);
const LN2_SQUARED = LN2 * LN2;

/** Guava 31.1 `optimalNumOfBits(n, p)`: `(long) (-n * ln p / ln²2)`, truncated toward zero. */
export function optimalNumOfBits(n: number, p: number): number {
  checkPositiveInteger('capacity', n);
  checkProbability('fpp', p);
  return Math.trunc((-n * Math.log(p)) / LN2_SQUARED);
}

/** Guava 31.1 `optimalNumOfHashFunctions(n, m)`: `max(1, round(m / n * ln 2))`. */
export function optimalNumOfHashFunctions(n: number, m: number): number {
  checkPositiveInteger('capacity', n);
  checkPositiveInteger('bits', m);
  return Math.max(1, javaRound((m / n) * LN2));
}

/** Java's `Math.round(double)`: the closest integer, ties toward +∞. */
function javaRound(x: number): number {
  const f = Math.floor(x);
  return x - f >= 0.5 ? f + 1 : f;
}

/** The most hash functions a classic, counting or DCSO filter takes (one byte in our header). */
export const MAX_HASHES = 255;

/**
 * `hashes` if at most {@link MAX_HASHES}, else the one refusal every tool gives for a rate too
 * low for that limit (create, calc and the page alike): `fpp 1e-300 needs 996 hash functions,
 * more than the maximum 255`. Guava's own sizing has no such limit ({@link bloomSize} keeps it).
 */
export function checkHashesFor(fpp: number, hashes: number): number {
  if (hashes > MAX_HASHES) {
    throw new RangeError(
      `fpp ${show(fpp)} needs ${hashes} hash functions, more than the maximum ${MAX_HASHES}`,
    );
  }
  return hashes;
}

/** The shape of a classic Bloom filter as Guava sizes it for (capacity, fpp). */
export interface BloomSize {
  /** Bits requested by the formula, before rounding up to whole 64-bit words. */
  readonly optimalBits: number;
  /** Bits actually allocated: a multiple of 64. This is the modulus of every index. */
  readonly bits: number;
  /** Hash functions (bit positions) per key. */
  readonly hashes: number;
}

/**
 * Sizes a classic filter exactly like Guava 31.1's `BloomFilter.create(funnel, n, p)`.
 * Throws `RangeError` for bad input and for a size above {@link MAX_BITS}.
 */
export function bloomSize(capacity: number, fpp: number): BloomSize {
  const optimalBits = optimalNumOfBits(capacity, fpp);
  if (optimalBits > MAX_BITS) {
    throw new RangeError(
      `capacity ${show(capacity)} at fpp ${show(fpp)} needs ${optimalBits} bits, more than the maximum ${MAX_BITS}`,
    );
  }
  // Guava's LockFreeBitArray allocates ceil(m / 64) words; a tiny filter still gets one word.
  const bits = Math.max(64, Math.ceil(optimalBits / 64) * 64);
  const hashes = optimalNumOfHashFunctions(capacity, Math.max(1, optimalBits));
  return { optimalBits, bits, hashes };
}

/**
 * The shape `BloomFilter.create` and `CountingBloomFilter.create` give for (capacity, fpp):
 * {@link bloomSize}, refused past {@link MAX_HASHES} hash functions ({@link checkHashesFor}).
 */
export function sizeBloom(capacity: number, fpp: number): BloomSize {
  const size = bloomSize(capacity, fpp);
  checkHashesFor(fpp, size.hashes);
  return size;
}

function checkFinite(name: string, value: unknown, min: number, exclusive: boolean): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (exclusive ? value <= min : value < min)
  ) {
    throw mustBe(name, `a finite number ${exclusive ? '>' : '>='} ${min}`, value);
  }
  return value;
}

/** Checks (bitCount, bitSize, k) of a real filter: 0 ≤ bitCount ≤ bitSize, k ≥ 1 integer. */
function checkFill(bitCount: number, bitSize: number, k: number): void {
  checkPositiveInteger('bitSize', bitSize);
  checkPositiveInteger('k', k);
  if (!Number.isSafeInteger(bitCount) || bitCount < 0 || bitCount > bitSize) {
    throw mustBe('bitCount', `an integer in [0, bitSize=${bitSize}]`, bitCount);
  }
}

/** The false positive rate after `n` inserts into `m` bits with `k` hashes: (1 − e^(−kn/m))^k. */
export function falsePositiveRate(n: number, m: number, k: number): number {
  checkFinite('n', n, 0, false);
  checkFinite('m', m, 0, true);
  checkFinite('k', k, 0, true);
  return (-Math.expm1((-k * n) / m)) ** k;
}

/** Bits per key of a filter of `m` bits holding `n` keys. */
export function bitsPerKey(m: number, n: number): number {
  checkFinite('m', m, 0, true);
  checkFinite('n', n, 0, true);
  return m / n;
}

/**
 * Guava `expectedFpp()`: (bitCount / bitSize)^k, the rate implied by the bits actually set.
 *
 * The power is computed by squaring in double-double arithmetic and rounded once, so it is the
 * correctly rounded value of the double base to the k-th power; that is what Java's `Math.pow`
 * returns in all but rare cases (V8's `**` is off by one ulp in about 10% of them).
 */
export function expectedFpp(bitCount: number, bitSize: number, k: number): number {
  checkFill(bitCount, bitSize, k);
  return powInt(bitCount / bitSize, k);
}

/** Veltkamp splitter for 53-bit doubles: 2^27 + 1. */
const SPLITTER = 134217729;

/** x^n for an integer n ≥ 1 by squaring in double-double arithmetic, rounded once at the end. */
export function powInt(x: number, n: number): number {
  let rh = 1;
  let rl = 0;
  let bh = x;
  let bl = 0;
  let e = n;
  while (e > 0) {
    if (e & 1) {
      [rh, rl] = ddMul(rh, rl, bh, bl);
    }
    e >>>= 1;
    if (e > 0) [bh, bl] = ddMul(bh, bl, bh, bl);
  }
  return rh + rl;
}

/** (ah + al) · (bh + bl) in double-double (Dekker's product with a Veltkamp split). */
function ddMul(ah: number, al: number, bh: number, bl: number): [number, number] {
  const p = ah * bh;
  let t = SPLITTER * ah;
  const ahh = t - (t - ah);
  const ahl = ah - ahh;
  t = SPLITTER * bh;
  const bhh = t - (t - bh);
  const bhl = bh - bhh;
  const err = ahh * bhh - p + ahh * bhl + ahl * bhh + ahl * bhl;
  const lo = err + (ah * bl + al * bh);
  const hi = p + lo;
  return [hi, lo - (hi - p)];
}

/**
 * Guava `approximateElementCount()`: −(m/k)·ln(1 − bitCount/m), rounded half up.
 * A filter with every bit set gives `Infinity` (Guava throws there).
 */
export function estimateCount(bitCount: number, bitSize: number, k: number): number {
  checkFill(bitCount, bitSize, k);
  const x = (-Math.log1p(-bitCount / bitSize) * bitSize) / k;
  if (!Number.isFinite(x)) return Number.POSITIVE_INFINITY;
  return javaRound(x);
}

/** The information-theoretic minimum bits per key for rate p: log2(1/p). */
export function lowerBoundBitsPerKey(p: number): number {
  checkProbability('fpp', p);
  return -Math.log2(p);
}

/**
 * Layer i of a scalable filter (Almeida, Baquero, Preguiça, Hutchison, IPL 2007): it holds
 * c_i = c0·s^i keys at rate P_i = P·(1 − r)·r^i, so the compound rate stays below
 * Σ P_i = P for any number of layers. One schedule for the in-memory and the Redis scalable
 * filters (and their readers, which check a stored layer against it).
 */
export function scalableLayerTarget(
  i: number,
  capacity: number,
  fpp: number,
  growth: number,
  ratio: number,
): { capacity: number; fpp: number } {
  return { capacity: capacity * growth ** i, fpp: fpp * (1 - ratio) * ratio ** i };
}

/**
 * The one integer solver of the sizing code: the largest integer x ≥ `lo` with `ok(x)`, for an
 * `ok` that is true at `lo` and, once false, false for every larger x. Doubles from `hi` (> lo)
 * while `ok` holds, then bisects; at most about 2·53 calls of `ok`. Every "how many keys fit"
 * question (`budgetSize`, the size models' (m, p) → n) is answered by it.
 */
export function largestInteger(lo: number, hi: number, ok: (x: number) => boolean): number {
  while (hi < Number.MAX_SAFE_INTEGER && ok(hi)) {
    lo = hi;
    hi = Math.min(Number.MAX_SAFE_INTEGER, hi * 2);
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The smallest integer x ≥ 1 with `ok(x)`, for an `ok` that stays true once true; a
 * `RangeError` naming `what` when no x up to 2^52 is enough.
 */
export function smallestInteger(ok: (x: number) => boolean, what: string): number {
  let hi = 1;
  while (!ok(hi)) {
    if (hi > 2 ** 52) throw new RangeError(`no size reaches ${what}`);
    hi *= 2;
  }
  let lo = 0;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * A filter is *saturated* when the false positive rate its state implies passes this many times
 * the rate of its design point (`saturation`): far past the keys it was sized for.
 */
export const SATURATION_LIMIT = 10;

/**
 * The design load of k hash functions into `bits` bits: the keys that set half of them,
 * n½ = ln 2 / (−k·ln(1 − 1/bits)) ≈ bits·ln 2 / k. A Bloom filter sized for n keys with the best
 * k (k = (m/n)·ln 2, Guava's rule rounded) is half full at n, so n½ recovers the capacity a shape
 * was made for from the shape alone, the same for a filter created here and one read from a file
 * (whose header does not keep the capacity asked for). For a block filter, `bits` is a block's
 * (or a block word's) and n½ keys per block.
 */
export function halfFillLoad(bits: number, k: number): number {
  checkFinite('bits', bits, 1, true);
  checkFinite('k', k, 0, true);
  return LN2 / (-k * Math.log1p(-1 / bits));
}

/** The design point of a classic (or counting) filter of m bits, k hashes: n½ and the rate there. */
export function bloomDesignPoint(m: number, k: number): { capacity: number; fpp: number } {
  const capacity = halfFillLoad(m, k);
  return { capacity, fpp: falsePositiveRate(capacity, m, k) };
}

/**
 * The one saturation figure: the rate now over the rate at the design point,
 * `currentFpp / designFpp` (0 for an empty filter). Saturated when above {@link SATURATION_LIMIT}.
 */
export function saturation(currentFpp: number, designFpp: number): number {
  checkFinite('currentFpp', currentFpp, 0, false);
  checkFinite('designFpp', designFpp, 0, true);
  return currentFpp / designFpp;
}
