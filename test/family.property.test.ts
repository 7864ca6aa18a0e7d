/**
 * Seeded property tests: random add/remove/has sequences against an exact model (a multiset for
 * the deletable filters, a Set for the scalable one). The invariant: a key the model holds always
 * answers true. Also: add returns the opposite of a prior has; remove of a held key succeeds;
 * remove of a key the filter rejects changes nothing; a failed add changes nothing; a serialized
 * copy behaves the same from then on.
 *
 * Removing a never-added key that the filter answers true for is the documented hazard of every
 * deletable filter (it takes another key's counters or fingerprint); the sequences never do it.
 */
import { describe, expect, it } from 'vitest';
import {
  CountingBloomFilter,
  CuckooFilter,
  FilterFullError,
  fromBytes,
  ScalableBloomFilter,
} from '../src/index.js';
import { mulberry32 } from './support/random.js';

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

type Deletable = CountingBloomFilter | CuckooFilter;

/**
 * All that a deletable filter holds (what its toBytes() payload encodes: the counters, or the
 * cuckoo table with the count and the victim slot), remembered in a buffer reused between calls:
 * it is taken before every cuckoo add and every absent remove, where a toBytes() (a new container,
 * its header and its CRC) cost half of this file.
 */
class Remembered {
  private saved = new Uint8Array(0);
  private extra = [0, 0, 0, 0];

  take(f: Deletable): void {
    const now = Remembered.bytes(f);
    if (this.saved.length !== now.length) this.saved = new Uint8Array(now.length);
    this.saved.set(now);
    Remembered.extra(f, this.extra);
  }

  /** Whether `f` holds exactly what it held at the last take(). */
  same(f: Deletable): boolean {
    const now = Remembered.extra(f, [0, 0, 0, 0]);
    return same(Remembered.bytes(f), this.saved) && now.every((x, i) => x === this.extra[i]);
  }

  private static bytes(f: Deletable): Uint8Array {
    if (f instanceof CountingBloomFilter) return f.counters.data;
    return new Uint8Array(f.table.buffer, f.table.byteOffset, f.table.byteLength);
  }

  /** A cuckoo filter's count and victim slot (zeros for a counting filter). */
  private static extra(f: Deletable, into: number[]): number[] {
    if (f instanceof CuckooFilter) {
      const v = f.victim;
      into[0] = f.size;
      into[1] = v === undefined ? 0 : 1;
      into[2] = v?.bucket ?? 0;
      into[3] = v?.fingerprint ?? 0;
    }
    return into;
  }
}

interface DeletableCase {
  name: string;
  make(): Deletable;
  /** Most copies the sequence keeps in the model at once (beyond it, adds turn into removes). */
  budget: number;
  universe: number;
}

/** Runs `ops` random operations on `make()` against a multiset model; returns counters of events. */
function runDeletable(c: DeletableCase, seed: number, ops: number): Record<string, number> {
  const random = mulberry32(seed);
  let f = c.make();
  const model = new Map<string, number>();
  let total = 0;
  const kept = new Remembered();
  const events: Record<string, number> = { add: 0, remove: 0, absentRemove: 0, full: 0, trip: 0 };
  const key = (): string => `u:${Math.floor(random() * c.universe)}`;
  // The model's keys in its own (insertion) order: held() takes the i-th without walking it.
  const order: string[] = [];
  const held = (): string | undefined =>
    order.length === 0 ? undefined : order[Math.floor(random() * order.length)];
  const checkAll = (where: string): void => {
    for (const [k, n] of model) {
      if (!f.has(k)) expect.fail(`seed ${seed}, ${where}: false negative for ${k}`);
      const count = f.count(k);
      const floor = f instanceof CountingBloomFilter ? Math.min(n, 15) : n;
      if (count < floor) expect.fail(`seed ${seed}, ${where}: count(${k}) = ${count} < ${floor}`);
    }
    if (f instanceof CuckooFilter) expect(f.size).toBe(total);
  };
  for (let op = 0; op < ops; op++) {
    const r = random();
    if (r < 0.45 && total < c.budget) {
      const k = key();
      const before = f.has(k);
      // Only the cuckoo filter may refuse an add (a counting filter saturates): its state before.
      if (f instanceof CuckooFilter) kept.take(f);
      try {
        const added = f.add(k);
        if (added === before)
          expect.fail(`seed ${seed}: add(${k}) = ${added} after has = ${before}`);
        const copies = model.get(k) ?? 0;
        if (copies === 0) order.push(k);
        model.set(k, copies + 1);
        total++;
        events.add!++;
      } catch (e) {
        // Only the cuckoo filter refuses, and only when full or the key's buckets hold 2b copies.
        if (!(e instanceof FilterFullError)) throw e;
        const cuckoo = f as CuckooFilter;
        if (!(cuckoo.full || cuckoo.count(k) >= 8))
          expect.fail(`seed ${seed}: add(${k}) refused with room and < 8 copies`);
        if (!kept.same(f)) expect.fail(`seed ${seed}: the refused add(${k}) changed the filter`);
        events.full!++;
      }
    } else if (r < 0.8) {
      const k = held();
      if (k === undefined) continue;
      if (!f.remove(k)) expect.fail(`seed ${seed}: remove(${k}) of a held key returned false`);
      const n = model.get(k)! - 1;
      if (n === 0) {
        model.delete(k);
        order.splice(order.indexOf(k), 1);
      } else model.set(k, n);
      total--;
      events.remove!++;
    } else if (r < 0.9) {
      const k = `absent:${Math.floor(random() * 1e9)}`;
      if (f.has(k)) continue; // a false positive: removing it is the documented hazard
      kept.take(f);
      if (f.remove(k)) expect.fail(`seed ${seed}: remove(${k}) of an absent key returned true`);
      if (!kept.same(f)) expect.fail(`seed ${seed}: remove(${k}) changed the filter`);
      events.absentRemove!++;
    } else if (r < 0.99) {
      const k = key();
      if (model.has(k) && !f.has(k)) expect.fail(`seed ${seed}: false negative for ${k}`);
    } else {
      // Continue on a copy read back from bytes (through the type-dispatching reader).
      const bytes = f.toBytes();
      const g = fromBytes(bytes) as Deletable;
      if (!same(g.toBytes(), bytes)) expect.fail(`seed ${seed}: the copy's bytes differ`);
      f = g;
      events.trip!++;
    }
    if (op % 250 === 0) checkAll(`op ${op}`);
  }
  checkAll('end');
  // Empty the model: every removal succeeds and the filter ends empty.
  for (const [k, n] of model)
    for (let i = 0; i < n; i++)
      if (!f.remove(k)) expect.fail(`seed ${seed}: emptying, remove(${k}) returned false`);
  if (f instanceof CuckooFilter) expect(f.size).toBe(0);
  else expect(f.nonZeroCount()).toBe(f.saturatedCount());
  return events;
}

const CASES: DeletableCase[] = [
  {
    name: 'CountingBloomFilter',
    make: () => CountingBloomFilter.create({ capacity: 600, fpp: 0.01 }),
    budget: 600,
    universe: 300,
  },
  {
    name: 'CountingBloomFilter (hot keys past saturation)',
    make: () => CountingBloomFilter.create({ capacity: 200, fpp: 0.05 }),
    budget: 400,
    universe: 12,
  },
  {
    name: 'CuckooFilter',
    make: () => CuckooFilter.create({ capacity: 600, fpp: 0.01 }),
    budget: 600,
    universe: 600,
  },
  {
    // Twice the capacity of a 32-slot table: adds hit the victim slot and FilterFullError.
    name: 'CuckooFilter (overfilled small table)',
    make: () => new CuckooFilter({ buckets: 8, fingerprintBits: 8 }),
    budget: 64,
    universe: 80,
  },
  {
    name: 'CuckooFilter (hot keys, 2b copies)',
    make: () => new CuckooFilter({ buckets: 16, fingerprintBits: 12, funnel: 'string' }),
    budget: 50,
    universe: 5,
  },
];

describe('deletable filters against a multiset model', () => {
  for (const c of CASES) {
    it(`${c.name}: a held key always answers true (40 seeds × 1500 operations)`, () => {
      const totals: Record<string, number> = {};
      for (let seed = 1; seed <= 40; seed++) {
        for (const [e, n] of Object.entries(runDeletable(c, seed * 7919, 1500))) {
          totals[e] = (totals[e] ?? 0) + n;
        }
      }
      // Every kind of step actually happened.
      expect(totals.add).toBeGreaterThan(1000);
      expect(totals.remove).toBeGreaterThan(1000);
      expect(totals.absentRemove).toBeGreaterThan(100);
      expect(totals.trip).toBeGreaterThan(100);
      if (c.name.includes('overfilled') || c.name.includes('2b copies')) {
        expect(totals.full).toBeGreaterThan(50);
      } else {
        // Sized for the budget: only a key's 2b-copy limit could refuse an add, and rarely.
        expect(totals.full).toBeLessThan(totals.add! / 1000);
      }
    });
  }
});

describe('ScalableBloomFilter against a Set model', () => {
  it('a key added always answers true while the chain grows (30 seeds × 3000 operations)', () => {
    let maxLayers = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const random = mulberry32(seed * 104729);
      const growth = random() < 0.5 ? 2 : 4;
      const ratio = 0.5 + random() * 0.45;
      const capacity = 1 + Math.floor(random() * 8);
      let f = ScalableBloomFilter.create({ capacity, fpp: 0.02, growth, ratio, funnel: 'int' });
      const model = new Set<number>();
      for (let op = 0; op < 3000; op++) {
        const r = random();
        const k = Math.floor(random() * 5000);
        if (r < 0.6) {
          const before = f.has(k);
          if (f.add(k) === before) expect.fail(`seed ${seed}: add(${k}) after has = ${before}`);
          if (model.has(k) && !before) expect.fail(`seed ${seed}: lost ${k}`);
          model.add(k);
        } else if (r < 0.995) {
          if (model.has(k) && !f.has(k)) expect.fail(`seed ${seed}: false negative ${k}`);
        } else {
          const bytes = f.toBytes();
          f = fromBytes(bytes) as ScalableBloomFilter;
          expect(same(f.toBytes(), bytes)).toBe(true);
        }
      }
      for (const k of model)
        if (!f.has(k)) expect.fail(`seed ${seed}: false negative ${k} at the end`);
      // Layers respect their capacities; only the newest may be partly full.
      const layers = f.layers();
      for (const [i, l] of layers.entries()) {
        expect(l.capacity).toBe(capacity * growth ** i);
        if (i < layers.length - 1) expect(l.count).toBe(l.capacity);
        else expect(l.count).toBeLessThanOrEqual(l.capacity);
      }
      expect(f.size).toBeLessThanOrEqual(model.size);
      maxLayers = Math.max(maxLayers, f.layerCount);
    }
    expect(maxLayers).toBeGreaterThanOrEqual(8);
  });
});
