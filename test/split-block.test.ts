import { hashParquetValue, readBloomFilter, sbbfInsert } from 'hyparquet/src/bloom.js';
import { describe, expect, it } from 'vitest';
import {
  decodeParquetBloomFilter,
  decodeParquetHeader,
  encodeParquetHeader,
} from '../src/filters/split-block/format.js';
import {
  FormatError,
  fromBytes,
  IncompatibleFiltersError,
  type ParquetPhysicalType,
  SPLIT_BLOCK_SALT,
  SplitBlockBloomFilter,
  splitBlockFalsePositiveRate,
  splitBlockSize,
} from '../src/index.js';
import { estimateCount } from '../src/math.js';
import { countFound, packedSequence } from './support/packed-keys.js';

// Conformance: the split-block rows of test/conformance/table.ts (plain, shared, Parquet bytes).

describe('SplitBlockBloomFilter against the Parquet specification', () => {
  it('uses the eight salt constants of the specification', () => {
    expect(SPLIT_BLOCK_SALT).toEqual([
      0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947,
      0x5c6bfb31,
    ]);
  });

  it("reproduces the specification's FPR table and example", () => {
    // BloomFilter.md: bits per distinct value → FPR.
    expect(splitBlockFalsePositiveRate(256 / 6)).toBeCloseTo(0.1, 2);
    expect(splitBlockFalsePositiveRate(256 / 10.5)).toBeCloseTo(0.01, 3);
    expect(splitBlockFalsePositiveRate(256 / 16.9)).toBeCloseTo(0.001, 4);
    expect(splitBlockFalsePositiveRate(256 / 26.4)).toBeCloseTo(0.0001, 5);
    // 1024 blocks with 26,214 inserts (10 bits/value) gives about 1.26%.
    expect(splitBlockFalsePositiveRate(26_214 / 1024)).toBeCloseTo(0.0126, 4);
    expect(splitBlockSize(1_000_000, 0.01)).toEqual({
      blocks: 41404,
      bitsPerKey: 10.599424,
      expectedRate: expect.closeTo(0.0097, 4),
    });
  });

  it('sets the same words as an independent implementation (hyparquet) for every type', () => {
    const cases: [ParquetPhysicalType, unknown[]][] = [
      ['BYTE_ARRAY', ['', 'a', 'value-5', 'héllo', '中文', '😀', new Uint8Array([0, 255])]],
      ['INT32', [0, -1, 2147483647, -2147483648, 12345]],
      ['INT64', [0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 9007199254740991, -42]],
      ['FLOAT', [0, 1.5, -2.25, 3.4e38]],
      ['DOUBLE', [0, 1 / 7, -1e300, Number.MIN_VALUE]],
      ['FIXED_LEN_BYTE_ARRAY', [new Uint8Array(16).fill(3), new Uint8Array([1, 2])]],
    ];
    for (const [type, values] of cases) {
      for (const blocks of [1, 3, 128, 1000]) {
        const f = new SplitBlockBloomFilter({ blocks, type });
        const reference = new Uint32Array(blocks * 8);
        for (const value of values) {
          f.add(value as never);
          const h = hashParquetValue(value, { type, name: 'c' } as never);
          expect(h, `${type} ${String(value)}`).toBeDefined();
          expect(f.hashOf(value as never)).toBe(h);
          sbbfInsert(reference, h!);
        }
        expect(Array.from(f.bits.data)).toEqual(Array.from(reference));
        for (const value of values) expect(f.has(value as never)).toBe(true);
      }
    }
  });

  it('accepts hashes computed elsewhere', () => {
    const f = new SplitBlockBloomFilter({ blocks: 16 });
    f.add('abc');
    expect(f.hasHash(0x44bc2cf5ad770999n)).toBe(true); // XXH64("abc")
    const g = new SplitBlockBloomFilter({ blocks: 16 });
    expect(g.addHash(0x44bc2cf5ad770999n)).toBe(true);
    expect(g.equals(f)).toBe(true);
    expect(g.addHash(0x44bc2cf5ad770999n)).toBe(false);
  });

  it('writes the thrift header a Parquet writer stores, and reads it back', () => {
    // As DuckDB 1.5 writes it for a 4096-byte bitset.
    expect(Array.from(encodeParquetHeader(4096))).toEqual([
      0x15, 0x80, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0,
    ]);
    const f = new SplitBlockBloomFilter({ blocks: 128, type: 'INT64' });
    for (let i = 0; i < 500; i++) f.add(BigInt(i));
    const bytes = f.toParquet();
    expect(bytes.length).toBe(16 + 4096);
    expect(decodeParquetBloomFilter(bytes)).toEqual({ numBytes: 4096, headerLength: 16 });
    const g = SplitBlockBloomFilter.fromParquet(bytes, { type: 'INT64' });
    expect(g.equals(f)).toBe(true);
    // hyparquet's reader takes the same bytes.
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const read = readBloomFilter({ view, offset: 0 });
    expect(Array.from(read!.blocks)).toEqual(Array.from(f.bits.data));
    expect(Array.from(f.toBitset())).toEqual(Array.from(bytes.subarray(16)));
  });

  it('skips unknown header fields and rejects what it cannot read', () => {
    // numBytes 32, an unknown field 9 (binary "hi"), then the three unions.
    const extra = Uint8Array.from([
      0x15, 0x40, 0x88, 0x02, 0x68, 0x69, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0,
    ]);
    // Field 9 follows field 1 (delta 8): after it, field 2 is reached with an absolute id.
    const withAbsolute = Uint8Array.from([
      0x15, 0x40, 0x88, 0x02, 0x68, 0x69, 0x0c, 0x04, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0,
      0, 0,
    ]);
    expect(() => decodeParquetHeader(extra)).toThrow(FormatError); // ids 10, 11, 12: no algorithm
    expect(decodeParquetHeader(withAbsolute)).toEqual({ numBytes: 32, headerLength: 20 });
    const header = (numBytes: number, algorithm = 1, hash = 1, compression = 1): Uint8Array => {
      const h = encodeParquetHeader(numBytes);
      const n = h.length;
      h[n - 12] = (algorithm << 4) | 0x0c;
      h[n - 8] = (hash << 4) | 0x0c;
      h[n - 4] = (compression << 4) | 0x0c;
      return h;
    };
    expect(() => decodeParquetHeader(header(48))).toThrow(/multiple of 32.*48/);
    expect(() => decodeParquetHeader(header(0))).toThrow(/got 0/);
    expect(() => decodeParquetHeader(header(32, 2))).toThrow(/algorithm 2/);
    expect(() => decodeParquetHeader(header(32, 1, 2))).toThrow(/hash 2/);
    expect(() => decodeParquetHeader(header(32, 1, 1, 2))).toThrow(/compression 2/);
    expect(() => decodeParquetHeader(header(32).subarray(0, 5))).toThrow(/truncated/);
    expect(() => decodeParquetBloomFilter(header(64))).toThrow(/16-byte header.*64-byte bitset/);
    expect(() => SplitBlockBloomFilter.fromBitset(new Uint8Array(33))).toThrow(/multiple of 32/);
    expect(() => SplitBlockBloomFilter.fromBitset(new Uint8Array(0))).toThrow(RangeError);
  });
});

describe('SplitBlockBloomFilter values and API', () => {
  it('encodes values by the physical type and rejects the wrong kind', () => {
    const ints = new SplitBlockBloomFilter({ blocks: 4, type: 'INT32' });
    ints.add(7);
    expect(ints.has(7)).toBe(true);
    expect(() => ints.add(1.5)).toThrow(RangeError);
    expect(() => ints.add(2 ** 31)).toThrow(RangeError);
    expect(() => ints.add('7')).toThrow(TypeError);
    const longs = new SplitBlockBloomFilter({ blocks: 4, type: 'INT64' });
    longs.add(7n);
    expect(longs.has(7)).toBe(true);
    expect(() => longs.add(2 ** 60)).toThrow(RangeError);
    const doubles = new SplitBlockBloomFilter({ blocks: 4, type: 'DOUBLE' });
    doubles.add(0.1);
    expect(doubles.has(0.1)).toBe(true);
    expect(() => doubles.add(1n)).toThrow(/DOUBLE column must be a number, got 1n/);
    const strings = new SplitBlockBloomFilter({ blocks: 4 });
    strings.add('x');
    expect(strings.has(new TextEncoder().encode('x'))).toBe(true);
    expect(() => strings.add(3)).toThrow(/BYTE_ARRAY column must be a string or a Uint8Array/);
    const int96 = new SplitBlockBloomFilter({ blocks: 4, type: 'INT96' });
    int96.add(new Uint8Array(12));
    expect(() => int96.add(new Uint8Array(8))).toThrow(/12 bytes, got 8/);
    expect(() => new SplitBlockBloomFilter({ blocks: 4, type: 'BOOLEAN' as never })).toThrow(
      /type must be one of .*got "BOOLEAN"/,
    );
    expect(() => new SplitBlockBloomFilter({ blocks: 0 })).toThrow(/blocks.*0/);
    expect(() => SplitBlockBloomFilter.create({ capacity: 10, fpp: 2 })).toThrow(/fpp.*2/);
  });

  it('measures within 4 sigma of the model for fpp 1e-1 .. 1e-4, no false negatives', () => {
    // Through the batch paths, on keys packed without a string each (hasBatch answers as has
    // does: test/batch.test.ts; the per-key paths run in the conformance suite). 4 sigma over 10^6
    // probes is 1.3% of the rate at 1e-1, 4% at 1e-2, 13% at 1e-3 and 40% at 1e-4.
    for (const fpp of [0.1, 0.01, 0.001, 0.0001]) {
      const n = 100_000;
      const f = SplitBlockBloomFilter.create({ capacity: n, fpp });
      const model = splitBlockFalsePositiveRate(n / f.blocks);
      const present = packedSequence(`present:${fpp}:`, n);
      f.addBatch(present);
      expect(countFound(f.hasBatch(present))).toBe(n);
      const probes = 1_000_000;
      const fp = countFound(f.hasBatch(packedSequence(`absent:${fpp}:`, probes)));
      const sigma = Math.sqrt((model * (1 - model)) / probes);
      expect(Math.abs(fp / probes - model), `fpp ${fpp}`).toBeLessThan(4 * sigma);
      expect(Math.abs(fp / probes - f.expectedFpp())).toBeLessThan(4 * sigma);
      expect(Math.abs(f.estimatedCount() - n)).toBeLessThan(0.02 * n);
      // The classic estimator with k = 8 (m/k = 32 per block): one formula with the other filters.
      expect(f.estimatedCount()).toBe(estimateCount(f.bitCount, f.bitSize, 8));
    }
  });

  it('unions, intersects, clones and round-trips through the native format', () => {
    const a = new SplitBlockBloomFilter({ blocks: 64, type: 'INT64' });
    const b = new SplitBlockBloomFilter({ blocks: 64, type: 'INT64' });
    for (let i = 0; i < 300; i++) a.add(BigInt(i));
    for (let i = 300; i < 600; i++) b.add(BigInt(i));
    const u = a.clone().union(b);
    expect(Array.from({ length: 600 }, (_, i) => i).filter((i) => !u.has(BigInt(i)))).toEqual([]);
    expect(a.clone().intersect(b).bitCount).toBeLessThan(a.bitCount);
    expect(() => a.union(a)).toThrow(IncompatibleFiltersError);
    expect(() => a.union(new SplitBlockBloomFilter({ blocks: 32, type: 'INT64' }))).toThrow(
      /same number of blocks \(64 != 32\)/,
    );
    expect(() => a.union(new SplitBlockBloomFilter({ blocks: 64, type: 'INT32' }))).toThrow(
      /same column type \(INT64 != INT32\)/,
    );
    const bytes = a.toBytes();
    expect(bytes[6]).toBe(6); // filter type id: splitBlock
    expect(bytes[7]).toBe(4); // hash scheme id: xxh64SplitBlock
    expect(bytes[8]).toBe(4); // funnel id: long (INT64)
    const back = fromBytes(bytes) as SplitBlockBloomFilter;
    expect(back.equals(a)).toBe(true);
    expect(back.type).toBe('INT64');
    const bad = bytes.slice();
    bad[32] = 9;
    expect(() => SplitBlockBloomFilter.fromBytes(bad)).toThrow(FormatError);
    a.clear();
    expect(a.has(1n)).toBe(false);
  });
});
