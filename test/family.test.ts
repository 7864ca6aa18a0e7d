/**
 * The filter family side by side: bytes per key at 1% for each type, and bloom-filters@3's
 * cuckoo filter losing keys where ours loses none. (The conformance suite runs every type from
 * test/conformance/table.ts.)
 */
import bloomFilters from 'bloom-filters';
import { describe, expect, it } from 'vitest';
import {
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  packKeys,
  ScalableBloomFilter,
} from '../src/index.js';

describe('bytes per key at fpp 0.01 (1,000,000 keys)', () => {
  it('measures each type', () => {
    const n = 1_000_000;
    const classic = BloomFilter.create({ capacity: n, fpp: 0.01 }).bitSize / 8 / n;
    const counting = CountingBloomFilter.create({ capacity: n, fpp: 0.01 }).byteLength / n;
    // A cuckoo filter created for n keys (2^19 buckets: 48% full at n), and one created for
    // 900,000 keys holding them (2^18 buckets, 86% full).
    const cuckoo = CuckooFilter.create({ capacity: n, fpp: 0.01 }).byteLength / n;
    const cuckoo900k = CuckooFilter.create({ capacity: 900_000, fpp: 0.01 }).byteLength / 900_000;
    // A scalable filter grown 1000× from 1,000 keys (s = 2, r = 0.9), full newest layer. The
    // keys go in as one packed batch: the same layers and growth as key by key.
    const s = ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'int' });
    const ints = Array.from({ length: n }, (_, i) => i);
    s.addBatch(packKeys('int', ints));
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
