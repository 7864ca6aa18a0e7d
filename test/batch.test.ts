/**
 * addBatch / hasBatch against add / has key by key, for every in-memory filter type and every
 * funnel it takes: the same count of new keys, the same bits afterwards (native bytes; Guava
 * bytes for the classic filter), and the same answers for present and absent keys, with keys
 * that are non-ASCII, hold lone surrogates, repeat within the batch, or are longer than a chunk.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { hashKeyInto } from '../src/hash/hasher.js';
import type { Funnel, Key } from '../src/hash/keys.js';
import {
  BitArray,
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  type PackedKeys,
  packKeys,
  ScalableBloomFilter,
  SplitBlockBloomFilter,
} from '../src/index.js';
import { ShardedBloomFilter } from '../src/redis.js';
import { expectBytes } from './support/bytes.js';
import { collectKernels } from './support/gc.js';
import { mixedKeys } from './support/mixed-keys.js';
import { packedSequence } from './support/packed-keys.js';

interface AnyFilter {
  add(key: Key): boolean;
  has(key: Key): boolean;
  addBatch(batch: { bytes: Uint8Array; offsets: Uint32Array }, out?: Uint8Array): number;
  hasBatch(batch: { bytes: Uint8Array; offsets: Uint32Array }, out?: Uint8Array): Uint8Array;
  toBytes(): Uint8Array;
}

/** The maintained popcount of a bit filter, or -1 for a type without one. */
function bitCountOf(filter: AnyFilter): number {
  return 'bitCount' in filter ? (filter as { bitCount: number }).bitCount : -1;
}

const FUNNELS: Funnel[] = ['string', 'utf16', 'int', 'long', 'bytes'];

/** A funnel's keys and their packed batches. */
interface KeySets {
  present: Key[];
  absent: Key[];
  /**
   * The present keys with repeats inside the batch (in the same chunk and in a later one): the
   * second occurrence must not count as new.
   */
  added: Key[];
  /** The present keys, then the absent ones. */
  all: Key[];
  packedAdded: PackedKeys;
  packedAll: PackedKeys;
  /** Copies of the packed bytes, to check that the batch paths only read their batch. */
  pristine: Uint8Array[];
}

/**
 * The keys of a funnel, packed once for the file (packing the long mixed strings three times in
 * every test was about a third of its cost); the tests only read them, and check that the batch
 * paths left the packed bytes as they were. 'utf16' takes the strings of 'string' (mixedKeys
 * gives both the same strings).
 */
const keySets = new Map<Funnel, KeySets>();
function keysOf(funnel: Funnel): KeySets {
  let sets = keySets.get(funnel);
  if (sets === undefined) {
    const text = funnel === 'utf16' ? keySets.get('string') : undefined;
    const present = text?.present ?? mixedKeys(funnel, 3000, 1);
    const absent = text?.absent ?? mixedKeys(funnel, 3000, 2);
    const added = [...present.slice(0, 5), ...present, ...present.slice(0, 200)];
    const all = [...present, ...absent];
    const packedAdded = packKeys(funnel, added);
    const packedAll = packKeys(funnel, all);
    const pristine = [packedAdded, packedAll].flatMap((p) => [
      p.bytes.slice(),
      new Uint8Array(p.offsets.slice().buffer),
    ]);
    sets = { present, absent, added, all, packedAdded, packedAll, pristine };
    keySets.set(funnel, sets);
  }
  return sets;
}

/** The packed batches of `sets` hold the bytes and offsets they were packed with. */
function expectUnchanged(sets: KeySets): void {
  const now = [sets.packedAdded, sets.packedAll].flatMap((p) => [
    p.bytes,
    new Uint8Array(p.offsets.buffer, p.offsets.byteOffset, p.offsets.byteLength),
  ]);
  for (let i = 0; i < now.length; i++) {
    expect(Buffer.compare(now[i]!, sets.pristine[i]!), 'the packed keys after the test').toBe(0);
  }
}

/** Each case: a name, the funnels it takes, and a factory for an empty filter. */
const CASES: [string, Funnel[], (funnel: Funnel) => AnyFilter][] = [
  [
    'BloomFilter (bits in a wasm kernel)',
    FUNNELS,
    (funnel) => BloomFilter.create({ capacity: 6000, fpp: 0.01, funnel }),
  ],
  [
    'BloomFilter (shared memory)',
    FUNNELS,
    (funnel) => BloomFilter.create({ capacity: 6000, fpp: 0.01, funnel, shared: true }),
  ],
  [
    // Over GROUPED_TEST_BYTES (test/grouped-test.test.ts): hasBatch loads a group's probe words
    // before it tests any.
    'BloomFilter (9.6 MB: grouped batch tests)',
    ['string', 'long'],
    (funnel) => BloomFilter.create({ capacity: 8_000_000, fpp: 0.01, funnel }),
  ],
  [
    'BloomFilter (small: general path)',
    ['string'],
    (funnel) => BloomFilter.create({ capacity: 2500, fpp: 0.01, funnel }),
  ],
  [
    'BloomFilter (MURMUR128_MITZ_32)',
    ['string'],
    (funnel) =>
      BloomFilter.create({ capacity: 6000, fpp: 0.01, funnel, strategy: 'MURMUR128_MITZ_32' }),
  ],
  [
    'BlockedBloomFilter',
    FUNNELS,
    (funnel) => BlockedBloomFilter.create({ capacity: 6000, fpp: 0.01, funnel }),
  ],
  [
    'BlockedBloomFilter (small: general path)',
    ['string'],
    (funnel) => BlockedBloomFilter.create({ capacity: 2500, fpp: 0.01, funnel }),
  ],
  [
    'BlockedBloomFilter (shared memory)',
    ['string'],
    (funnel) => BlockedBloomFilter.create({ capacity: 6000, fpp: 0.01, funnel, shared: true }),
  ],
  [
    'SplitBlockBloomFilter (BYTE_ARRAY)',
    ['string'],
    () => SplitBlockBloomFilter.create({ capacity: 6000, fpp: 0.01 }),
  ],
  [
    'SplitBlockBloomFilter (small: general path)',
    ['string'],
    () => SplitBlockBloomFilter.create({ capacity: 2000, fpp: 0.01 }),
  ],
  [
    'SplitBlockBloomFilter (INT64)',
    ['long'],
    () => SplitBlockBloomFilter.create({ capacity: 6000, fpp: 0.01, type: 'INT64' }),
  ],
  [
    'CountingBloomFilter',
    FUNNELS,
    (funnel) => CountingBloomFilter.create({ capacity: 6000, fpp: 0.01, funnel }),
  ],
  [
    'ScalableBloomFilter',
    ['string', 'long'],
    (funnel) => ScalableBloomFilter.create({ capacity: 500, fpp: 0.01, funnel }),
  ],
  [
    'CuckooFilter',
    ['string', 'int'],
    (funnel) => CuckooFilter.create({ capacity: 8000, fpp: 0.01, funnel }),
  ],
  [
    // 8 shards of 3,648 bits: keys spread over every shard.
    'ShardedBloomFilter',
    FUNNELS,
    (funnel) => ShardedBloomFilter.create({ capacity: 3000, fpp: 0.01, funnel, shardBits: 4096 }),
  ],
];

describe('addBatch / hasBatch equal add / has key by key', () => {
  for (const [name, funnels, make] of CASES) {
    for (const funnel of funnels) {
      it(`${name}, funnel '${funnel}'`, () => {
        const sets = keysOf(funnel);
        const { present, added, all } = sets;
        const batched = make(funnel);
        const oneByOne = make(funnel);
        const newInBatch = batched.addBatch(sets.packedAdded);
        let newOneByOne = 0;
        const expectedFlags = new Uint8Array(added.length + 3).fill(9);
        for (let i = 0; i < added.length; i++) {
          const fresh = oneByOne.add(added[i]!);
          if (fresh) newOneByOne++;
          expectedFlags[i] = fresh ? 1 : 0;
        }
        expect(newInBatch).toBe(newOneByOne);
        expect(newInBatch).toBeLessThanOrEqual(present.length);
        expectBytes(batched.toBytes(), oneByOne.toBytes(), 'batch vs one by one');
        // The popcount a bit filter maintains (behind estimatedCount) follows the batch's bits.
        expect(bitCountOf(batched)).toBe(bitCountOf(oneByOne));
        // With `out`: key i's own answer, 1 if new, 0 if not (repeats in the batch: 0).
        const flagged = make(funnel);
        const flags = new Uint8Array(added.length + 3).fill(9);
        expect(flagged.addBatch(sets.packedAdded, flags)).toBe(newOneByOne);
        expectBytes(flags, expectedFlags, 'add flags');
        expect(flags.subarray(5, 10).every((v) => v === 0)).toBe(true);
        expect(flags.subarray(5 + present.length, added.length).every((v) => v === 0)).toBe(true);
        expectBytes(flagged.toBytes(), oneByOne.toBytes(), 'flagged batch vs one by one');
        if (batched instanceof BloomFilter) {
          expectBytes(batched.toGuava(), (oneByOne as BloomFilter).toGuava(), 'Guava bytes');
        }
        const out = new Uint8Array(all.length + 5).fill(9);
        const found = batched.hasBatch(sets.packedAll, out);
        expect(found).toBe(out);
        const expected = new Uint8Array(all.length + 5).fill(9);
        for (let i = 0; i < all.length; i++) expected[i] = oneByOne.has(all[i]!) ? 1 : 0;
        expectBytes(found, expected, 'hasBatch vs has');
        expect(found.subarray(0, present.length).every((v) => v === 1)).toBe(true);
        expect(found.subarray(present.length, all.length).some((v) => v === 0)).toBe(true);
        expectUnchanged(sets);
      });
    }
  }

  // A kernel chunk holds 96 KiB of key bytes: a longer key takes the per-key path, between
  // chunks, with the same answer and bits.
  for (const [name, make] of [
    ['BloomFilter', () => BloomFilter.create({ capacity: 6000, fpp: 0.01 })],
    ['BlockedBloomFilter', () => BlockedBloomFilter.create({ capacity: 6000, fpp: 0.01 })],
    ['SplitBlockBloomFilter', () => SplitBlockBloomFilter.create({ capacity: 6000, fpp: 0.01 })],
    [
      'ShardedBloomFilter',
      () => ShardedBloomFilter.create({ capacity: 6000, fpp: 0.01, shardBits: 8192 }),
    ],
  ] as [string, () => AnyFilter][]) {
    it(`${name}: keys longer than a kernel chunk, first, inside and last`, () => {
      const long = (c: string) => c.repeat(150_000);
      const keys = [long('a'), ...keysOf('string').present.slice(0, 1500), long('b')];
      keys.splice(700, 0, long('c'), long('c'));
      const batched = make();
      const oneByOne = make();
      const flags = new Uint8Array(keys.length);
      const added = batched.addBatch(packKeys('string', keys), flags);
      const expected = new Uint8Array(keys.length);
      for (let i = 0; i < keys.length; i++) expected[i] = oneByOne.add(keys[i]!) ? 1 : 0;
      expectBytes(flags, expected, 'add flags');
      expect(added).toBe(expected.reduce((a, b) => a + b, 0));
      expect(flags[701]).toBe(0);
      expectBytes(batched.toBytes(), oneByOne.toBytes(), 'batch vs one by one');
      expect(bitCountOf(batched)).toBe(bitCountOf(oneByOne));
      const probe = [long('x'), ...keys, long('y')];
      const found = batched.hasBatch(packKeys('string', probe));
      const want = Uint8Array.from(probe, (k) => (oneByOne.has(k) ? 1 : 0));
      expectBytes(found, want, 'hasBatch vs has');
    });
  }

  it('an empty batch adds nothing and answers nothing', () => {
    const f = BlockedBloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(f.addBatch(packKeys('string', []))).toBe(0);
    expect(f.hasBatch(packKeys('string', []))).toEqual(new Uint8Array(0));
  });

  it('refuses a malformed batch or a short out array, naming it', () => {
    const f = BloomFilter.create({ capacity: 6000, fpp: 0.01 });
    const batch = packKeys('string', ['a', 'b']);
    expect(() => f.hasBatch(batch, new Uint8Array(1))).toThrow(
      /out must be a Uint8Array of at least 2 bytes/,
    );
    expect(() => f.addBatch(batch, new Uint8Array(1))).toThrow(
      /out must be a Uint8Array of at least 2 bytes/,
    );
    expect(() => f.addBatch({ bytes: batch.bytes, offsets: new Uint32Array([0, 5]) })).toThrow(
      RangeError,
    );
  });
});

describe('the kernels against the general path', () => {
  // kernelHashes answers -1 when no kernel is free: earlier files in this worker may have left
  // the cap full of filters not yet collected.
  beforeEach(collectKernels);
  // The classic kernel adds 16 keys at a time (walk_batch mode 2): their probes are walked into
  // the key area (16·8k bytes, 32,640 at k = 255), then set key by key; a repeat inside a group
  // must see the bits its first copy set, and each key's count of bits set must be the per-key
  // walk's (the scalable filter reads it through kernelHashes).
  for (const k of [1, 16, 17, 255]) {
    it(`BloomFilter, k = ${k}: grouped adds give add's flags, bits, count and bits set per key`, () => {
      const present = keysOf('string').present.slice(0, 600);
      const keys: Key[] = [];
      for (let i = 0; i < present.length; i++) {
        keys.push(present[i]!);
        if (i % 7 === 3) keys.push(present[i]!); // the next key, same group
        if (i % 50 === 20) keys.push(present[i - 9]!); // in the same group or the one before
      }
      const shape = { bits: 1 << 18, hashes: k };
      // Plain bits of its own: the general path, with a popcount kept as bits are set (shared
      // memory, the other way to the general path, counts the whole array at every bitCount).
      const general = new BloomFilter(shape, new BitArray(shape.bits));
      const expected = new Uint8Array(keys.length);
      const setPerKey = new Uint8Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const before = general.bitCount;
        expected[i] = general.add(keys[i]!) ? 1 : 0;
        setPerKey[i] = general.bitCount - before;
      }
      const batched = new BloomFilter(shape);
      const flags = new Uint8Array(keys.length);
      expect(batched.addBatch(packKeys('string', keys), flags)).toBe(
        expected.reduce((a, b) => a + b, 0),
      );
      expectBytes(flags, expected, 'add flags');
      expectBytes(batched.toBytes(), general.toBytes(), 'bits');
      expect(batched.bitCount).toBe(general.bitCount);
      // The same keys as MurmurHash3 rows through kernelHashes, a chunk at most 1024 keys.
      const rows = new Int32Array(4 * keys.length);
      for (let i = 0; i < keys.length; i++) {
        hashKeyInto('string', keys[i]!, rows.subarray(4 * i, 4 * i + 4));
      }
      const fromRows = new BloomFilter(shape);
      const out = new Uint8Array(keys.length);
      const sum = fromRows.kernelHashes(rows, 0, keys.length, true, out);
      expect(sum, 'a kernel took the rows').toBe(general.bitCount);
      expectBytes(out, setPerKey, 'bits set per key');
      expectBytes(fromRows.toBytes(), general.toBytes(), 'bits from rows');
    });
  }

  // A popcount left unknown (a filter read from bytes, a union) is counted when first asked:
  // adds in between, through a kernel (noteSet) or key by key, must not be counted on top.
  const popcount = (data: Uint32Array) => {
    let n = 0;
    for (let w of data) for (; w !== 0; w &= w - 1) n++;
    return n;
  };
  const kinds: [string, () => BitFilterLike, (b: Uint8Array, copy: boolean) => BitFilterLike][] = [
    [
      'BloomFilter',
      () => BloomFilter.create({ capacity: 6000, fpp: 0.01 }),
      (b, copy) => BloomFilter.fromBytes(b, { copy }),
    ],
    [
      'BlockedBloomFilter',
      () => BlockedBloomFilter.create({ capacity: 6000, fpp: 0.01 }),
      (b, copy) => BlockedBloomFilter.fromBytes(b, { copy }),
    ],
    [
      'SplitBlockBloomFilter',
      () => SplitBlockBloomFilter.create({ capacity: 6000, fpp: 0.01 }),
      (b, copy) => SplitBlockBloomFilter.fromBytes(b, { copy }),
    ],
  ];
  for (const [name, make, read] of kinds) {
    it(`${name}: the popcount after fromBytes, union and clone follows later adds`, () => {
      const keys = keysOf('string').present;
      const first = packKeys('string', keys.slice(0, 1000));
      const later = packKeys('string', keys.slice(1000, 2000));
      const known = make();
      known.addBatch(first);
      const bytes = known.toBytes();
      const counted = (f: BitFilterLike, what: string) => {
        expect(f.bitCount, what).toBe(popcount(f.bits.data));
        expect(f.bitCount, what).toBe(known.bitCount);
      };
      known.addBatch(later);
      known.add(keys[2000]!);
      for (const copy of [true, false]) {
        const loaded = read(new Uint8Array(bytes), copy); // copy: in a kernel; else a view
        loaded.addBatch(later);
        loaded.add(keys[2000]!);
        counted(loaded, `fromBytes, copy: ${copy}`);
      }
      const merged = read(bytes, true);
      const other = make();
      other.addBatch(later);
      merged.union(other);
      const twin = merged.clone(); // a clone of an unknown count
      for (const f of [merged, twin]) {
        f.add(keys[2000]!);
        f.addBatch(later);
        counted(f, 'after a union');
      }
    });
  }
});

/** What the popcount test needs of a bit filter. */
interface BitFilterLike extends AnyFilter {
  readonly bitCount: number;
  readonly bits: { readonly data: Uint32Array };
  union(other: BitFilterLike): unknown;
  clone(): BitFilterLike;
}

describe("packedSequence (the statistical tests' keys, packed without a string each)", () => {
  it('packs what packKeys packs, across every block size and width change', () => {
    const wrong: string[] = [];
    const froms = [0, 1, 9, 10, 99, 100, 101, 990, 1000, 9999, 10_000, 99_900, 123_456, 2 ** 40];
    for (const from of froms) {
      for (const n of [0, 1, 10, 11, 100, 101, 250, 1234, 20_001]) {
        // Blocks of ten thousand need 20,000 keys from most starts: one prefix there.
        for (const prefix of n > 10_000 ? ['k:'] : ['', 'k:', 'é😀/']) {
          const want = packKeys(
            'string',
            Array.from({ length: n }, (_, i) => `${prefix}${from + i}`),
          );
          const got = packedSequence(prefix, n, from);
          const end = want.offsets[n]!;
          const same =
            got.bytes.length === end &&
            Buffer.compare(Buffer.from(got.bytes), Buffer.from(want.bytes.subarray(0, end))) ===
              0 &&
            got.offsets.every((o, i) => o === want.offsets[i]);
          if (!same) wrong.push(`${JSON.stringify(prefix)} from ${from}, ${n} keys`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
