/**
 * The calculator: from any two of n (keys), p (false positive rate), m (memory in bits) and,
 * optionally, k (hashes), the shape of each filter type and the rest of the numbers, computed
 * with the library's own sizing functions so that the page and `create()` always agree.
 *
 * Which inputs win when more than two are given: (n, m), then (n, p), then (m, p), then (n, k),
 * then (m, k). With (n, p) and no k, every type is sized exactly as its `create({ capacity, fpp })`
 * sizes it (Guava's formula for the classic and counting filters, `blockedSize`, `splitBlockSize`,
 * the cuckoo filter's fingerprint and power-of-two bucket rule).
 */

import {
  blockedFalsePositiveRate,
  blockedSize,
  bloomSize,
  cuckooFingerprintBits,
  cuckooSafeCapacity,
  falsePositiveRate,
  lowerBoundBitsPerKey,
  optimalNumOfHashFunctions,
  splitBlockFalsePositiveRate,
  splitBlockSize,
} from '../../src/index.js';
import { fuseCells, hashesOf, type KindId, memoryBits, modelRate, type Shape } from './kinds.js';

export interface CalcInputs {
  n?: number;
  p?: number;
  /** Memory in bits. */
  m?: number;
  k?: number;
}

export interface CalcResult {
  readonly shape: Shape;
  /** Keys (given, or the most the shape holds at rate p). */
  readonly n: number;
  /** The model false positive rate at n keys. */
  readonly p: number;
  /** Memory of the table in bits, and in bytes. */
  readonly bits: number;
  readonly bytes: number;
  /** Probes per key, or null (cuckoo). */
  readonly k: number | null;
  readonly bitsPerKey: number;
  /** log2(1/p): no filter with rate p can use fewer bits per key. */
  readonly lowerBound: number;
  /** Which inputs were used. */
  readonly from: string;
  /** Inputs that were given but not used, and other remarks. */
  readonly notes: readonly string[];
}

type Pair = 'nm' | 'np' | 'mp' | 'nk' | 'mk';

const LN2 = Math.log(2);
const MAX_BLOCKED_PROBES = 32;

function roundUp64(bits: number): number {
  return Math.max(64, Math.ceil(bits / 64) * 64);
}

/** The pair of inputs the calculator solves from, or null when fewer than two are usable. */
export function choosePair(input: CalcInputs): Pair | null {
  const has = (v: number | undefined): boolean => v !== undefined;
  if (has(input.n) && has(input.m)) return 'nm';
  if (has(input.n) && has(input.p)) return 'np';
  if (has(input.m) && has(input.p)) return 'mp';
  if (has(input.n) && has(input.k)) return 'nk';
  if (has(input.m) && has(input.k)) return 'mk';
  return null;
}

/** Largest integer x in [lo, hi] with ok(x) (ok must be true at lo and monotone), by bisection. */
function largest(lo: number, hi: number, ok: (x: number) => boolean): number {
  while (ok(hi) && hi < 2 ** 52) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Smallest integer x ≥ 1 with ok(x) (ok monotone, true for large x). */
function smallest(ok: (x: number) => boolean): number {
  let hi = 1;
  while (!ok(hi)) {
    if (hi > 2 ** 40) throw new RangeError('no size reaches that rate');
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

/** The classic filter's bits for n keys at rate p with a fixed k: m = −k·n / ln(1 − p^(1/k)). */
function bitsForFixedK(n: number, p: number, k: number): number {
  let bits = roundUp64(Math.ceil((-k * n) / Math.log1p(-(p ** (1 / k)))));
  while (falsePositiveRate(n, bits, k) > p) bits += 64;
  return bits;
}

/** Classic (and counting) shape: `cells` bits or counters. */
function bloomCells(pair: Pair, input: CalcInputs, cells: number | undefined) {
  const { n, p, k } = input;
  switch (pair) {
    case 'np': {
      if (k === undefined) {
        const size = bloomSize(n!, p!);
        return { cells: size.bits, k: size.hashes, n: n! };
      }
      return { cells: bitsForFixedK(n!, p!, k), k, n: n! };
    }
    case 'nm': {
      const m = roundUp64(cells!);
      return { cells: m, k: k ?? optimalNumOfHashFunctions(n!, cells!), n: n! };
    }
    case 'mp': {
      const m = roundUp64(cells!);
      const kOf = (x: number): number => k ?? optimalNumOfHashFunctions(x, m);
      const ok = (x: number): boolean => falsePositiveRate(x, m, kOf(x)) <= p!;
      if (!ok(1)) throw new RangeError(`${m} cells cannot hold even one key at rate ${p}`);
      const guess = Math.max(1, Math.floor((m * LN2 * LN2) / -Math.log(p!)));
      const keys = largest(ok(guess) ? guess : 1, Math.max(2, guess), ok);
      return { cells: m, k: kOf(keys), n: keys };
    }
    case 'nk':
      return { cells: roundUp64(Math.ceil((k! * n!) / LN2)), k: k!, n: n! };
    case 'mk': {
      const m = roundUp64(cells!);
      return { cells: m, k: k!, n: Math.max(1, Math.floor((m * LN2) / k!)) };
    }
  }
}

/** The k in 1..32 with the lowest blocked model rate at λ keys per block. */
export function bestBlockedProbes(lambda: number): number {
  let best = 1;
  let rate = blockedFalsePositiveRate(lambda, 1);
  for (let k = 2; k <= MAX_BLOCKED_PROBES; k++) {
    const r = blockedFalsePositiveRate(lambda, k);
    if (r >= rate) break;
    best = k;
    rate = r;
  }
  return best;
}

function blockedShape(pair: Pair, input: CalcInputs): { shape: Shape; n: number } {
  const { n, p, m, k } = input;
  const kAt = (lambda: number): number => k ?? bestBlockedProbes(lambda);
  switch (pair) {
    case 'np': {
      if (k === undefined) {
        const size = blockedSize(n!, p!);
        return { shape: { kind: 'blocked', blocks: size.blocks, hashes: size.hashes }, n: n! };
      }
      const blocks = smallest((z) => blockedFalsePositiveRate(n! / z, k) <= p!);
      return { shape: { kind: 'blocked', blocks, hashes: k }, n: n! };
    }
    case 'nm': {
      const blocks = Math.max(1, Math.ceil(m! / 512));
      return { shape: { kind: 'blocked', blocks, hashes: kAt(n! / blocks) }, n: n! };
    }
    case 'mp': {
      const blocks = Math.max(1, Math.ceil(m! / 512));
      const ok = (x: number): boolean =>
        blockedFalsePositiveRate(x / blocks, kAt(x / blocks)) <= p!;
      if (!ok(1)) throw new RangeError(`${blocks} blocks cannot hold even one key at rate ${p}`);
      const keys = largest(1, blocks * 8, ok);
      return { shape: { kind: 'blocked', blocks, hashes: kAt(keys / blocks) }, n: keys };
    }
    default:
      throw new RangeError('the blocked filter needs a rate p or a size m along with n');
  }
}

function splitBlockShape(pair: Pair, input: CalcInputs): { shape: Shape; n: number } {
  const { n, p, m } = input;
  switch (pair) {
    case 'np':
      return { shape: { kind: 'split-block', blocks: splitBlockSize(n!, p!).blocks }, n: n! };
    case 'nm':
      return { shape: { kind: 'split-block', blocks: Math.max(1, Math.ceil(m! / 256)) }, n: n! };
    case 'mp': {
      const blocks = Math.max(1, Math.ceil(m! / 256));
      const ok = (x: number): boolean => splitBlockFalsePositiveRate(x / blocks) <= p!;
      if (!ok(1)) throw new RangeError(`${blocks} blocks cannot hold even one key at rate ${p}`);
      return { shape: { kind: 'split-block', blocks }, n: largest(1, blocks * 8, ok) };
    }
    default:
      throw new RangeError('the split-block filter needs a rate p or a size m along with n');
  }
}

/** The fewest buckets (a power of two) whose safe capacity covers n, as `CuckooFilter.create`. */
export function cuckooBuckets(n: number): number {
  let buckets = 1;
  while (buckets < Math.ceil(n / 4)) buckets *= 2;
  while (cuckooSafeCapacity(buckets) < n) buckets *= 2;
  return buckets;
}

function cuckooShape(pair: Pair, input: CalcInputs): { shape: Shape; n: number } {
  const { n, p, m } = input;
  switch (pair) {
    case 'np': {
      const fingerprintBits = cuckooFingerprintBits(p!);
      return { shape: { kind: 'cuckoo', buckets: cuckooBuckets(n!), fingerprintBits }, n: n! };
    }
    case 'nm': {
      const buckets = cuckooBuckets(n!);
      const f = Math.min(32, Math.floor(m! / (4 * buckets)));
      if (f < 6) {
        throw new RangeError(
          `${n} keys need ${buckets} buckets; ${m} bits give ${f}-bit fingerprints, fewer than 6`,
        );
      }
      return { shape: { kind: 'cuckoo', buckets, fingerprintBits: f }, n: n! };
    }
    case 'mp': {
      const f = cuckooFingerprintBits(p!);
      let buckets = 1;
      while (buckets * 2 * 4 * f <= m!) buckets *= 2;
      if (buckets * 4 * f > m!) throw new RangeError(`${m} bits hold no bucket of ${f}-bit slots`);
      return {
        shape: { kind: 'cuckoo', buckets, fingerprintBits: f },
        n: cuckooSafeCapacity(buckets),
      };
    }
    default:
      throw new RangeError('the cuckoo filter has no k: give two of n, p and m');
  }
}

/**
 * A binary fuse filter holds exactly the n keys it is built from, with 8- or 16-bit
 * fingerprints (rate 2^−8 or 2^−16); its cells depend on n (see {@link fuseCells}).
 */
function binaryFuseShape(pair: Pair, input: CalcInputs): { shape: Shape; n: number } {
  const { n, p, m } = input;
  if (pair === 'np') {
    const f = p! >= 2 ** -8 ? 8 : p! >= 2 ** -16 ? 16 : null;
    if (f === null)
      throw new RangeError(
        `binary fuse fingerprints are 8 or 16 bits: rate at least 2^-16, got ${p}`,
      );
    return {
      shape: { kind: 'binary-fuse', keys: n!, cells: fuseCells(n!), fingerprintBits: f },
      n: n!,
    };
  }
  if (pair === 'nm') {
    const cells = fuseCells(n!);
    const f = cells * 16 <= m! ? 16 : cells * 8 <= m! ? 8 : null;
    if (f === null)
      throw new RangeError(`${n} keys need ${cells * 8} bits even with 8-bit fingerprints`);
    return { shape: { kind: 'binary-fuse', keys: n!, cells, fingerprintBits: f }, n: n! };
  }
  throw new RangeError('a binary fuse filter is built from its keys: give n, with p or m');
}

const FROM: Record<Pair, string> = {
  nm: 'n and m',
  np: 'n and p',
  mp: 'm and p',
  nk: 'n and k',
  mk: 'm and k',
};

/**
 * Solves for `kind`. Throws a `RangeError` naming the problem when the inputs do not determine
 * a shape (fewer than two of n, p, m; a size too small for one key; a k the type does not take).
 */
export function solve(kind: KindId, input: CalcInputs): CalcResult {
  const pair = choosePair(input);
  if (pair === null) throw new RangeError('give two of n, p and m (k is optional)');
  const notes: string[] = [];
  if (pair === 'nm' && input.p !== undefined) notes.push('p is computed from n and m');
  if (pair === 'np' && input.k !== undefined && input.m === undefined)
    notes.push('m solved for the k given');
  let shape: Shape;
  let n: number;
  if (kind === 'classic' || kind === 'counting') {
    const perCell = kind === 'counting' ? 4 : 1;
    const cells = input.m === undefined ? undefined : Math.max(1, Math.floor(input.m / perCell));
    const r = bloomCells(pair, input, cells);
    if (r.k > 255) throw new RangeError(`k = ${r.k} is above the maximum of 255`);
    shape =
      kind === 'classic'
        ? { kind, bits: r.cells, hashes: r.k }
        : { kind, counters: r.cells, hashes: r.k };
    n = r.n;
  } else {
    if (input.k !== undefined && kind !== 'blocked') {
      notes.push(
        kind === 'split-block'
          ? 'k is fixed at 8'
          : 'k does not apply: this type stores fingerprints',
      );
    }
    if (input.k !== undefined && kind === 'blocked' && input.k > MAX_BLOCKED_PROBES) {
      throw new RangeError(`the blocked filter takes 1 to 32 probes, got k = ${input.k}`);
    }
    const r =
      kind === 'blocked'
        ? blockedShape(pair, input)
        : kind === 'split-block'
          ? splitBlockShape(pair, input)
          : kind === 'cuckoo'
            ? cuckooShape(pair, input)
            : binaryFuseShape(pair, input);
    shape = r.shape;
    n = r.n;
  }
  const bits = memoryBits(shape);
  const p = modelRate(shape, n);
  const k = hashesOf(shape);
  return {
    shape,
    n,
    p,
    bits,
    bytes: Math.ceil(bits / 8),
    k,
    bitsPerKey: bits / n,
    lowerBound: p > 0 && p < 1 ? lowerBoundBitsPerKey(p) : Number.NaN,
    from: FROM[pair],
    notes,
  };
}
