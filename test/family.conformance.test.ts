/**
 * The filter family through the shared conformance suite, plus bytes per key at 1% for each type
 * and the side-by-side claim against bloom-filters@3.
 *
 * `addReportsChange`: the counting and scalable filters keep Guava's put contract (add returns
 * the opposite of a prior has, and a second add returns false). The cuckoo filter's add returns
 * the same boolean, but it stores a copy on every add (a multiset, as in the paper), so the
 * suite's "add every key twice" check would put 2× its capacity into it; that contract is
 * checked in test/cuckoo.test.ts on a filter sized for the copies.
 */
import bloomFilters from 'bloom-filters';
import { describe, expect, it } from 'vitest';
import {
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  fromBytes,
  type MembershipFilter,
  ScalableBloomFilter,
} from '../src/index.js';
import { type FilterAdapter, runConformance } from './conformance/suite.js';
import { decodeAny } from './support/any-filter.js';

interface Deletable extends MembershipFilter {
  remove(key: string): boolean;
}

function adapt(f: MembershipFilter): FilterAdapter {
  const adapter: FilterAdapter = {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    clear: () => f.clear(),
    // Through the type-dispatching reader, so the registration in formats/any.ts is checked too.
    roundTrip: () => adapt(decodeAny(f.toBytes())),
    addWrongKind: () => f.add(42),
  };
  if ('remove' in f) adapter.remove = (k) => (f as Deletable).remove(k);
  return adapter;
}

runConformance({
  name: 'CountingBloomFilter',
  create: (o) => adapt(CountingBloomFilter.create(o)),
  createRaw: (o) => CountingBloomFilter.create(o as never),
  addReportsChange: true,
});

runConformance({
  name: 'CountingBloomFilter (read back from bytes)',
  create: (o) => adapt(CountingBloomFilter.fromBytes(CountingBloomFilter.create(o).toBytes())),
});

runConformance({
  name: 'ScalableBloomFilter',
  create: (o) => adapt(ScalableBloomFilter.create(o)),
  createRaw: (o) => ScalableBloomFilter.create(o as never),
  addReportsChange: true,
});

runConformance({
  name: 'ScalableBloomFilter (grown 100× from a small first layer, s = 4, r = 0.85)',
  create: (o) =>
    adapt(
      ScalableBloomFilter.create({
        capacity: Math.max(1, Math.floor(o.capacity / 100)),
        fpp: o.fpp,
        growth: 4,
        ratio: 0.85,
      }),
    ),
  addReportsChange: true,
  // The compound bound is P itself: no slack beyond the binomial noise.
  fppSlack: 1,
});

runConformance({
  name: 'CuckooFilter',
  create: (o) => adapt(CuckooFilter.create(o)),
  createRaw: (o) => CuckooFilter.create(o as never),
  addReportsChange: false,
});

runConformance({
  name: 'CuckooFilter (32-bit fingerprints)',
  create: (o) => adapt(CuckooFilter.create({ ...o, fpp: 2e-9 })),
  addReportsChange: false,
});

describe('bytes per key at fpp 0.01 (1,000,000 keys)', () => {
  it('measures each type', () => {
    const n = 1_000_000;
    const classic = BloomFilter.create({ capacity: n, fpp: 0.01 }).bitSize / 8 / n;
    const counting = CountingBloomFilter.create({ capacity: n, fpp: 0.01 }).byteLength / n;
    // A cuckoo filter created for n keys (2^19 buckets: 48% full at n), and one created for
    // 900,000 keys holding them (2^18 buckets, 86% full).
    const cuckoo = CuckooFilter.create({ capacity: n, fpp: 0.01 }).byteLength / n;
    const cuckoo900k = CuckooFilter.create({ capacity: 900_000, fpp: 0.01 }).byteLength / 900_000;
    // A scalable filter grown 1000× from 1,000 keys (s = 2, r = 0.9), full newest layer.
    const s = ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'int' });
    for (let i = 0; i < n; i++) s.add(i);
    const scalable = s.byteLength / n;
    const measured = { classic, counting, cuckoo, cuckoo900k, scalable };
    expect(measured.classic).toBeCloseTo(1.198, 3);
    expect(measured.counting).toBeCloseTo(4.793, 3);
    expect(measured.cuckoo).toBeCloseTo(2.621, 3);
    expect(measured.cuckoo900k).toBeCloseTo(1.456, 3);
    expect(measured.scalable).toBeCloseTo(2.064, 3);
    // The issue's figure for bloom-filters@3's counting filter is 384 bytes per key: 80× ours.
    expect(384 / measured.counting).toBeGreaterThan(80);
  });
});

describe('side by side with bloom-filters@3 (the issue measured its cuckoo filter losing keys)', () => {
  it('their cuckoo filter filled to capacity forgets keys; ours forgets none', () => {
    const n = 10_000;
    const theirs = bloomFilters.CuckooFilter.create(n, 0.01);
    const ours = CuckooFilter.create({ capacity: n, fpp: 0.01 });
    for (let i = 0; i < n; i++) {
      theirs.add(`k${i}`);
      ours.add(`k${i}`);
    }
    let theirMisses = 0;
    let ourMisses = 0;
    for (let i = 0; i < n; i++) {
      if (!theirs.has(`k${i}`)) theirMisses++;
      if (!ours.has(`k${i}`)) ourMisses++;
    }
    // Measured: 3408 of 10,000 (34%) for bloom-filters 3.0.4; the issue says 33%.
    expect(theirMisses / n).toBeGreaterThan(0.2);
    expect(ourMisses).toBe(0);
  });
});
