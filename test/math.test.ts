/**
 * The sizing and rate formulas of src/math.ts, pinned to Guava 31.1's values.
 *
 * The pinned numbers were read from the real jar (test/java/GuavaHarness.java `sizing` and
 * `build`, and shared/REFERENCE.md §1.2 and §1.7), so they hold without Java. The live grid
 * comparison with Guava is in guava-interop.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  BloomFilter,
  bitsPerKey,
  bloomSize,
  estimateCount,
  expectedFpp,
  falsePositiveRate,
  lowerBoundBitsPerKey,
  MAX_BITS,
  optimalNumOfBits,
  optimalNumOfHashFunctions,
} from '../src/index.js';
import { lcg } from './support/random.js';

/** A regex that matches `name` followed (anywhere later) by the literal text `value`. */
function names(name: string, value: string): RegExp {
  return new RegExp(`${name}.*${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
}

/** How bloomkit's messages print a value (errors.ts `show`). */
function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Object.is(v, -0)) return '-0';
  return String(v);
}

describe('Guava 31.1 sizing, pinned', () => {
  /** [n, p, Guava bitSize (64·N), Guava k], from the real jar. */
  const GUAVA: [number, number, number, number][] = [
    [1000, 0.01, 9600, 7],
    [100, 0.03, 768, 5],
    [1, 0.01, 64, 6], // 31.1 computes k from m/n; Guava master would say 7
    [1, 1e-6, 64, 19], // master: 20
    [10_000, 1e-4, 191_744, 13],
    [1_000_000, 1e-3, 14_377_600, 10],
    [1_000_000, 0.1, 4_792_576, 3],
    [12_345, 0.5, 17_856, 1],
    [3, 0.3, 64, 2],
    [2, 0.5, 64, 1],
    [1, 0.5, 64, 1],
    [65, 1e-9, 2816, 30],
    [230_000_000, 0.01, 2_204_563_456, 7],
    [5_000_000_000, 0.01, 47_925_291_904, 7],
  ];

  it.each(GUAVA)('bloomSize(%d, %d) = %d bits, k = %d', (n, p, bits, k) => {
    const size = bloomSize(n, p);
    expect(size.bits).toBe(bits);
    expect(size.hashes).toBe(k);
    expect(size.bits % 64).toBe(0);
    expect(size.optimalBits).toBeLessThanOrEqual(size.bits);
    expect(size.bits - size.optimalBits).toBeLessThan(64);
  });

  it('n=1000, p=0.01 → m=9585 (truncated), k=7, 150 words', () => {
    expect(optimalNumOfBits(1000, 0.01)).toBe(9585);
    expect(optimalNumOfHashFunctions(1000, 9585)).toBe(7);
    expect(bloomSize(1000, 0.01)).toEqual({ optimalBits: 9585, bits: 9600, hashes: 7 });
    expect(bloomSize(1000, 0.01).bits / 64).toBe(150);
  });

  it('n=100, p=0.03 → m=729, k=5, 12 words, Guava header 01 05 00 00 00 0c', () => {
    expect(bloomSize(100, 0.03)).toEqual({ optimalBits: 729, bits: 768, hashes: 5 });
    const header = BloomFilter.create({ capacity: 100, fpp: 0.03 }).toGuava().slice(0, 6);
    expect(Array.from(header)).toEqual([0x01, 0x05, 0x00, 0x00, 0x00, 0x0c]);
  });

  it('truncates m (never rounds up) and rounds k half up from m/n, as Java does', () => {
    // -1000·ln(0.01)/ln²2 = 9585.058...; truncation gives 9585, rounding would also, so try a
    // value just below an integer: n = 7, p = 0.01 → 67.095... → 67.
    expect(optimalNumOfBits(7, 0.01)).toBe(Math.trunc((-7 * Math.log(0.01)) / Math.log(2) ** 2));
    for (let n = 1; n <= 200; n++) {
      for (const p of [0.5, 0.1, 0.03, 0.01, 1e-3, 1e-6]) {
        const m = optimalNumOfBits(n, p);
        const exact = (-n * Math.log(p)) / (Math.log(2) * Math.log(2));
        expect(m).toBe(Math.floor(exact));
        const k = optimalNumOfHashFunctions(n, Math.max(1, m));
        expect(k).toBe(Math.max(1, Math.floor((Math.max(1, m) / n) * Math.log(2) + 0.5)));
      }
    }
  });

  it('a tiny filter gets one 64-bit word (Guava refuses 0 bits: a documented difference)', () => {
    expect(optimalNumOfBits(1, 0.9)).toBe(0);
    expect(bloomSize(1, 0.9)).toEqual({ optimalBits: 0, bits: 64, hashes: 1 });
    expect(bloomSize(1, 0.999).bits).toBe(64);
  });
});

describe('falsePositiveRate (1 − e^(−kn/m))^k', () => {
  it('matches the closed form and the textbook values', () => {
    expect(falsePositiveRate(1000, 9600, 7)).toBeCloseTo((1 - Math.exp(-7000 / 9600)) ** 7, 15);
    // 10 bits per key, k = 7: 0.819% (REFERENCE §2: "a standard unblocked Bloom gets 0.819%").
    expect(falsePositiveRate(1000, 10_000, 7)).toBeCloseTo(0.0081937, 6);
    // Guava's optimum for p = 1%: 9.585 bits/key and k = 7 give 1.004%.
    expect(falsePositiveRate(1000, 9585, 7)).toBeCloseTo(0.0100395, 6);
    expect(falsePositiveRate(0, 64, 3)).toBe(0);
  });

  it('is accurate for tiny rates (uses expm1, no cancellation)', () => {
    // One key, a huge array, k = 1: rate = 1 − e^(−1/m) ≈ 1/m.
    const m = 2 ** 36;
    expect(falsePositiveRate(1, m, 1) * m).toBeCloseTo(1, 9);
  });

  it('grows with n and shrinks with m', () => {
    let last = 0;
    for (let n = 0; n <= 5000; n += 250) {
      const r = falsePositiveRate(n, 9600, 7);
      expect(r).toBeGreaterThanOrEqual(last);
      last = r;
    }
    expect(falsePositiveRate(1000, 20_000, 7)).toBeLessThan(falsePositiveRate(1000, 10_000, 7));
  });

  it.each([
    [-1, 100, 1],
    [1, 0, 1],
    [1, -64, 1],
    [1, 100, 0],
    [1, 100, -1],
    [Number.NaN, 100, 1],
    [1, Number.NaN, 1],
    [1, 100, Number.NaN],
  ])('falsePositiveRate(%d, %d, %d) is a RangeError naming the values', (n, m, k) => {
    expect(() => falsePositiveRate(n, m, k)).toThrow(RangeError);
    // The message names the first bad parameter and its value.
    const [name, value] = !(n >= 0) ? ['n', n] : !(m > 0) ? ['m', m] : ['k', k];
    expect(() => falsePositiveRate(n, m, k)).toThrow(`${name} must be a finite number`);
    expect(() => falsePositiveRate(n, m, k)).toThrow(`got ${value}`);
  });
});

// ------------------------------------------------------------------ expectedFpp

/** x as an exact rational num / den (den a power of two); x finite and positive. */
function rational(x: number): [bigint, bigint] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const raw = view.getBigUint64(0);
  const biased = Number((raw >> 52n) & 0x7ffn);
  let mantissa = raw & ((1n << 52n) - 1n);
  if (biased !== 0) mantissa |= 1n << 52n;
  const e = (biased === 0 ? 1 : biased) - 1075;
  return e >= 0 ? [mantissa << BigInt(e), 1n] : [mantissa, 1n << BigInt(-e)];
}

/** num / den rounded to the nearest double, ties to even (for results in the normal range). */
function roundToDouble(num: bigint, den: bigint): number {
  let e = 0;
  // Bring the quotient into [2^52, 2^53) by shifting.
  const shift = num.toString(2).length - den.toString(2).length - 53;
  if (shift > 0) {
    den <<= BigInt(shift);
    e += shift;
  } else if (shift < 0) {
    num <<= BigInt(-shift);
    e += shift;
  }
  while (num < den << 52n) {
    num <<= 1n;
    e--;
  }
  while (num >= den << 53n) {
    den <<= 1n;
    e++;
  }
  let q = num / den;
  const r2 = 2n * (num - q * den);
  if (r2 > den || (r2 === den && (q & 1n) === 1n)) q++;
  return Number(q) * 2 ** e;
}

/** (c/m)^k correctly rounded: the exact power of the double c/m, rounded once. */
function exactPow(c: number, m: number, k: number): number {
  const [num, den] = rational(c / m);
  return roundToDouble(num ** BigInt(k), den ** BigInt(k));
}

describe('expectedFpp (bitCount/bitSize)^k', () => {
  it('is 0 for an empty filter and 1 for a full one', () => {
    expect(expectedFpp(0, 9600, 7)).toBe(0);
    expect(expectedFpp(9600, 9600, 7)).toBe(1);
    expect(expectedFpp(4800, 9600, 1)).toBe(0.5);
  });

  it('after 1000 ints in a (1000, 0.01) filter: 0.010208852903934128, as Guava', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'int' });
    for (let i = 0; i < 1000; i++) f.add(i);
    expect(f.expectedFpp()).toBe(0.010208852903934128);
    expect(f.expectedFpp()).toBe(expectedFpp(f.bitCount, 9600, 7));
  });

  /**
   * Values Guava 31.1 returned for a 9600-bit, k=7 filter at these bit counts (string keys
   * "k0".."k(n-1)"), where V8's `**` is 1 ulp away. Java's Math.pow is correctly rounded here.
   */
  const GUAVA_FPP: [bitCount: number, fpp: number][] = [
    [1282, 7.573864742076441e-7],
    [1724, 0.0000060236842533313084],
    [3060, 0.00033431152919344585],
    [3881, 0.0017648462151683825],
    [4572, 0.0055570578869912875],
    [4960, 0.009828180052226231],
    [5082, 0.011650484695980073],
    [6238, 0.048912398723269156],
    [7684, 0.21048098237091065],
  ];

  it.each(GUAVA_FPP)('bitCount %d of 9600, k=7 → Guava expectedFpp %d exactly', (count, fpp) => {
    expect(exactPow(count, 9600, 7)).toBe(fpp); // the reference itself
    expect(expectedFpp(count, 9600, 7)).toBe(fpp);
  });

  it('is the correctly rounded power (what Java returns in >99.9% of cases) on a seeded grid', () => {
    const step = lcg(12345);
    const next = (): number => step() / 2 ** 32;
    const wrong: string[] = [];
    for (let t = 0; t < 3000; t++) {
      const m = 64 * (1 + Math.floor(next() * 100_000));
      const c = 1 + Math.floor(next() * (m - 1));
      const k = 1 + Math.floor(next() * 30);
      const ref = exactPow(c, m, k);
      if (ref < 2 ** -1000) continue;
      if (expectedFpp(c, m, k) !== ref) wrong.push(`(${c}/${m})^${k}`);
    }
    expect(wrong.slice(0, 10), `${wrong.length} of 3000 not correctly rounded`).toEqual([]);
  });
});

// ------------------------------------------------------------------ estimateCount

describe('estimateCount −(m/k)·ln(1 − bitCount/m), rounded half up', () => {
  it('1000 ints in a (1000, 0.01) filter → 1005, as Guava', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'int' });
    for (let i = 0; i < 1000; i++) f.add(i);
    expect(f.estimatedCount()).toBe(1005);
    expect(estimateCount(f.bitCount, f.bitSize, f.hashes)).toBe(1005);
  });

  it('is 0 when empty and Infinity when every bit is set (Guava throws there)', () => {
    expect(estimateCount(0, 9600, 7)).toBe(0);
    expect(estimateCount(9600, 9600, 7)).toBe(Number.POSITIVE_INFINITY);
    const full = new BloomFilter({ bits: 64, hashes: 3, funnel: 'int' });
    for (let i = 0; full.bitCount < 64; i++) full.add(i);
    expect(full.estimatedCount()).toBe(Number.POSITIVE_INFINITY);
    expect(full.expectedFpp()).toBe(1);
  });

  it('rounds like Java DoubleMath.roundToLong(x, HALF_UP) on a grid', () => {
    const wrong: string[] = [];
    for (const m of [64, 9600, 191_744]) {
      for (const k of [1, 3, 7, 13]) {
        for (let c = 0; c < m; c += Math.max(1, Math.floor(m / 500))) {
          const x = (-Math.log1p(-c / m) * m) / k;
          const got = estimateCount(c, m, k);
          if (got !== Math.floor(x + 0.5)) wrong.push(`c=${c} m=${m} k=${k}: ${got}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('tracks the true count closely below capacity', () => {
    const f = BloomFilter.create({ capacity: 10_000, fpp: 0.01, funnel: 'int' });
    for (let i = 0; i < 10_000; i++) f.add(i * 7919);
    expect(Math.abs(f.estimatedCount() - 10_000)).toBeLessThan(200);
  });
});

describe('bits per key and the lower bound', () => {
  it('lowerBoundBitsPerKey(p) = log2(1/p)', () => {
    expect(lowerBoundBitsPerKey(0.01)).toBeCloseTo(6.643856189774724, 14);
    expect(lowerBoundBitsPerKey(0.001)).toBeCloseTo(9.965784284662087, 14);
    expect(lowerBoundBitsPerKey(1 / 256)).toBe(8);
    expect(lowerBoundBitsPerKey(0.5)).toBe(1);
    // An optimal Bloom filter needs log2(e) = 1.4427× the bound: 9.585 bits/key at 1%.
    expect(bloomSize(1_000_000, 0.01).optimalBits / 1e6 / lowerBoundBitsPerKey(0.01)).toBeCloseTo(
      Math.LOG2E,
      5,
    );
  });

  it('bitsPerKey(m, n) = m / n', () => {
    expect(bitsPerKey(9600, 1000)).toBe(9.6);
  });

  it.each([0, 1, -0.5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'lowerBoundBitsPerKey(%d) is a RangeError naming fpp and the value',
    (p) => {
      expect(() => lowerBoundBitsPerKey(p)).toThrow(RangeError);
      expect(() => lowerBoundBitsPerKey(p)).toThrow(names('fpp', shown(p)));
    },
  );
});

// ------------------------------------------------------------------ bad n and p

const BAD_N: unknown[] = [
  0,
  -1,
  -0,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 53,
  '100',
  null,
  undefined,
  100n,
];
const BAD_P: unknown[] = [
  0,
  1,
  -0.5,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  '0.01',
  null,
  undefined,
];

describe('bad n and p are RangeErrors naming the parameter and the value', () => {
  const sizers: [string, (n: unknown, p: unknown) => unknown][] = [
    ['optimalNumOfBits', (n, p) => optimalNumOfBits(n as number, p as number)],
    ['bloomSize', (n, p) => bloomSize(n as number, p as number)],
    [
      'BloomFilter.create',
      (n, p) => BloomFilter.create({ capacity: n as number, fpp: p as number }),
    ],
  ];

  for (const [label, size] of sizers) {
    it.each(BAD_N.map((n) => [shown(n), n]))(`${label}: capacity %s`, (_s, n) => {
      expect(() => size(n, 0.01)).toThrow(RangeError);
      expect(() => size(n, 0.01)).toThrow(
        names('capacity', typeof n === 'bigint' ? `${n}n` : shown(n)),
      );
    });
    it.each(BAD_P.map((p) => [shown(p), p]))(`${label}: fpp %s`, (_s, p) => {
      expect(() => size(1000, p)).toThrow(RangeError);
      expect(() => size(1000, p)).toThrow(names('fpp', shown(p)));
    });
  }

  it('optimalNumOfHashFunctions names capacity and bits', () => {
    expect(() => optimalNumOfHashFunctions(0, 100)).toThrow(names('capacity', '0'));
    expect(() => optimalNumOfHashFunctions(10, 0)).toThrow(names('bits', '0'));
    expect(() => optimalNumOfHashFunctions(10, Number.NaN)).toThrow(names('bits', 'NaN'));
    expect(() => optimalNumOfHashFunctions(10, 1.5)).toThrow(RangeError);
  });
});

// ------------------------------------------------------------------ size limits

describe('sizes beyond MAX_BITS are refused, never wrapped', () => {
  it('MAX_BITS is 2^36 (8 GiB), below Guava’s 2^31 − 1 words', () => {
    expect(MAX_BITS).toBe(2 ** 36);
    expect(MAX_BITS).toBeLessThan(64 * (2 ** 31 - 1));
  });

  it('capacity 2.3e8 at 1% gives a real 2,204,563,456-bit filter (a peer wraps to 8 bits here)', () => {
    const f = BloomFilter.create({ capacity: 230_000_000, fpp: 0.01, funnel: 'int' });
    expect(f.bitSize).toBe(2_204_563_456);
    expect(f.hashes).toBe(7);
    expect(f.bits.data.length).toBe(2_204_563_456 / 32);
    // Indexes past 2^31 are reached and set where they should be.
    let maxIndex = 0;
    const outside: number[] = [];
    for (let i = 0; i < 2000; i++) {
      for (const idx of f.indexesOf(i)) {
        if (!(idx < f.bitSize)) outside.push(idx);
        maxIndex = Math.max(maxIndex, idx);
      }
      f.add(i);
    }
    expect(outside).toEqual([]);
    expect(maxIndex).toBeGreaterThan(2 ** 31);
    const absent: number[] = [];
    for (let i = 0; i < 2000; i++) if (!f.has(i)) absent.push(i);
    expect(absent).toEqual([]);
    expect(f.bitCount).toBeGreaterThan(13_000);
    expect(f.bitCount).toBeLessThanOrEqual(14_000);
    for (const idx of f.indexesOf(1999)) expect(f.bits.get(idx)).toBe(true);
  });

  it('sizes past 2^32 bits are computed exactly (no 32-bit wrap)', () => {
    expect(bloomSize(5_000_000_000, 0.01).bits).toBe(47_925_291_904);
    expect(bloomSize(1_000_000_000, 0.01).bits).toBe(9_585_058_432);
    expect(bloomSize(1_000_000_000, 0.01).bits).toBeGreaterThan(2 ** 33);
  });

  it('capacity 1e11 at 1e-9 is refused with a RangeError naming capacity, fpp and the limit', () => {
    expect(() => bloomSize(1e11, 1e-9)).toThrow(RangeError);
    expect(() => bloomSize(1e11, 1e-9)).toThrow(/capacity 100000000000 at fpp 1e-9/);
    expect(() => bloomSize(1e11, 1e-9)).toThrow(String(MAX_BITS));
    expect(() => BloomFilter.create({ capacity: 1e11, fpp: 1e-9 })).toThrow(RangeError);
  });

  it('the boundary: the largest n that fits at p = 0.5 is accepted, n + 1 is refused', () => {
    let lo = 1;
    let hi = 2 ** 40;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (optimalNumOfBits(mid, 0.5) <= MAX_BITS) lo = mid;
      else hi = mid;
    }
    expect(bloomSize(lo, 0.5).bits).toBeLessThanOrEqual(MAX_BITS);
    expect(() => bloomSize(hi, 0.5)).toThrow(RangeError);
    expect(() => bloomSize(Number.MAX_SAFE_INTEGER, 1e-300)).toThrow(/more than the maximum/);
  });

  it('an explicit shape past MAX_BITS is refused before allocating', () => {
    expect(() => new BloomFilter({ bits: MAX_BITS + 1, hashes: 1 })).toThrow(RangeError);
    expect(() => new BloomFilter({ bits: MAX_BITS + 1, hashes: 1 })).toThrow(
      names('bits', String(MAX_BITS + 1)),
    );
    expect(() => new BloomFilter({ bits: 2 ** 53, hashes: 1 })).toThrow(RangeError);
  });
});
