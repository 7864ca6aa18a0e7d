/**
 * `hasMany(keys, out)`: the answers into an array the caller reuses, for every in-memory type.
 * The same answers as `hasMany(keys)` (and so as `has` key by key, which the conformance suite
 * checks), whatever the array held before and however long it was; from an array of keys (the
 * types' batch paths, with their reused answer bytes) and from any other iterable.
 */
import { describe, expect, it } from 'vitest';
import {
  BinaryFuseFilter,
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  DcsoBloomFilter,
  FilterCascade,
  type ReadonlyMembershipFilter,
  ScalableBloomFilter,
  ShardedBloomFilter,
  SplitBlockBloomFilter,
} from '../src/index.js';

const present = Array.from({ length: 3000 }, (_, i) => `key:${i}:é`);
const absent = Array.from({ length: 3000 }, (_, i) => `other:${i}`);
/** Present and absent keys interleaved, and a key of the wrong kind nowhere. */
const mixed = present.flatMap((k, i) => [k, absent[i]!]);

type Filter = ReadonlyMembershipFilter<string>;
const opts = { capacity: 4000, fpp: 0.01 };
const filled = <F extends { add(k: string): unknown }>(f: F): F => {
  for (const k of present) f.add(k);
  return f;
};

const TYPES: [string, () => Filter][] = [
  ['BloomFilter', () => filled(BloomFilter.create(opts))],
  ['BloomFilter (shared)', () => filled(BloomFilter.create({ ...opts, shared: true }))],
  ['BlockedBloomFilter', () => filled(BlockedBloomFilter.create(opts))],
  ['SplitBlockBloomFilter', () => filled(SplitBlockBloomFilter.create(opts))],
  ['CountingBloomFilter', () => filled(CountingBloomFilter.create(opts))],
  ['ScalableBloomFilter', () => filled(ScalableBloomFilter.create({ ...opts, capacity: 500 }))],
  ['CuckooFilter', () => filled(CuckooFilter.create(opts))],
  ['DcsoBloomFilter', () => filled(DcsoBloomFilter.create(opts))],
  ['ShardedBloomFilter', () => filled(ShardedBloomFilter.create({ ...opts, shardBits: 8192 }))],
  ['BinaryFuseFilter', () => BinaryFuseFilter.build(present)],
  ['FilterCascade', () => FilterCascade.build({ include: present, exclude: absent })],
];

describe('hasMany into a caller array', () => {
  for (const [name, make] of TYPES) {
    it(`${name}: the same answers as a new array, whatever out held, from arrays and iterables`, () => {
      const f = make();
      const expected = f.hasMany(mixed);
      expect(expected.slice(0, 4)).toEqual([true, expect.any(Boolean), true, expect.any(Boolean)]);
      // A longer array that held other answers: cut to the keys' count, every answer rewritten.
      const out: boolean[] = new Array(mixed.length + 500).fill(true);
      const got = f.hasMany(mixed, out);
      expect(got).toBe(out);
      expect(out).toEqual(expected);
      // Reused for fewer keys, then for more (it grows), then from a Set (another iterable).
      expect(f.hasMany(absent.slice(0, 10), out)).toEqual(f.hasMany(absent.slice(0, 10)));
      expect(out.length).toBe(10);
      expect(f.hasMany(mixed, out)).toEqual(expected);
      expect(f.hasMany(new Set(mixed), out)).toEqual(expected);
      // The present keys alone, after answers of absent keys: no answer left over from before.
      expect(f.hasMany(present, out).every((x) => x)).toBe(true);
      expect(f.hasMany([], out)).toEqual([]);
    });
  }

  it('refuses an out that is not an array, naming it, and leaves it as it was', () => {
    const f = filled(BlockedBloomFilter.create(opts));
    const bytes = new Uint8Array(4);
    expect(() => f.hasMany(present, bytes as never)).toThrow(
      /^out must be an array, got .*Uint8Array/,
    );
    expect(() => filled(BloomFilter.create(opts)).hasMany(present, {} as never)).toThrow(TypeError);
    expect(() => f.hasMany(new Set(present), 'x' as never)).toThrow(TypeError);
    expect(bytes).toEqual(new Uint8Array(4));
  });

  it('answers of one batch do not leak into the next (one answer buffer for every call)', () => {
    // A batch of present keys fills the shared answer bytes with ones; a following batch of
    // absent keys of another filter must not see them, nor a batch larger than the buffer.
    const a = filled(BlockedBloomFilter.create(opts));
    const b = BloomFilter.create(opts);
    expect(a.hasMany(present).every((x) => x)).toBe(true);
    expect(b.hasMany(present).some((x) => x)).toBe(false);
    expect(a.hasMany(present).every((x) => x)).toBe(true);
    const many = Array.from({ length: (1 << 20) + 7 }, (_, i) => `m${i}`);
    const answers = b.hasMany(many);
    expect(answers.length).toBe(many.length);
    expect(answers.some((x) => x)).toBe(false);
  });
});
