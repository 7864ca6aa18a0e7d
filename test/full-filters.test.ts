/**
 * Full and empty filters at the edges of the math: every estimator, rate model, solver and growth
 * schedule a filter or the `Deduper` runs ends, and answers a number (or Infinity) for a filter
 * with every bit set and for an empty one. A full 512-bit blocked state once made the Deduper's
 * rate model sum a Poisson series up to λ = ∞ (a command that never returned and ignored
 * SIGTERM); each check here runs under a short test timeout, so a loop that does not end fails.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  blockedFalsePositiveRate,
  blockedSize,
  maxLoad,
  POISSON_MIX_MAX_LOAD,
  poissonMix,
} from '../src/filters/blocked/sizing.js';
import { packKeys } from '../src/filters/packed.js';
import { scalableLayerSize } from '../src/filters/scalable/sizing.js';
import { splitBlockFalsePositiveRate } from '../src/filters/split-block/sizing.js';
import {
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  FilterFullError,
  type ScalableBloomFilter,
  SplitBlockBloomFilter,
  solveSize,
  typesWith,
} from '../src/index.js';
import { estimateCount, expectedFpp, falsePositiveRate } from '../src/math.js';
import { Deduper } from '../src/node/deduper.js';

/** The smallest filter of each bit type, and 5,000 distinct keys: enough to set every bit. */
const SMALL = {
  classic: () => BloomFilter.create({ capacity: 1, fpp: 0.5 }),
  blocked: () => BlockedBloomFilter.create({ capacity: 10, fpp: 0.01 }),
  'split-block': () => SplitBlockBloomFilter.create({ capacity: 10, fpp: 0.01 }),
  counting: () => CountingBloomFilter.create({ capacity: 1, fpp: 0.5 }),
};
const KEYS = Array.from({ length: 5000 }, (_, i) => String(i));

describe('the Poisson mix of the block filters', () => {
  it('ends for every load, ∞ and NaN included, in bounded work', () => {
    const f = (j: number) => -Math.expm1(-j / 100);
    for (const lambda of [Number.POSITIVE_INFINITY, 1e300, 2 ** 53, 1e9]) {
      expect(poissonMix(lambda, f)).toBe(f(lambda));
    }
    expect(poissonMix(Number.NaN, f)).toBeNaN();
    expect(poissonMix(0, f)).toBe(0);
    // At the threshold the summed series and f(λ) agree for the rates mixed here.
    expect(blockedFalsePositiveRate(POISSON_MIX_MAX_LOAD * 1.01, 1)).toBe(1);
    expect(blockedFalsePositiveRate(POISSON_MIX_MAX_LOAD, 1)).toBeCloseTo(1, 8);
    expect(blockedFalsePositiveRate(Number.POSITIVE_INFINITY, 19)).toBe(1);
    expect(splitBlockFalsePositiveRate(Number.POSITIVE_INFINITY)).toBe(1);
    // Below the threshold nothing changed: the sizing of a pinned example.
    expect(blockedSize(1_000_000, 0.01)).toMatchObject({ blocks: 19_471, hashes: 6 });
  });

  it('maxLoad ends for a rate that never passes the target, and for NaN', () => {
    expect(maxLoad(0.5, () => 0)).toBeGreaterThan(2 ** 40);
    expect(maxLoad(0.5, () => Number.NaN)).toBe(0);
  });

  it('the scalable layer schedule ends at its size limit', () => {
    expect(() => scalableLayerSize(2 ** 40, 1e-3)).toThrow(RangeError);
    expect(scalableLayerSize(1000, 0.01)).toEqual({ bits: 9600, hashes: 7 });
  });
});

describe.each(Object.entries(SMALL))('a full and an empty %s filter', (_name, make) => {
  it('estimators answer at once', () => {
    const empty = make();
    expect(empty.estimatedCount()).toBe(0);
    expect(empty.expectedFpp()).toBe(0);
    const full = make();
    full.addMany(KEYS as never);
    const size = 'bitSize' in full ? full.bitSize : full.counterSize;
    const set = 'bitSize' in full ? full.bitCount : full.nonZeroCount();
    expect(set, 'every bit set').toBe(size);
    expect(full.estimatedCount()).toBe(Number.POSITIVE_INFINITY);
    expect(full.expectedFpp()).toBe(1);
    expect(full.has('never added')).toBe(true);
  });
});

describe('a full cuckoo filter', () => {
  it('refuses the next key, and its estimators and saturation answer at once', () => {
    const f = CuckooFilter.create({ capacity: 10, fpp: 0.01 });
    expect(f.saturation()).toMatchObject({ currentFpp: 0, ratio: 0, saturated: false });
    let added = 0;
    expect(() => {
      for (const k of KEYS) {
        f.add(k);
        added++;
      }
    }).toThrow(FilterFullError);
    expect(f.estimatedCount()).toBe(added);
    expect(f.expectedFpp()).toBeGreaterThan(0);
    expect(f.saturation().saturated).toBe(false);
    expect(f.designPoint().capacity).toBeLessThanOrEqual(added);
  });
});

describe('the estimators of math.ts on a full and an empty filter', () => {
  it('answer Infinity and 1, 0 and 0', () => {
    expect(estimateCount(512, 512, 19)).toBe(Number.POSITIVE_INFINITY);
    expect(expectedFpp(512, 512, 19)).toBe(1);
    expect(estimateCount(0, 512, 19)).toBe(0);
    expect(expectedFpp(0, 512, 19)).toBe(0);
  });
});

describe('a Deduper on a full state', () => {
  it.each(['blocked', 'split-block', 'classic'] as const)(
    'answers every key seen, and its rate model is high and finite (%s)',
    async (type) => {
      const d = await Deduper.open(null, { capacity: 10, fpp: 0.01, type });
      d.seenBatch(packKeys('string', KEYS));
      // The model counts the keys answered new (a key dropped by a false positive sets no bit).
      expect(d.currentFpp).toBeGreaterThan(0.5);
      const flags = d.seenBatch(packKeys('string', ['y', 'z']));
      expect([...flags]).toEqual([1, 1]);
      expect(Number.isFinite(d.stats.expectedFalseDrops)).toBe(true);
    },
  );

  it('resumed from a full state file, answers at once (blocked and split-block)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bloomkit-full-'));
    try {
      for (const type of ['blocked', 'split-block'] as const) {
        const path = join(dir, `${type}.bloom`);
        const first = await Deduper.open(path, { capacity: 10, fpp: 0.01, type });
        first.seenBatch(packKeys('string', KEYS));
        await first.close();
        const again = await Deduper.open(path);
        expect(again.currentFpp).toBe(1);
        expect([...again.seenBatch(packKeys('string', ['y']))]).toEqual([1]);
        expect(again.stats.expectedFalseDrops).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a scalable state grows instead (its rate stays below its target)', async () => {
    const d = await Deduper.open(null, { fpp: 0.01 });
    d.seenBatch(packKeys('string', KEYS));
    expect(d.currentFpp).toBeLessThan(0.01);
    expect((d.state as ScalableBloomFilter).layerCount).toBe(1);
  });
});

describe('the size solvers at the edges of n, p and m', () => {
  const inputs: { n?: number; p?: number; m?: number }[] = [];
  for (const p of [1e-300, 1e-12, 0.5, 0.999999, 1 - 2 ** -53]) {
    for (const n of [1, 1000, 2 ** 31, 2 ** 53 - 1]) inputs.push({ n, p });
    for (const m of [1, 64, 2 ** 20, 2 ** 36]) inputs.push({ m, p });
  }
  for (const n of [1, 2 ** 53 - 1]) for (const m of [1, 2 ** 36]) inputs.push({ n, m });

  it.each(typesWith('model'))(
    '%s: a shape with finite numbers and 0 ≤ p ≤ 1, or a RangeError naming the inputs',
    (type) => {
      for (const input of inputs) {
        const what = `${type} ${JSON.stringify(input)}`;
        try {
          const r = solveSize(type, input);
          for (const x of [r.p, r.bits, r.bytes, r.bitsPerKey])
            expect(x, what).toSatisfy(Number.isFinite);
          expect(Number.isSafeInteger(r.n), what).toBe(true);
          expect(r.p, what).toBeGreaterThanOrEqual(0);
          expect(r.p, what).toBeLessThanOrEqual(1);
        } catch (error) {
          expect(error, what).toBeInstanceOf(RangeError);
          // About the inputs given, never an internal step's figure (a capacity of 2.8e17 keys
          // that no one asked for, or a count of Infinity blocks).
          expect((error as Error).message, what).not.toMatch(/Infinity|NaN|safe integer/);
        }
      }
    },
  );

  it('the classic filter: 2^36 bits at p = 0.999999 hold the most keys with k = 1 (not an error)', () => {
    const m = 2 ** 36;
    const r = solveSize('classic', { m, p: 0.999999 });
    expect(r.k).toBe(1);
    // The largest n with (1 − e^(−n/m)) ≤ p: n ≈ −m·ln(1 − p) = 9.49e11 keys.
    expect(falsePositiveRate(r.n, m, 1)).toBeLessThanOrEqual(0.999999);
    expect(falsePositiveRate(r.n + 1, m, 1)).toBeGreaterThan(0.999999);
    expect(r.n / (-m * Math.log1p(-0.999999))).toBeCloseTo(1, 8);
  });
});
