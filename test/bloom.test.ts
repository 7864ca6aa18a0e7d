/**
 * The classic BloomFilter's API: construction, add/has/addMany, union/intersect with Guava's
 * compatibility rule, estimators, clone/clear/equals, bit positions against Guava's vectors
 * (shared/REFERENCE.md §1.6), and the native and Guava serial forms with their error cases.
 */
import { describe, expect, it } from 'vitest';
import {
  BitArray,
  BloomFilter,
  estimateCount,
  expectedFpp,
  FormatError,
  type Funnel,
  fromBytes,
  IncompatibleFiltersError,
  type Key,
  SharedBitArray,
  type StrategyName,
} from '../src/index.js';

const keys = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}:${i}`);

/** A copy of the filter's words, to check that an operation changed nothing. */
const snapshot = (f: BloomFilter): Uint32Array => f.bits.data.slice();

describe('construction', () => {
  it('create sizes like Guava and defaults to the string funnel and MITZ_64', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    expect(f.bitSize).toBe(9600);
    expect(f.hashes).toBe(7);
    expect(f.funnel).toBe('string');
    expect(f.strategy).toBe('MURMUR128_MITZ_64');
    expect(f.bits).toBeInstanceOf(BitArray);
    expect(f.bitCount).toBe(0);
    expect(f.shape()).toEqual({
      bits: 9600,
      hashes: 7,
      funnel: 'string',
      strategy: 'MURMUR128_MITZ_64',
    });
  });

  it('new BloomFilter({ bits, hashes }) rounds bits up to a multiple of 64', () => {
    for (const [bits, size] of [
      [1, 64],
      [63, 64],
      [64, 64],
      [65, 128],
      [100, 128],
      [9585, 9600],
      [1 << 20, 1 << 20],
    ] as const) {
      const f = new BloomFilter({ bits, hashes: 3 });
      expect(f.bitSize).toBe(size);
      expect(f.bits.data.length).toBe(size / 32);
    }
    expect(new BloomFilter({ bits: 64, hashes: 255 }).hashes).toBe(255);
    expect(new BloomFilter({ bits: 64, hashes: 1, funnel: 'bytes' }).funnel).toBe('bytes');
  });

  it('shared: true stores the bits in a SharedArrayBuffer', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01, shared: true });
    expect(f.bits).toBeInstanceOf(SharedBitArray);
    expect(f.bits.data.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it('accepts existing storage of the right size and refuses the wrong size', () => {
    const storage = new BitArray(128);
    const f = new BloomFilter({ bits: 100, hashes: 2 }, storage);
    expect(f.bits).toBe(storage);
    f.add('x');
    expect(storage.bitCount()).toBeGreaterThan(0);
    expect(() => new BloomFilter({ bits: 200, hashes: 2 }, storage)).toThrow(RangeError);
    expect(() => new BloomFilter({ bits: 200, hashes: 2 }, storage)).toThrow(/128.*256/);
  });
});

describe('add, has, addMany', () => {
  it('add returns true iff a bit changed (Guava put), has never gives a false negative', () => {
    const f = BloomFilter.create({ capacity: 5000, fpp: 0.01 });
    const wrong: string[] = [];
    for (const k of keys('k', 5000)) {
      const before = f.has(k);
      const count = f.bitCount;
      const first = f.add(k);
      const second = f.add(k);
      const grew = f.bitCount > count;
      if (first === before || second || grew === before) {
        wrong.push(`${k}: has ${before}, add ${first} then ${second}, bits grew ${grew}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(keys('k', 5000).filter((k) => !f.has(k))).toEqual([]);
  });

  it('an empty filter contains nothing', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(keys('absent', 1000).filter((k) => f.has(k))).toEqual([]);
  });

  it('addMany takes any iterable and counts the keys that were new', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(f.addMany(['a', 'b', 'c'])).toBe(3);
    expect(f.addMany(new Set(['a', 'b']))).toBe(0);
    function* gen(): Generator<string> {
      yield 'a';
      yield 'd';
    }
    expect(f.addMany(gen())).toBeGreaterThan(0);
    expect(f.addMany([])).toBe(0);
    for (const k of ['a', 'b', 'c', 'd']) expect(f.has(k)).toBe(true);
    const g = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    for (const k of ['a', 'b', 'c', 'd']) g.add(k);
    expect(f.equals(g)).toBe(true);
  });

  it('a long key and the same value as number or bigint are the same key', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01, funnel: 'long' });
    expect(f.add(-7)).toBe(true);
    expect(f.add(-7n)).toBe(false);
    expect(f.has(2n ** 53n - 1n)).toBe(false);
    f.add(Number.MAX_SAFE_INTEGER);
    expect(f.has(2n ** 53n - 1n)).toBe(true);
  });

  it('-0 and 0 are the same int key', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01, funnel: 'int' });
    f.add(0);
    expect(f.has(-0)).toBe(true);
    expect(f.add(-0)).toBe(false);
  });

  it('a lone surrogate hashes as "?" in the string funnel but not in utf16', () => {
    const s = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    s.add('a\ud800b');
    expect(s.has('a?b')).toBe(true);
    expect(s.indexesOf('\udc00')).toEqual(s.indexesOf('?'));
    const u = BloomFilter.create({ capacity: 100, fpp: 0.01, funnel: 'utf16' });
    u.add('a\ud800b');
    expect(u.has('a?b')).toBe(false);
  });
});

describe('every storage path sets the same bits', () => {
  /** Keys of each funnel, including ones longer than any fixed scratch area (64 KiB and up). */
  const keysFor = (funnel: Funnel): Key[] => {
    switch (funnel) {
      case 'string':
      case 'utf16':
        return [
          ...keys('s', 300),
          '',
          '😀',
          'x\ud800',
          'a'.repeat(70_000),
          '日'.repeat(30_000),
          'é'.repeat(200_000),
          'short-after-long',
        ];
      case 'int':
        return Array.from({ length: 300 }, (_, i) => i * 7919 - 1_000_000);
      case 'long':
        return [
          ...Array.from({ length: 300 }, (_, i) => BigInt(i) * 0x1234567891n),
          -1,
          2n ** 63n - 1n,
        ];
      case 'bytes':
        return [
          ...Array.from({ length: 300 }, (_, i) => Uint8Array.of(i & 255, i >> 8, 1)),
          new Uint8Array(0),
          new Uint8Array(65_536).fill(3),
          new Uint8Array(1_000_000).fill(9),
          Uint8Array.of(42),
        ];
    }
  };

  it.each(['string', 'utf16', 'int', 'long', 'bytes'] as const)(
    '%s: default, shared and explicit storage agree on add, has and bits',
    (funnel) => {
      const shape = { capacity: 2000, fpp: 0.01, funnel };
      const a = BloomFilter.create(shape);
      const b = BloomFilter.create({ ...shape, shared: true });
      const c = new BloomFilter(a.shape(), new BitArray(a.bitSize));
      const ks = keysFor(funnel);
      // Disagreements are collected and checked once (an expect per key costs more than the
      // filters' work here); each names its key.
      const differ: string[] = [];
      for (const [i, k] of ks.entries()) {
        const r = a.add(k);
        if (b.add(k) !== r || c.add(k) !== r || a.add(k)) differ.push(`add #${i}`);
      }
      expect(differ).toEqual([]);
      expect(a.equals(b)).toBe(true);
      expect(a.equals(c)).toBe(true);
      expect(a.bitCount).toBe(b.bitCount);
      expect(a.bitCount).toBe(c.bitCount);
      for (const [i, k] of ks.entries()) {
        if (!a.has(k) || !b.has(k)) differ.push(`has #${i}`);
        for (const bit of a.indexesOf(k)) if (!a.bits.get(bit)) differ.push(`bit ${bit} of #${i}`);
      }
      // Absent keys: same answers on every path.
      const absent = funnel === 'string' || funnel === 'utf16' ? keys('absent', 2000) : [];
      for (const k of absent) if (a.has(k) !== b.has(k)) differ.push(`absent ${k}`);
      expect(differ).toEqual([]);
    },
  );
});

describe('bit positions: Guava vectors (REFERENCE.md §1.6)', () => {
  const vectors: [StrategyName, string, number[]][] = [
    ['MURMUR128_MITZ_64', 'a', [6793, 6883, 8765, 1047, 2929, 4811, 4901]],
    ['MURMUR128_MITZ_64', 'b', [2670, 7127, 1984, 6441, 1298, 5755, 612]],
    ['MURMUR128_MITZ_32', 'a', [3950, 8403, 6343, 2205, 2941, 5607, 9139]],
    ['MURMUR128_MITZ_32', 'b', [1349, 6371, 9203, 8117, 7457, 263, 5711]],
  ];

  it.each(vectors)('%s %s → %j', (strategy, key, expected) => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01, strategy });
    expect(f.indexesOf(key)).toEqual(expected);
    // add sets exactly those bits, and has reads exactly them.
    expect(f.add(key)).toBe(true);
    expect(f.bitCount).toBe(new Set(expected).size);
    for (const i of expected) expect(f.bits.get(i)).toBe(true);
    expect(f.has(key)).toBe(true);
    // Clearing any one of them makes has false.
    for (const i of expected) {
      const g = f.clone();
      g.bits.data[(i / 32) | 0]! &= ~(1 << (i & 31));
      expect(g.has(key)).toBe(false);
    }
  });

  it('the Guava bytes of a filter holding "a" have exactly those bits set', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    f.add('a');
    const bytes = f.toGuava();
    const set: number[] = [];
    for (let i = 0; i < 9600; i++) {
      const byte = 6 + 8 * (i >>> 6) + 7 - ((i & 63) >>> 3);
      if (bytes[byte]! & (1 << (i & 7))) set.push(i);
    }
    expect(set).toEqual([1047, 2929, 4811, 4901, 6793, 6883, 8765]);
  });

  it('MITZ_32 indexes stay below the bit size and below 2^31; bit 31 of a word works', () => {
    const f = new BloomFilter({ bits: 64 * 1024, hashes: 9, strategy: 'MURMUR128_MITZ_32' });
    let sawBit31 = false;
    const wrong: string[] = [];
    for (const k of keys('m32', 2000)) {
      const idx = f.indexesOf(k);
      for (const i of idx) {
        if (!(i >= 0 && i < f.bitSize)) wrong.push(`${k}: index ${i}`);
        if ((i & 31) === 31) sawBit31 = true;
      }
      f.add(k);
      if (!f.has(k)) wrong.push(`${k}: absent after add`);
    }
    expect(wrong).toEqual([]);
    expect(sawBit31).toBe(true);
  });
});

describe('union, intersect, isCompatible', () => {
  const make = (
    o: Partial<{ capacity: number; fpp: number; funnel: Funnel; strategy: StrategyName }> = {},
  ) => BloomFilter.create({ capacity: 1000, fpp: 0.01, ...o });

  it('union ORs in place, returns this, and equals a filter built from both key sets', () => {
    const a = make();
    const b = make();
    const both = make();
    for (const k of keys('a', 400)) {
      a.add(k);
      both.add(k);
    }
    for (const k of keys('b', 400)) {
      b.add(k);
      both.add(k);
    }
    const bBefore = snapshot(b);
    expect(a.union(b)).toBe(a);
    expect(a.equals(both)).toBe(true);
    expect(a.bitCount).toBe(both.bitCount);
    expect(b.bits.data).toEqual(bBefore);
    for (const k of [...keys('a', 400), ...keys('b', 400)]) expect(a.has(k)).toBe(true);
  });

  it('intersect ANDs in place: keys in both survive, the bits are the AND', () => {
    const a = make();
    const b = make();
    for (const k of keys('common', 200)) {
      a.add(k);
      b.add(k);
    }
    for (const k of keys('onlyA', 300)) a.add(k);
    for (const k of keys('onlyB', 300)) b.add(k);
    const expected = a.bits.data.map((w, i) => w & b.bits.data[i]!);
    expect(a.intersect(b)).toBe(a);
    expect(a.bits.data).toEqual(expected);
    for (const k of keys('common', 200)) expect(a.has(k)).toBe(true);
    let fp = 0;
    for (const k of keys('onlyA', 300)) if (a.has(k)) fp++;
    expect(fp).toBeLessThan(100);
    expect(a.bitCount).toBe(expected.reduce((n, w) => n + popcount(w), 0));
  });

  it('isCompatible follows Guava: (1000, 0.01) and (1001, 0.01) both have 9600 bits and k = 7', () => {
    const a = make();
    const b = make({ capacity: 1001 });
    expect(a.isCompatible(b)).toBe(true);
    b.add('x');
    a.union(b);
    expect(a.has('x')).toBe(true);
    expect(a.isCompatible(a)).toBe(false);
    expect(a.isCompatible(make({ capacity: 2000 }))).toBe(false);
    expect(a.isCompatible(make({ funnel: 'int' }))).toBe(false);
    expect(a.isCompatible(make({ strategy: 'MURMUR128_MITZ_32' }))).toBe(false);
    expect(a.isCompatible(new BloomFilter({ bits: 9600, hashes: 6 }))).toBe(false);
    expect(a.isCompatible(new BloomFilter({ bits: 9600, hashes: 7 }))).toBe(true);
    expect(a.isCompatible({} as BloomFilter)).toBe(false);
  });

  const mismatches: [string, () => BloomFilter, RegExp][] = [
    ['k', () => new BloomFilter({ bits: 9600, hashes: 6 }), /hash functions \(7 != 6\)/],
    ['size', () => make({ capacity: 2000 }), /size.*\(9600 != 19200\)/],
    [
      'strategy',
      () => make({ strategy: 'MURMUR128_MITZ_32' }),
      /strategies \(MURMUR128_MITZ_64 != MURMUR128_MITZ_32\)/,
    ],
    ['funnel', () => make({ funnel: 'int' }), /funnels \(string != int\)/],
  ];

  for (const op of ['union', 'intersect'] as const) {
    it.each(mismatches)(
      `${op} with a different %s is an IncompatibleFiltersError naming both values`,
      (_w, other, message) => {
        const a = make();
        a.addMany(keys('a', 100));
        const before = snapshot(a);
        const o = other();
        o.add(o.funnel === 'int' ? 12345 : 'zzz');
        expect(() => a[op](o)).toThrow(IncompatibleFiltersError);
        expect(() => a[op](o)).toThrow(message);
        expect(a.bits.data).toEqual(before);
      },
    );

    it(`${op} with itself is refused`, () => {
      const a = make();
      a.add('x');
      expect(() => a[op](a)).toThrow(IncompatibleFiltersError);
      expect(() => a[op](a)).toThrow(/itself/);
    });

    it(`${op} with a non-filter is a TypeError`, () => {
      const a = make();
      for (const bad of [null, undefined, {}, 'filter', a.bits]) {
        expect(() => a[op](bad as unknown as BloomFilter)).toThrow(TypeError);
      }
    });
  }

  it('IncompatibleFiltersError is exported, is a TypeError, and has its name', () => {
    try {
      make().union(make({ funnel: 'bytes' }));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(IncompatibleFiltersError);
      expect(e).toBeInstanceOf(TypeError);
      expect((e as Error).name).toBe('IncompatibleFiltersError');
    }
  });
});

function popcount(v: number): number {
  let n = 0;
  for (let x = v >>> 0; x !== 0; x >>>= 1) n += x & 1;
  return n;
}

describe('estimators', () => {
  it('estimatedCount and expectedFpp follow the formulas on the live bit count', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    expect(f.estimatedCount()).toBe(0);
    expect(f.expectedFpp()).toBe(0);
    for (const k of keys('k', 700)) f.add(k);
    expect(f.estimatedCount()).toBe(estimateCount(f.bitCount, 9600, 7));
    expect(f.expectedFpp()).toBe(expectedFpp(f.bitCount, 9600, 7));
    expect(Math.abs(f.estimatedCount() - 700)).toBeLessThan(35);
  });

  it('bitCount is maintained through add, union, intersect, clear and fromGuava', () => {
    const recount = (f: BloomFilter): number =>
      Array.from(f.bits.data).reduce((n, w) => n + popcount(w), 0);
    const a = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    const b = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    a.addMany(keys('a', 300));
    b.addMany(keys('b', 300));
    expect(a.bitCount).toBe(recount(a));
    a.union(b);
    expect(a.bitCount).toBe(recount(a));
    a.intersect(b);
    expect(a.bitCount).toBe(recount(a));
    expect(BloomFilter.fromGuava(a.toGuava()).bitCount).toBe(recount(a));
    a.clear();
    expect(a.bitCount).toBe(0);
  });
});

describe('clone, clear, equals', () => {
  it('clone is equal and independent in both directions', () => {
    for (const shared of [false, true]) {
      const f = BloomFilter.create({ capacity: 1000, fpp: 0.01, shared });
      f.addMany(keys('k', 100));
      const c = f.clone();
      expect(c === f, 'a new object').toBe(false);
      expect(c.equals(f)).toBe(true);
      expect(c.bits).toBeInstanceOf(shared ? SharedBitArray : BitArray);
      expect(c.bits.data.buffer === f.bits.data.buffer, 'its own buffer').toBe(false);
      c.add('only-in-clone');
      expect(f.has('only-in-clone')).toBe(false);
      f.add('only-in-original');
      expect(c.has('only-in-original')).toBe(false);
      expect(c.equals(f)).toBe(false);
      expect(c.shape()).toEqual(f.shape());
    }
  });

  it('clear forgets every key and the filter is usable again', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    f.addMany(keys('k', 1000));
    f.clear();
    expect(f.bitCount).toBe(0);
    expect(f.estimatedCount()).toBe(0);
    for (const k of keys('k', 1000)) expect(f.has(k)).toBe(false);
    expect(f.add('k:1')).toBe(true);
    expect(f.has('k:1')).toBe(true);
  });

  it('equals compares k, size, strategy, funnel and bits (Guava equals)', () => {
    const a = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    const b = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    expect(a.equals(a)).toBe(true);
    expect(a.equals(b)).toBe(true);
    a.add('x');
    expect(a.equals(b)).toBe(false);
    b.add('x');
    expect(a.equals(b)).toBe(true);
    // Same bits, different metadata.
    const other = (shape: Partial<{ funnel: Funnel; strategy: StrategyName; hashes: number }>) => {
      const f = new BloomFilter({ bits: 9600, hashes: 7, ...shape });
      f.bits.data.set(a.bits.data);
      f.bits.recount();
      return f;
    };
    expect(a.equals(other({}))).toBe(true);
    expect(a.equals(other({ funnel: 'utf16' }))).toBe(false);
    expect(a.equals(other({ strategy: 'MURMUR128_MITZ_32' }))).toBe(false);
    expect(a.equals(other({ hashes: 6 }))).toBe(false);
    expect(a.equals(null)).toBe(false);
    expect(a.equals(a.toGuava())).toBe(false);
    // Plain and shared storage with the same bits are equal.
    const s = BloomFilter.create({ capacity: 1000, fpp: 0.01, shared: true });
    s.add('x');
    expect(a.equals(s)).toBe(true);
  });
});

// ------------------------------------------------------------------ serialization

const FUNNEL_KEYS: Record<Funnel, Key[]> = {
  string: ['', 'a', '😀', '日本', 'x\ud800'],
  utf16: ['', 'a', '😀', '日本', 'x\ud800'],
  int: [0, -1, 2147483647, -2147483648],
  long: [0, -1n, 2n ** 63n - 1n, -(2n ** 63n), Number.MAX_SAFE_INTEGER],
  bytes: [new Uint8Array(0), Uint8Array.of(1, 2, 3), new Uint8Array(100).fill(7)],
};

describe('native format round trip', () => {
  const combos: [Funnel, StrategyName, boolean][] = [];
  for (const funnel of Object.keys(FUNNEL_KEYS) as Funnel[]) {
    for (const strategy of ['MURMUR128_MITZ_64', 'MURMUR128_MITZ_32'] as const) {
      combos.push([funnel, strategy, funnel === 'string']);
    }
  }

  it.each(combos)('%s / %s (shared source: %s)', (funnel, strategy, shared) => {
    const f = BloomFilter.create({ capacity: 500, fpp: 0.02, funnel, strategy, shared });
    f.addMany(FUNNEL_KEYS[funnel]);
    const bytes = f.toBytes();
    const g = BloomFilter.fromBytes(bytes);
    expect(g.equals(f)).toBe(true);
    expect(g.funnel).toBe(funnel);
    expect(g.strategy).toBe(strategy);
    expect(g.bitCount).toBe(f.bitCount);
    for (const k of FUNNEL_KEYS[funnel]) expect(g.has(k)).toBe(true);
    expect(Array.from(g.toBytes())).toEqual(Array.from(bytes));
    // The top-level reader dispatches on the type id to the same decoder.
    const any = fromBytes(bytes);
    expect(any).toBeInstanceOf(BloomFilter);
    expect((any as BloomFilter).equals(f)).toBe(true);
  });

  it('reads from a Uint8Array view at an offset', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    f.add('x');
    const bytes = f.toBytes();
    const big = new Uint8Array(bytes.length + 13);
    big.set(bytes, 13);
    expect(BloomFilter.fromBytes(big.subarray(13)).equals(f)).toBe(true);
    expect(BloomFilter.fromGuava(offsetCopy(f.toGuava(), 5)).equals(f)).toBe(true);
  });

  it('truncated native bytes are a FormatError at every length', () => {
    const f = BloomFilter.create({ capacity: 10, fpp: 0.1 });
    f.add('x');
    const bytes = f.toBytes();
    for (let len = 0; len < bytes.length; len++) {
      expect(() => BloomFilter.fromBytes(bytes.slice(0, len)), `length ${len}`).toThrow(
        FormatError,
      );
      expect(() => fromBytes(bytes.slice(0, len)), `length ${len}`).toThrow(FormatError);
    }
  });

  it('a flipped payload bit is a FormatError (checksum), never a silently different filter', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    f.addMany(keys('k', 50));
    const bytes = f.toBytes();
    for (const at of [0, 10, 30, bytes.length - 30, bytes.length - 1]) {
      const bad = bytes.slice();
      bad[at]! ^= 0x10;
      expect(() => BloomFilter.fromBytes(bad), `byte ${at}`).toThrow(FormatError);
    }
  });
});

function offsetCopy(bytes: Uint8Array, offset: number): Uint8Array {
  const big = new Uint8Array(bytes.length + offset);
  big.set(bytes, offset);
  return big.subarray(offset);
}

describe('Guava format: toGuava / fromGuava', () => {
  it('round-trips every funnel and strategy, bytes identical', () => {
    for (const funnel of Object.keys(FUNNEL_KEYS) as Funnel[]) {
      for (const strategy of ['MURMUR128_MITZ_64', 'MURMUR128_MITZ_32'] as const) {
        const f = BloomFilter.create({ capacity: 300, fpp: 0.01, funnel, strategy });
        f.addMany(FUNNEL_KEYS[funnel]);
        const bytes = f.toGuava();
        expect(bytes.length).toBe(6 + 8 * (f.bitSize / 64));
        expect(bytes[0]).toBe(strategy === 'MURMUR128_MITZ_64' ? 1 : 0);
        expect(bytes[1]).toBe(f.hashes);
        const g = BloomFilter.fromGuava(bytes, { funnel });
        expect(g.equals(f)).toBe(true);
        expect(g.bitCount).toBe(f.bitCount);
        expect(Array.from(g.toGuava())).toEqual(Array.from(bytes));
      }
    }
  });

  it('defaults to the string funnel, and shared: true gives shared storage', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    f.add('x');
    const g = BloomFilter.fromGuava(f.toGuava());
    expect(g.funnel).toBe('string');
    expect(g.has('x')).toBe(true);
    const s = BloomFilter.fromGuava(f.toGuava(), { shared: true });
    expect(s.bits).toBeInstanceOf(SharedBitArray);
    expect(s.equals(f)).toBe(true);
  });

  it('takes k and the word count from the header, never from a recomputation', () => {
    // Guava master would compute k = 7 for (1, 0.01); 31.1 wrote 6. A header with k = 9 and
    // 3 words is simply read as such.
    const bytes = new Uint8Array(6 + 24);
    bytes.set([1, 9, 0, 0, 0, 3]);
    bytes[6 + 7] = 0b101;
    const f = BloomFilter.fromGuava(bytes);
    expect(f.hashes).toBe(9);
    expect(f.bitSize).toBe(192);
    expect(f.bitCount).toBe(2);
    expect(f.bits.get(0)).toBe(true);
    expect(f.bits.get(2)).toBe(true);
    // The first int64 is word 0 with its least significant byte last.
    bytes[6] = 0x80;
    expect(BloomFilter.fromGuava(bytes).bits.get(63)).toBe(true);
  });

  describe('bad bytes are a FormatError naming the field and the value', () => {
    const good = (() => {
      const f = BloomFilter.create({ capacity: 100, fpp: 0.03 });
      f.addMany(['a', 'b', 'c']);
      return f.toGuava(); // 01 05 00 00 00 0c + 96 bytes
    })();
    const patched = (offset: number, ...values: number[]): Uint8Array => {
      const b = good.slice();
      b.set(values, offset);
      return b;
    };

    it.each([
      ['strategy ordinal 2', patched(0, 2), /ordinal.*2/],
      ['strategy ordinal -1', patched(0, 0xff), /ordinal.*-1/],
      ['strategy ordinal 127', patched(0, 0x7f), /ordinal.*127/],
      ['k = 0', patched(1, 0), /numHashFunctions.*0/],
      ['N = 0', patched(2, 0, 0, 0, 0), /data ?length.*0/i],
      ['N = -1', patched(2, 0xff, 0xff, 0xff, 0xff), /data ?length.*-1/i],
      ['N = -2^31', patched(2, 0x80, 0, 0, 0), /data ?length.*-2147483648/i],
      ['N = 2^31 - 1 with 96 bytes of data', patched(2, 0x7f, 0xff, 0xff, 0xff), /2147483647/],
      ['N = 13 with 12 words of data', patched(2, 0, 0, 0, 13), /truncated.*110.*102/],
    ] as [string, Uint8Array, RegExp][])('%s', (_label, bytes, message) => {
      expect(() => BloomFilter.fromGuava(bytes)).toThrow(FormatError);
      expect(() => BloomFilter.fromGuava(bytes)).toThrow(message);
    });

    it('a buffer truncated at any length below 6 + 8N is a FormatError naming the lengths', () => {
      for (let len = 0; len < good.length; len++) {
        const cut = good.slice(0, len);
        let error: unknown;
        try {
          BloomFilter.fromGuava(cut);
        } catch (e) {
          error = e;
        }
        expect(error, `length ${len}`).toBeInstanceOf(FormatError);
        const msg = (error as Error).message;
        expect(msg, `length ${len}`).toMatch(/truncated/);
        expect(msg, `length ${len}`).toContain(`got ${len}`);
      }
    });

    it('trailing bytes are ignored, as by Guava readFrom', () => {
      const longer = new Uint8Array(good.length + 17).fill(0xee);
      longer.set(good);
      const f = BloomFilter.fromGuava(longer);
      expect(Array.from(f.toGuava())).toEqual(Array.from(good));
      for (const k of ['a', 'b', 'c']) expect(f.has(k)).toBe(true);
    });

    it('FormatError is exported and has its name', () => {
      try {
        BloomFilter.fromGuava(new Uint8Array(3));
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(FormatError);
        expect(e).toBeInstanceOf(Error);
        expect((e as Error).name).toBe('FormatError');
      }
    });
  });
});
