/**
 * Cuckoo filter sizing (Fan et al., CoNEXT 2014): bucket size b = 4, fingerprint bits
 * f = ⌈log2(2b/ε)⌉, and the measured safe load of a table of B buckets. See filter.ts.
 */

import { checkPositiveInteger, checkProbability, mustBe, show } from '../../errors.js';

/** Slots per bucket (b). */
export const CUCKOO_BUCKET_SIZE = 4;
/** The most evictions one insert makes before the victim slot takes the last fingerprint. */
export const CUCKOO_MAX_KICKS = 500;
/** Fingerprint widths supported. */
export const CUCKOO_MIN_FINGERPRINT_BITS = 6;
export const CUCKOO_MAX_FINGERPRINT_BITS = 32;
/** The largest table: 2^30 buckets and 2^35 bits (4 GiB). */
export const CUCKOO_MAX_BUCKETS = 2 ** 30;
export const CUCKOO_MAX_TABLE_BITS = 2 ** 35;

const B = CUCKOO_BUCKET_SIZE;

/**
 * Safe loads by log2(buckets) below 1024 buckets. Each is below the smallest load at first
 * failure seen in seeded fills with 6- and 12-bit fingerprints (50,000 fills per size up to 128
 * buckets, 5,000 at 256 and 512): 4 buckets 0.56, 8: 0.53, 16: 0.81, 32: 0.85, 64: 0.91,
 * 128: 0.92, 256: 0.93, 512: 0.945. From 1024 buckets (smallest of 1,000 fills: 0.952) up: 0.94.
 */
const SMALL_TABLE_LOADS = [1, 1, 0.5, 0.45, 0.7, 0.78, 0.85, 0.88, 0.9, 0.92];
const LARGE_TABLE_LOAD = 0.94;

/**
 * The keys a table of `buckets` buckets is sized to hold without a failure by
 * {@link CuckooFilter.create}: ⌊4·B·α(B)⌋ with α = 1 for B ≤ 2 (every key reaches every slot),
 * 0.45 to 0.92 up to 512 buckets and 0.94 from 1024 buckets (measured; see the class comment).
 */
export function cuckooSafeCapacity(buckets: number): number {
  checkPositiveInteger('buckets', buckets, CUCKOO_MAX_BUCKETS);
  if ((buckets & (buckets - 1)) !== 0) {
    throw mustBe('buckets', 'a power of two', buckets);
  }
  const load = SMALL_TABLE_LOADS[Math.log2(buckets)] ?? LARGE_TABLE_LOAD;
  return Math.floor(B * buckets * load);
}

/**
 * The design point of a table: its safe capacity ({@link cuckooSafeCapacity}) and the rate at
 * that load, 1 − (1 − 1/(2^f − 1))^(2b·load). A cuckoo filter refuses keys past its table
 * (`FilterFullError`), so its rate never passes this by much: it does not saturate.
 */
export function cuckooDesignPoint(
  buckets: number,
  fingerprintBits: number,
): { capacity: number; fpp: number } {
  const capacity = cuckooSafeCapacity(buckets);
  const load = capacity / (B * buckets);
  return { capacity, fpp: cuckooFalsePositiveRate(load, fingerprintBits) };
}

/** The smallest power of two ≥ x (x ≥ 1). */
export function nextPow2(x: number): number {
  let p = 1;
  while (p < x) p *= 2;
  return p;
}

/** Fingerprint bits for a target rate: f = ⌈log2(2b/ε)⌉. */
export function cuckooFingerprintBits(fpp: number): number {
  checkProbability('fpp', fpp);
  const f = Math.max(CUCKOO_MIN_FINGERPRINT_BITS, Math.ceil(Math.log2((2 * B) / fpp)));
  if (f > CUCKOO_MAX_FINGERPRINT_BITS) {
    throw new RangeError(
      `fpp ${show(fpp)} needs ${f}-bit fingerprints; the cuckoo filter supports up to 32 bits (fpp >= ${(2 * B) / 2 ** 32})`,
    );
  }
  return f;
}

/** Checks an explicit shape: B a power of two up to 2^30, f from 6 to 32, table ≤ 2^35 bits. */
export function checkCuckooShape(shape: { buckets: number; fingerprintBits: number }): {
  buckets: number;
  fingerprintBits: number;
} {
  const buckets = checkPositiveInteger('buckets', shape.buckets, CUCKOO_MAX_BUCKETS);
  if ((buckets & (buckets - 1)) !== 0) {
    throw mustBe('buckets', 'a power of two', buckets);
  }
  const f = shape.fingerprintBits;
  if (
    typeof f !== 'number' ||
    !Number.isInteger(f) ||
    f < CUCKOO_MIN_FINGERPRINT_BITS ||
    f > CUCKOO_MAX_FINGERPRINT_BITS
  ) {
    throw mustBe('fingerprintBits', 'an integer from 6 to 32', f);
  }
  const bits = buckets * B * f;
  if (bits > CUCKOO_MAX_TABLE_BITS) {
    throw new RangeError(
      `${buckets} buckets of ${f}-bit fingerprints need ${bits} bits, more than the maximum ${CUCKOO_MAX_TABLE_BITS}`,
    );
  }
  return { buckets, fingerprintBits: f };
}

/** MurmurHash3's 32-bit finalizer (fmix32). */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The shape {@link cuckooSize} picks. */
export interface CuckooSize {
  readonly buckets: number;
  readonly fingerprintBits: number;
  /** Bytes of the table (whole 64-bit words). */
  readonly bytes: number;
}

/**
 * The cuckoo filter for `capacity` keys at rate `fpp`: f = max(6, ⌈log2(8/fpp)⌉) bits and the
 * smallest power-of-two bucket count B with {@link cuckooSafeCapacity}(B) ≥ capacity.
 */
export function cuckooSize(capacity: number, fpp: number): CuckooSize {
  checkPositiveInteger('capacity', capacity);
  const f = cuckooFingerprintBits(fpp);
  let buckets = nextPow2(Math.ceil(capacity / B));
  while (buckets <= CUCKOO_MAX_BUCKETS && cuckooSafeCapacity(buckets) < capacity) buckets *= 2;
  if (buckets > CUCKOO_MAX_BUCKETS || buckets * B * f > CUCKOO_MAX_TABLE_BITS) {
    throw new RangeError(
      `capacity ${show(capacity)} at fpp ${show(fpp)} needs ${buckets} buckets of ${f}-bit fingerprints, more than the maximum`,
    );
  }
  return { buckets, fingerprintBits: f, bytes: Math.ceil((buckets * B * f) / 64) * 8 };
}

/**
 * The cuckoo filter's one rate model: a key never added matches one of the 2b slots of its two
 * buckets, each holding a fingerprint with probability `load`, with chance 1/(2^f − 1) (a
 * fingerprint is never 0): 1 − (1 − 1/(2^f − 1))^(2b·load), at most 2b·load/2^f roughly. It is
 * what `CuckooFilter.expectedFpp()` reports for a table at that load.
 */
export function cuckooFalsePositiveRate(load: number, fingerprintBits: number): number {
  return -Math.expm1(2 * B * load * Math.log1p(-1 / (2 ** fingerprintBits - 1)));
}
