/**
 * CountingBloomFilter: the classic filter's positions (checked against real Guava), 4-bit
 * saturating counters, remove semantics and its hazard, safeRemove, the native format, bad input.
 */
import { describe, expect, it } from 'vitest';
import { CounterArray } from '../src/bits/counters.js';
import {
  BloomFilter,
  CountingBloomFilter,
  FormatError,
  fromBytes,
  ScalableBloomFilter,
} from '../src/index.js';
import { expectBytes } from './support/bytes.js';
import { guavaBuild, requireJava } from './support/guava.js';
import { forge, trailer } from './support/native-bytes.js';
import { keys } from './support/random.js';

const hasJava = requireJava();

describe('CounterArray (packed 4-bit counters)', () => {
  it('packs two counters per byte, low nibble first', () => {
    const c = new CounterArray(4);
    expect(c.data.length).toBe(2);
    c.increment(0);
    c.increment(1);
    c.increment(1);
    c.increment(3);
    expect(Array.from(c.data)).toEqual([0x21, 0x10]);
    expect([c.get(0), c.get(1), c.get(2), c.get(3)]).toEqual([1, 2, 0, 1]);
  });

  it('saturates at 15 and never decrements a saturated counter', () => {
    const c = new CounterArray(2);
    for (let i = 0; i < 20; i++) c.increment(1);
    expect(c.get(1)).toBe(15);
    expect(c.get(0)).toBe(0);
    expect(c.decrement(1)).toBe(15);
    expect(c.get(1)).toBe(15);
    expect(c.saturatedCount()).toBe(1);
    expect(c.decrement(0)).toBe(0);
    expect(c.get(0)).toBe(0);
  });

  it('rejects bad sizes and data', () => {
    expect(() => new CounterArray(0)).toThrow(/counters must be a positive safe integer, got 0/);
    expect(() => new CounterArray(2 ** 32 + 1)).toThrow(RangeError);
    expect(() => new CounterArray(4, new Uint8Array(3))).toThrow(/2 bytes for 4 counters/);
  });
});

describe('CountingBloomFilter', () => {
  it('is sized like Guava: (1000, 0.01) → 9600 counters, k = 7, 4800 bytes', () => {
    const f = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    expect(f.counterSize).toBe(9600);
    expect(f.hashes).toBe(7);
    expect(f.byteLength).toBe(4800);
    const big = CountingBloomFilter.create({ capacity: 1_000_000, fpp: 0.01 });
    // 0.5 byte per counter: 4.79 bytes per key at 1% (the classic filter: 1.20).
    expect(big.byteLength / 1_000_000).toBeCloseTo(4.7925, 4);
    expect(big.toBloomFilter().bitSize / 8 / 1_000_000).toBeCloseTo(1.198, 3);
  });

  it('uses the positions Guava 31.1 computes (REFERENCE.md §1.6)', () => {
    const f = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    expect(f.indexesOf('a')).toEqual([6793, 6883, 8765, 1047, 2929, 4811, 4901]);
    expect(f.indexesOf('b')).toEqual([2670, 7127, 1984, 6441, 1298, 5755, 612]);
  });

  it('answers exactly like the classic filter with the same m and k, so its FPR is the same', () => {
    for (const [n, p] of [
      [5000, 0.01],
      [20_000, 0.001],
      [3000, 0.2],
    ] as const) {
      const c = CountingBloomFilter.create({ capacity: n, fpp: p });
      const b = BloomFilter.create({ capacity: n, fpp: p });
      expect(keys('in', n).filter((k) => c.add(k) !== b.add(k))).toEqual([]);
      expect(c.toBloomFilter().equals(b)).toBe(true);
      let fpC = 0;
      let fpB = 0;
      const probes = keys('out', 100_000);
      for (const k of probes) {
        const hc = c.has(k);
        if (hc) fpC++;
        if (b.has(k)) fpB++;
      }
      expect(fpC).toBe(fpB);
      // And the common rate is near the target (4-sigma binomial band, 10% sizing slack).
      expect(fpC / probes.length).toBeLessThan(p * 1.1 + 4 * Math.sqrt((p * (1 - p)) / 1e5));
    }
  });

  it.skipIf(!hasJava)(
    'matches real Guava bit for bit through toBloomFilter()',
    () => {
      const n = 3000;
      const inserts = keys('g', n);
      const probes = keys('p', 3000);
      const theirs = guavaBuild({ funnel: 'string', n, fpp: 0.01, inserts, probes });
      const c = CountingBloomFilter.create({ capacity: n, fpp: 0.01 });
      const put: boolean[] = [];
      for (const k of inserts) put.push(c.add(k));
      expect(put).toEqual(theirs.putResults);
      expect(Array.from(c.toBloomFilter().toGuava())).toEqual(Array.from(theirs.bytes));
      expect(probes.map((k) => c.has(k))).toEqual(theirs.probeResults);
      // After removing half, the classic view is Guava's filter of the other half.
      for (const k of inserts.slice(0, n / 2)) expect(c.remove(k)).toBe(true);
      const half = guavaBuild({ funnel: 'string', n, fpp: 0.01, inserts: inserts.slice(n / 2) });
      expect(Array.from(c.toBloomFilter().toGuava())).toEqual(Array.from(half.bytes));
    },
    60_000,
  );

  it('removes: true and one occurrence fewer; false and no change for an absent key', () => {
    const f = CountingBloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(f.add('x')).toBe(true);
    expect(f.add('x')).toBe(false); // counted again: a multiset
    expect(f.count('x')).toBe(2);
    expect(f.remove('x')).toBe(true);
    expect(f.has('x')).toBe(true); // added twice, removed once
    expect(f.remove('x')).toBe(true);
    expect(f.has('x')).toBe(false);
    expect(f.count('x')).toBe(0);
    const before = f.toBytes();
    expect(f.remove('x')).toBe(false);
    expect(f.remove('never')).toBe(false);
    expectBytes(f.toBytes(), before);
    expect(f.nonZeroCount()).toBe(0);
  });

  it('checks all k counters before touching any', () => {
    const f = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    // Give "a" all but one of its counters through other keys' positions: set them directly.
    const pos = f.indexesOf('a');
    for (const p of pos.slice(1)) f.counters.increment(p);
    const before = f.toBytes();
    expect(f.has('a')).toBe(false);
    expect(f.remove('a')).toBe(false);
    expectBytes(f.toBytes(), before);
  });

  it('count() is never below min(occurrences, 15)', () => {
    const f = CountingBloomFilter.create({ capacity: 2000, fpp: 0.01 });
    const all = keys('c', 2000);
    for (const [i, k] of all.entries()) for (let j = 0; j <= i % 4; j++) f.add(k);
    for (const [i, k] of all.entries()) expect(f.count(k)).toBeGreaterThanOrEqual((i % 4) + 1);
  });

  it('saturates: a key added 20 times stays present after 20 removes (never a false negative)', () => {
    const f = CountingBloomFilter.create({ capacity: 100, fpp: 0.01 });
    for (let i = 0; i < 20; i++) f.add('hot');
    f.add('neighbour');
    expect(f.count('hot')).toBe(15);
    expect(f.saturatedCount()).toBeGreaterThanOrEqual(f.hashes - 1);
    for (let i = 0; i < 20; i++) expect(f.remove('hot')).toBe(true);
    expect(f.has('hot')).toBe(true); // stale positive, the documented price
    expect(f.has('neighbour')).toBe(true);
  });

  it('shows the hazard: removing a never-added false positive can create false negatives', () => {
    const f = CountingBloomFilter.create({ capacity: 2000, fpp: 0.05 });
    const added = keys('in', 2000);
    for (const k of added) f.add(k);
    const addedSet = new Set(added);
    // A never-added key that answers true and shares a counter of 1 with some added key.
    let ghost: string | undefined;
    for (const k of keys('ghost', 100_000)) {
      if (f.has(k) && f.indexesOf(k).some((p) => f.counters.get(p) === 1)) {
        ghost = k;
        break;
      }
    }
    expect(ghost).toBeDefined();
    // safeRemove asks the caller's record and refuses: nothing changes.
    const before = f.toBytes();
    expect(f.safeRemove(ghost!, addedSet)).toBe(false);
    expect(f.safeRemove(ghost!, (k) => addedSet.has(k as string))).toBe(false);
    expectBytes(f.toBytes(), before);
    // remove cannot tell it from a real key: it succeeds, and some added key now answers false.
    const g = CountingBloomFilter.fromBytes(before);
    expect(g.remove(ghost!)).toBe(true);
    const lost = added.filter((k) => !g.has(k));
    expect(lost.length).toBeGreaterThan(0);
  });

  it('safeRemove removes keys its source holds, and checks the source', () => {
    const f = CountingBloomFilter.create({ capacity: 100, fpp: 0.01 });
    const record = new Set(['a', 'b']);
    f.add('a');
    f.add('b');
    expect(f.safeRemove('a', record)).toBe(true);
    record.delete('a');
    expect(f.has('a')).toBe(false);
    expect(f.has('b')).toBe(true);
    expect(f.safeRemove('a', record)).toBe(false);
    expect(f.safeRemove('b', { has: (k) => k === 'b' })).toBe(true);
    // The source says yes but the counters say no: the two disagree, nothing is removed.
    expect(f.safeRemove('zzz', () => true)).toBe(false);
    expect(() => f.safeRemove('b', null as never)).toThrow(TypeError);
    expect(() => f.safeRemove('b', 'set' as never)).toThrow(/source must be a Set/);
    expect(() => f.safeRemove('b', (() => 1) as never)).toThrow(/must answer a boolean/);
  });

  it('toBloomFilter() takes a quarter of the bytes and follows removals', () => {
    const f = CountingBloomFilter.create({ capacity: 10_000, fpp: 0.01 });
    const all = keys('k', 10_000);
    for (const k of all) f.add(k);
    for (const k of all.slice(0, 5000)) f.remove(k);
    const b = f.toBloomFilter();
    expect(b.bitSize / 8).toBe(f.byteLength / 4);
    expect(b.bitCount).toBe(f.nonZeroCount());
    expect(all.slice(5000).filter((k) => !b.has(k))).toEqual([]);
    const removedAndAbsent = [...all.slice(0, 5000), ...keys('z', 20_000)];
    expect(removedAndAbsent.filter((k) => b.has(k) !== f.has(k))).toEqual([]);
    expect(b.expectedFpp()).toBe(f.expectedFpp());
    expect(b.estimatedCount()).toBe(f.estimatedCount());
  });

  it('clears, clones and compares', () => {
    const f = CountingBloomFilter.create({ capacity: 100, fpp: 0.01, funnel: 'int' });
    f.add(1);
    f.add(2);
    const g = f.clone();
    expect(g.equals(f)).toBe(true);
    g.remove(1);
    expect(g.equals(f)).toBe(false);
    expect(f.has(1)).toBe(true);
    f.clear();
    expect(f.has(1) || f.has(2)).toBe(false);
    expect(f.equals('x')).toBe(false);
  });

  describe('native format', () => {
    it('stays frozen: a change to the hashing or the layout changes the CRC', () => {
      const f = CountingBloomFilter.create({ capacity: 100, fpp: 0.01 });
      for (let i = 0; i < 100; i++) f.add(`g${i}`);
      const bytes = f.toBytes();
      expect([bytes.length, trailer(bytes).toString(16)]).toEqual([524, '529cc0ba']);
    });

    const sample = (): CountingBloomFilter => {
      const f = CountingBloomFilter.create({ capacity: 500, fpp: 0.02, funnel: 'utf16' });
      for (const k of keys('s', 500)) f.add(k);
      for (let i = 0; i < 17; i++) f.add('hot');
      return f;
    };

    it('round-trips (also through fromBytes) with identical counters', () => {
      const f = sample();
      const bytes = f.toBytes();
      expect(bytes.length).toBe(24 + 16 + f.byteLength + 4);
      expect(bytes[6]).toBe(2); // filter type counting
      expect(bytes[7]).toBe(1); // MURMUR128_MITZ_64
      expect(bytes[8]).toBe(2); // utf16
      const g = CountingBloomFilter.fromBytes(bytes);
      expect(g.equals(f)).toBe(true);
      const h = fromBytes(bytes);
      expect(h).toBeInstanceOf(CountingBloomFilter);
      expect((h as CountingBloomFilter).equals(f)).toBe(true);
      // The decoded filter owns its counters.
      g.add('new');
      expect(CountingBloomFilter.fromBytes(bytes).equals(f)).toBe(true);
    });

    it('writes its parameters byte by byte as documented', () => {
      const bytes = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01 }).toBytes();
      expect(Array.from(bytes.subarray(24, 40))).toEqual([
        0x80, 0x25, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 4, 0, 0, 0,
      ]);
    });

    it('rejects forged parameters with a FormatError', () => {
      const bytes = sample().toBytes();
      const cases: [string, (v: DataView) => void, RegExp][] = [
        ['m not a multiple of 64', (v) => v.setUint32(24, 9601, true), /bad counter count 9601/],
        ['m = 0', (v) => v.setUint32(24, 0, true), /bad counter count 0/],
        ['m > 2^32', (v) => v.setUint32(28, 2, true), /bad counter count/],
        ['k = 0', (v) => v.setUint32(32, 0, true), /hash functions 0/],
        ['k = 256', (v) => v.setUint32(32, 256, true), /hash functions 256/],
        ['8-bit counters', (v) => v.setUint8(36, 8), /counter width 8/],
        ['reserved', (v) => v.setUint8(37, 1), /reserved/],
        ['hash scheme 0', (v) => v.setUint8(7, 0), /hash scheme id 0/],
        ['funnel 9', (v) => v.setUint8(8, 9), /funnel id 9/],
        ['payload size', (v) => v.setUint32(24, 64 * 1000, true), /payload has/],
      ];
      for (const [name, edit, message] of cases) {
        const forged = forge(bytes, edit);
        expect(() => CountingBloomFilter.fromBytes(forged), name).toThrow(FormatError);
        expect(() => CountingBloomFilter.fromBytes(forged), name).toThrow(message);
      }
      const flipped = bytes.slice();
      flipped[100]! ^= 1;
      expect(() => CountingBloomFilter.fromBytes(flipped)).toThrow(/checksum/);
      expect(() => CountingBloomFilter.fromBytes(bytes.subarray(0, 50))).toThrow(FormatError);
      const other = ScalableBloomFilter.create({ capacity: 10, fpp: 0.1 }).toBytes();
      expect(() => CountingBloomFilter.fromBytes(other)).toThrow(/expected filter type id 2/);
      expect(() => CountingBloomFilter.fromBytes('x' as never)).toThrow(TypeError);
    });
  });

  describe('bad input', () => {
    it('rejects bad create options naming the value', () => {
      expect(() => CountingBloomFilter.create(null as never)).toThrow(TypeError);
      expect(() => CountingBloomFilter.create({ capacity: 0, fpp: 0.1 })).toThrow(
        /capacity must be a positive safe integer, got 0/,
      );
      expect(() => CountingBloomFilter.create({ capacity: 10, fpp: 1.5 })).toThrow(
        /fpp must be in \(0, 1\), got 1.5/,
      );
      expect(() =>
        CountingBloomFilter.create({ capacity: 10, fpp: 0.1, funnel: 'utf8' as never }),
      ).toThrow(/funnel must be one of/);
      expect(() => CountingBloomFilter.create({ capacity: 1e9, fpp: 1e-6 })).toThrow(
        /counters, more than the maximum 4294967296/,
      );
    });

    it('rejects bad shapes and storage', () => {
      expect(() => new CountingBloomFilter({ counters: 0, hashes: 3 })).toThrow(/counters.*0/);
      expect(() => new CountingBloomFilter({ counters: 64, hashes: 256 })).toThrow(
        /hashes must be at most 255, got 256/,
      );
      expect(() => new CountingBloomFilter({ counters: 64, hashes: 1.5 })).toThrow(/hashes.*1.5/);
      expect(
        () => new CountingBloomFilter({ counters: 100, hashes: 3 }, new CounterArray(100)),
      ).toThrow(/CounterArray of 128 counters, got 100/);
      expect(() => new CountingBloomFilter(undefined as never)).toThrow(TypeError);
      expect(new CountingBloomFilter({ counters: 100, hashes: 3 }).counterSize).toBe(128);
    });

    it('rejects keys of the wrong kind in every keyed method', () => {
      const f = CountingBloomFilter.create({ capacity: 10, fpp: 0.1 });
      for (const call of [
        () => f.add(1 as never),
        () => f.has(1n as never),
        () => f.remove(new Uint8Array(1) as never),
        () => f.count(2 as never),
        () => f.safeRemove(3 as never, () => true),
        () => f.indexesOf(4 as never),
      ]) {
        expect(call).toThrow(TypeError);
      }
      const g = CountingBloomFilter.create({ capacity: 10, fpp: 0.1, funnel: 'int' });
      expect(() => g.add(2 ** 31)).toThrow(RangeError);
      expect(() => g.add('1' as never)).toThrow(TypeError);
    });
  });
});
