import { describe, expect, it } from 'vitest';
import { FormatError } from '../src/errors.js';
import { binaryFuseCodec } from '../src/filters/binary-fuse/codec.js';
import { fuseShape } from '../src/filters/binary-fuse/construct.js';
import { BinaryFuseFilter } from '../src/filters/binary-fuse/filter.js';
import { mix, mixed, mulhi64, splitmix64 } from '../src/filters/binary-fuse/mix.js';
import { packKeys } from '../src/filters/packed.js';
import { describeFilter, solveSize } from '../src/index.js';
import { forge } from './support/native-bytes.js';
import { countFound, packedSequence } from './support/packed-keys.js';
import { keys, lcg, upper } from './support/random.js';

const M64 = (1n << 64n) - 1n;
/** xor_singleheader's binary_fuse_murmur64(key + seed), in BigInt. */
function refMix(key: bigint, seed: bigint): bigint {
  let h = (key + seed) & M64;
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & M64;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & M64;
  return h ^ (h >> 33n);
}
const lower = (p: number, n: number): number => p - 4 * Math.sqrt((p * (1 - p)) / n);
const u64 = (next: () => number): bigint => (BigInt(next()) << 32n) | BigInt(next());
const split = (x: bigint): [number, number] => [Number(x & 0xffffffffn), Number(x >> 32n)];

describe('binary fuse arithmetic on 32-bit halves', () => {
  it('mix and mulhi64 equal the 64-bit BigInt computations', () => {
    const next = lcg(16);
    const wrong: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const key = u64(next);
      const seed = i === 0 ? M64 : u64(next);
      mix(...split(key), ...split(seed));
      const got = (BigInt(mixed.hi) << 32n) | BigInt(mixed.lo);
      if (got !== refMix(key, seed)) wrong.push(`mix(${key}, ${seed}) = ${got}`);
      const n = next() >>> (i % 32);
      const high = mulhi64(...split(key), n);
      if (high !== Number((key * BigInt(n)) >> 64n)) wrong.push(`mulhi64(${key}, ${n}) = ${high}`);
    }
    expect(wrong).toEqual([]);
  });

  it('draws seeds with splitmix64 from xor_singleheader state', () => {
    const state = { value: 0n };
    // splitmix64 reference outputs for state 0 (Vigna's splitmix64.c).
    expect(splitmix64(state)).toBe(0xe220a8397b1dcdafn);
    expect(splitmix64(state)).toBe(0x6e789e6aa1b965f4n);
  });

  it('sizes as binaryfusefilter.h (segment length, size factor, array length)', () => {
    expect(fuseShape(0)).toEqual({ segmentLength: 4, segmentCount: 1, arrayLength: 12 });
    expect(fuseShape(1)).toEqual({ segmentLength: 4, segmentCount: 1, arrayLength: 12 });
    expect(fuseShape(1000)).toEqual({ segmentLength: 128, segmentCount: 9, arrayLength: 1408 });
    expect(fuseShape(1_000_000)).toEqual({
      segmentLength: 8192,
      segmentCount: 136,
      arrayLength: 1130496,
    });
    expect(fuseShape(10_000_000).segmentLength).toBe(32768);
    expect(fuseShape(10_000_000).arrayLength / 10_000_000).toBeCloseTo(1.1272, 3);
    expect(fuseShape(1e9).segmentLength).toBe(262144);
  });
});

describe('BinaryFuseFilter, 8-bit fingerprints at 10^6 keys', () => {
  const N = 1_000_000;
  const members = keys('member', N);
  const filter = BinaryFuseFilter.build(members);

  // The 10^6-key checks go through hasBatch on keys packed without a string each (the same bytes
  // as keys(); hasBatch answers as has does, checked below).
  it('has no false negatives and at most 9.1 bits per key', () => {
    expect(countFound(filter.hasBatch(packedSequence('member:', N)))).toBe(N);
    expect(filter.estimatedCount()).toBe(N);
    // Built in the cells its sizing gives (the web page's calculator test relies on this).
    expect(filter.fingerprints.length).toBe(fuseShape(N).arrayLength);
    expect(filter.bitsPerKey).toBeLessThanOrEqual(9.1);
    expect(filter.bitsPerKey).toBeGreaterThan(9.0);
  });

  it('has an FPR within the binomial tolerance of 1/256', () => {
    const Q = 400_000;
    const rate = countFound(filter.hasBatch(packedSequence('outsider:', Q))) / Q;
    expect(rate).toBeLessThan(upper(1 / 256, Q));
    expect(rate).toBeGreaterThan(lower(1 / 256, Q));
  });

  it('answers packed batches as has does, and survives its native format', () => {
    const probe = [...members.slice(0, 2000), ...keys('outsider', 20_000)];
    const batch = filter.hasBatch(packKeys('string', probe));
    expect(Array.from(batch, (b) => b === 1)).toEqual(filter.hasMany(probe));
    const back = BinaryFuseFilter.fromBytes<string>(filter.toBytes());
    expect(back.hasMany(probe)).toEqual(filter.hasMany(probe));
    expect(Buffer.from(back.toBytes()).equals(Buffer.from(filter.toBytes()))).toBe(true);
  });
});

describe('BinaryFuseFilter, 16-bit fingerprints', () => {
  it('costs twice the bits and has an FPR within the binomial tolerance of 1/65536', () => {
    const members = keys('m16', 100_000);
    const f16 = BinaryFuseFilter.build(members, { fingerprintBits: 16 });
    expect(countFound(f16.hasBatch(packedSequence('m16:', 100_000)))).toBe(100_000);
    expect(f16.bitSize).toBe(16 * fuseShape(100_000).arrayLength);
    const Q = 500_000;
    const fp = countFound(f16.hasBatch(packedSequence('o16:', Q)));
    expect(fp / Q).toBeLessThan(upper(1 / 65536, Q));
    const back = BinaryFuseFilter.fromBytes<string>(f16.toBytes());
    expect(back.fingerprintBits).toBe(16);
    expect(members.slice(0, 1000).every((k) => back.has(k))).toBe(true);
  });
});

describe('BinaryFuseFilter construction', () => {
  it('deduplicates repeated keys instead of looping', () => {
    const base = keys('dup', 5000);
    const f = BinaryFuseFilter.build([...base, ...base, ...base.slice(0, 100)]);
    expect(f.estimatedCount()).toBe(5000);
    expect(base.every((k) => f.has(k))).toBe(true);
    const same = BinaryFuseFilter.build(Array.from({ length: 10_000 }, () => 'one'));
    expect(same.estimatedCount()).toBe(1);
    expect(same.has('one')).toBe(true);
  });

  it('builds tiny sets and every funnel', () => {
    for (const n of [0, 1, 2, 3, 7, 100]) {
      const ks = keys('tiny', n);
      const f = BinaryFuseFilter.build(ks);
      expect(ks.every((k) => f.has(k))).toBe(true);
    }
    const empty = BinaryFuseFilter.build([]);
    expect(keys('any', 2000).some((k) => empty.has(k))).toBe(false);
    const ints = BinaryFuseFilter.build([1, 2, 3, -7], { funnel: 'int' });
    expect(ints.hasMany([1, 2, 3, -7])).toEqual([true, true, true, true]);
    expect(() => ints.has('1' as never)).toThrow(TypeError);
    const bytes = BinaryFuseFilter.build([Uint8Array.of(1), Uint8Array.of(2)], { funnel: 'bytes' });
    expect(bytes.has(Uint8Array.of(2))).toBe(true);
  });

  it('rejects bad options with the parameter and value named', () => {
    expect(() => BinaryFuseFilter.build(['a'], { fingerprintBits: 12 as never })).toThrow(
      /fingerprintBits must be 8 or 16, got 12/,
    );
    expect(() => BinaryFuseFilter.build(['a'] as never[], { funnel: 'utf8' as never })).toThrow(
      /funnel must be one of/,
    );
    expect(() => BinaryFuseFilter.build('abc' as never)).toThrow(TypeError);
  });
});

describe('BinaryFuseFilter native format', () => {
  const f = BinaryFuseFilter.build(keys('fmt', 1000));
  const bytes = f.toBytes();
  const cases: [string, (v: DataView) => void, RegExp][] = [
    ['segment length 100', (v) => v.setUint32(24 + 16, 100, true), /bad segment length 100/],
    [
      'segment length 2^19',
      (v) => v.setUint32(24 + 16, 2 ** 19, true),
      /bad segment length 524288/,
    ],
    ['segment count 0', (v) => v.setUint32(24 + 20, 0, true), /bad segment count 0/],
    ['12-bit fingerprints', (v) => v.setUint8(24 + 24, 12), /bad fingerprint size 12 bits/],
    ['a reserved byte', (v) => v.setUint8(24 + 30, 1), /reserved binary fuse parameter byte 30/],
    [
      'more keys than cells',
      (v) => v.setUint32(24 + 8, 5000, true),
      /key count 5000 is above the 1408/,
    ],
    [
      'another segment count',
      (v) => v.setUint32(24 + 20, 10, true),
      /payload has 1408 bytes, 1536 fingerprints of 8 bits need 1536/,
    ],
    [
      'another hash scheme',
      (v) => v.setUint8(7, 1),
      /hash scheme id 1 is not defined for a binary fuse filter/,
    ],
  ];
  for (const [what, edit, message] of cases) {
    it(`rejects ${what}`, () => {
      expect(() => BinaryFuseFilter.fromBytes(forge(bytes, edit))).toThrow(FormatError);
      expect(() => BinaryFuseFilter.fromBytes(forge(bytes, edit))).toThrow(message);
    });
  }
});

describe('BinaryFuseFilter facts, as info and the page show them', () => {
  it('give the bits and bytes the size model (calc) gives; an empty filter has no bits per key', () => {
    for (const [n, f] of [
      [1, 8],
      [1000, 8],
      [1000, 16],
    ] as const) {
      const filter = BinaryFuseFilter.build(keys('facts', n), { fingerprintBits: f });
      const model = solveSize('binary-fuse', { n, p: 2 ** -f });
      expect(describeFilter(filter), `n=${n} f=${f}`).toMatchObject({
        bits: model.bits,
        bytes: model.bytes,
        expectedFpp: model.p,
      });
    }
    const empty = BinaryFuseFilter.build([]);
    expect(describeFilter(empty)).toMatchObject({ keys: 0, bitsPerKey: null });
    const shape = Object.fromEntries(binaryFuseCodec.view!(empty).shape);
    expect(shape['bits per key']).toBe('—');
  });
});
