/**
 * How one 128-bit MurmurHash3 becomes k bit positions: Guava's `BloomFilterStrategies`.
 *
 * MURMUR128_MITZ_64 (Guava's default since 17, ordinal 1), double hashing over 64-bit lanes
 * (Kirsch and Mitzenmacher, "Less Hashing, Same Performance", 2006):
 *
 *     c = h1;  for i in 0..k-1:  index_i = (c & Long.MAX_VALUE) % m;  c += h2   (64-bit wrap)
 *
 * index_i is kept incrementally: index_{i+1} = index_i + (h2 mod 2^63 mod m), minus (2^63 mod m)
 * when c mod 2^63 wraps. Only two full 63-bit reductions are done per key; every later probe is
 * an add and a compare. The hot path runs this in WebAssembly (hash/hasher.ts); the JavaScript
 * form below keeps c mod 2^63 as two 32-bit halves, with no BigInt.
 *
 * MURMUR128_MITZ_32 (ordinal 0, Guava before 17), kept to read old Java filters:
 *
 *     a = (int) h1;  b = (int) (h1 >>> 32);  for i in 1..k:  c = a + i*b (int32);  if c < 0: c = ~c;  index = c % m
 *
 * Its indexes never exceed 2^31, so it is biased for filters above 2^31 bits (guava#1119); bloomkit
 * reads and queries such filters but creates new ones with MITZ_64.
 */

import { mustBe } from '../errors.js';

/** Guava's strategy names. */
export type StrategyName = 'MURMUR128_MITZ_32' | 'MURMUR128_MITZ_64';

/** Guava's ordinals (the first byte of `writeTo`), also used as ids in bloomkit's format. */
export const STRATEGY_ORDINALS: Readonly<Record<StrategyName, number>> = {
  MURMUR128_MITZ_32: 0,
  MURMUR128_MITZ_64: 1,
};

const STRATEGY_BY_ORDINAL = Object.keys(STRATEGY_ORDINALS) as readonly StrategyName[];

/** The strategy with Guava ordinal `ordinal`, or `undefined`. */
export function strategyFromOrdinal(ordinal: number): StrategyName | undefined {
  return STRATEGY_BY_ORDINAL[ordinal];
}

/** Throws a `RangeError` unless `name` is a strategy name; returns it. */
export function checkStrategy(name: unknown): StrategyName {
  if (typeof name === 'string' && Object.hasOwn(STRATEGY_ORDINALS, name))
    return name as StrategyName;
  throw mustBe('strategy', `'MURMUR128_MITZ_64' or 'MURMUR128_MITZ_32'`, name);
}

const TWO_32 = 4294967296;
const TWO_31 = 2147483648;

/**
 * Exact modular arithmetic for a modulus m ≤ 2^36 on doubles: x mod m for x < 2^53 via a
 * multiply by 1/m and a one-step correction, and 63-bit values given as (hi, lo) halves.
 */
export class Modulus {
  declare readonly m: number;
  /** 1/m, rounded. */
  declare readonly inv: number;
  /** 2^63 mod m. */
  declare readonly p63: number;

  constructor(m: number) {
    this.m = m;
    this.inv = 1 / m;
    let r = 1 % m;
    for (let i = 0; i < 63; i++) r = this.mod(r * 2);
    this.p63 = r;
  }

  /** x mod m for an integer 0 ≤ x < 2^53. */
  mod(x: number): number {
    const m = this.m;
    const r = x - Math.floor(x * this.inv) * m;
    return r < 0 ? r + m : r >= m ? r - m : r;
  }

  /** (hi · 2^32 + lo) mod m for 0 ≤ hi < 2^31 and 0 ≤ lo < 2^32. */
  mod63(hi: number, lo: number): number {
    let r = this.mod(hi);
    if (this.m <= 2097152) return this.mod(r * TWO_32 + lo);
    r = this.mod(r * 65536);
    return this.mod(r * 65536 + lo);
  }
}

/**
 * The MITZ_64 probe walk in JavaScript, one index at a time and without allocation: `start` with a
 * hash, then `next()` up to k times. Callers that stop at the first clear bit (a query) pay for
 * the probes they look at only. c mod 2^63 is kept as two 32-bit halves, with no BigInt.
 */
export class Mitz64Walk {
  private m = 1;
  private p63 = 0;
  private xhi = 0;
  private xlo = 0;
  private dhi = 0;
  private dlo = 0;
  private idx = 0;
  private step = 0;

  /** Starts the walk of hash `h` (`[h1 lo, h1 hi, h2 lo, h2 hi]` from `h[at]`) over `mod.m` bits. */
  start(h: Int32Array, mod: Modulus, at = 0): this {
    this.m = mod.m;
    this.p63 = mod.p63;
    this.xhi = h[at + 1]! & 0x7fffffff;
    this.xlo = h[at]! >>> 0;
    this.dhi = h[at + 3]! & 0x7fffffff;
    this.dlo = h[at + 2]! >>> 0;
    this.idx = mod.mod63(this.xhi, this.xlo);
    this.step = mod.mod63(this.dhi, this.dlo);
    return this;
  }

  /** The next probe's bit index. */
  next(): number {
    const current = this.idx;
    const m = this.m;
    let xlo = this.xlo + this.dlo;
    let carry = 0;
    if (xlo >= TWO_32) {
      xlo -= TWO_32;
      carry = 1;
    }
    let xhi = this.xhi + this.dhi + carry;
    let idx = current + this.step;
    if (xhi >= TWO_31) {
      xhi -= TWO_31;
      idx -= this.p63;
    }
    if (idx >= m) idx -= m;
    else if (idx < 0) idx += m;
    this.xlo = xlo;
    this.xhi = xhi;
    this.idx = idx;
    return current;
  }
}

const WALK = /* @__PURE__ */ new Mitz64Walk();

/**
 * Writes the k MITZ_64 indexes of hash `h` (`[h1 lo, h1 hi, h2 lo, h2 hi]`) into `out`: the
 * plain form, for users that need indexes rather than word/mask probes (counting filters, tools).
 */
export function mitz64Indexes(h: Int32Array, k: number, mod: Modulus, out: Float64Array): void {
  WALK.start(h, mod);
  for (let i = 0; i < k; i++) out[i] = WALK.next();
}

/**
 * The k MITZ_64 probes of the hash at `h[at]` as word indexes `words[w + i]` and masks
 * `masks[m + i]` (probe i is bit `masks[m + i]` of 32-bit word `words[w + i]`): the JavaScript form
 * of the wasm `mitz64` walks, per key and over a batch's hashes.
 */
export function mitz64Into(
  h: Int32Array,
  at: number,
  k: number,
  mod: Modulus,
  words: Int32Array,
  w: number,
  masks: Int32Array,
  m: number,
): void {
  WALK.start(h, mod, at);
  for (let i = 0; i < k; i++) {
    const idx = WALK.next();
    words[w + i] = (idx / 32) | 0;
    masks[m + i] = 1 << (idx & 31);
  }
}

/** Writes the k MITZ_32 indexes of hash `h` into `out`. */
export function mitz32Indexes(h: Int32Array, k: number, m: number, out: Float64Array): void {
  const a = h[0]!;
  const b = h[1]!;
  for (let i = 1; i <= k; i++) {
    let c = (a + Math.imul(i, b)) | 0;
    if (c < 0) c = ~c;
    out[i - 1] = c % m;
  }
}
