/**
 * Sizing from a memory budget, both ways, for every type sized from (capacity, fpp): the answer
 * fits the budget, one key more (or a slightly lower rate) does not, and the filter the type's
 * own factory makes for the answer has exactly the bytes reported.
 */
import { describe, expect, it } from 'vitest';
import {
  BlockedBloomFilter,
  BloomFilter,
  budgetSize,
  CountingBloomFilter,
  CuckooFilter,
  filterBytes,
  type SizedType,
  SplitBlockBloomFilter,
} from '../src/index.js';

const MADE: Record<SizedType, (capacity: number, fpp: number) => number> = {
  classic: (capacity, fpp) => BloomFilter.create({ capacity, fpp }).bitSize / 8,
  counting: (capacity, fpp) => CountingBloomFilter.create({ capacity, fpp }).byteLength,
  blocked: (capacity, fpp) => BlockedBloomFilter.create({ capacity, fpp }).bitSize / 8,
  'split-block': (capacity, fpp) => SplitBlockBloomFilter.create({ capacity, fpp }).bitSize / 8,
  cuckoo: (capacity, fpp) => CuckooFilter.create({ capacity, fpp }).byteLength,
};

/** A shape that needs more than `bytes`, or cannot be made at all (a RangeError). */
function exceeds(type: SizedType, capacity: number, fpp: number, bytes: number): boolean {
  try {
    return filterBytes(type, capacity, fpp) > bytes;
  } catch (error) {
    if (error instanceof RangeError) return true;
    throw error;
  }
}

describe('budgetSize', () => {
  for (const type of Object.keys(MADE) as SizedType[]) {
    for (const bytes of [4096, 1 << 20, 3_000_000]) {
      it(`${type}, ${bytes} bytes: the most keys at fpp 0.01, and the lowest fpp for a count`, () => {
        const a = budgetSize(type, { bytes, fpp: 0.01 });
        expect(a.bytes).toBeLessThanOrEqual(bytes);
        expect(MADE[type]!(a.capacity, 0.01)).toBe(a.bytes);
        expect(exceeds(type, a.capacity + 1, 0.01, bytes)).toBe(true);
        const n = Math.max(1, Math.floor(a.capacity / 2));
        const b = budgetSize(type, { bytes, capacity: n });
        expect(b.bytes).toBeLessThanOrEqual(bytes);
        expect(b.fpp).toBeLessThanOrEqual(0.01);
        expect(MADE[type]!(n, b.fpp)).toBe(b.bytes);
        expect(exceeds(type, n, b.fpp * (1 - 1e-6), bytes)).toBe(true);
      });
    }
  }

  it('1 MiB of classic filter at 1% holds 875,175 keys (Guava sizing: m = -n ln p / ln^2 2)', () => {
    expect(budgetSize('classic', { bytes: 1 << 20, fpp: 0.01 }).capacity).toBe(875_175);
  });

  it('rejects budgets too small and bad parameters, naming them', () => {
    expect(() => budgetSize('classic', { bytes: 4, fpp: 1e-9 })).toThrow(/bytes 4 is too small/);
    expect(() => budgetSize('cuckoo', { bytes: 8, capacity: 1000 })).toThrow(RangeError);
    expect(() => budgetSize('classic', { bytes: 0, fpp: 0.01 })).toThrow(/bytes.*0/);
    expect(() => budgetSize('classic', { bytes: 100, fpp: 1.5 })).toThrow(/fpp.*1\.5/);
    expect(() => budgetSize('nope' as never, { bytes: 100, fpp: 0.1 })).toThrow(/type must be/);
  });
});
