/**
 * The split-block filter's constants, Parquet physical types and sizing (Parquet's BloomFilter.md:
 * 256-bit blocks of eight 32-bit words, one bit set per word; the rate at λ values per block is
 * Σ_j Pois(j; λ)·(1 − (1 − 1/32)^j)^8). See filter.ts.
 */

import { mustBe } from '../../errors.js';
import type { Funnel } from '../../hash/keys.js';
import { halfFillLoad } from '../../math.js';
import { BlockSizing, poissonMix } from '../blocked/sizing.js';

/** The eight salt constants of the Parquet specification. */
export const SALT: readonly number[] = [
  0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
];
/** Bits per block. */
export const SPLIT_BLOCK_BITS = 256;
/** Most blocks: 2^28 (8 GiB). */
export const MAX_SPLIT_BLOCKS = 2 ** 28;

/**
 * A Parquet column's physical type, which decides how `add`/`has` turn a JavaScript value into
 * the PLAIN bytes that are hashed:
 *
 * | type                   | accepts                                   | bytes                      |
 * |------------------------|-------------------------------------------|----------------------------|
 * | `BYTE_ARRAY`           | `string` (UTF-8), `Uint8Array` (as is)    | no length prefix           |
 * | `FIXED_LEN_BYTE_ARRAY` | `Uint8Array`                              | as is                      |
 * | `INT32`                | integer `number` in [−2^31, 2^31)         | 4 bytes LE                 |
 * | `INT64`                | `bigint` in [−2^63, 2^63), safe integer   | 8 bytes LE                 |
 * | `INT96`                | `Uint8Array` of 12 bytes                  | as is                      |
 * | `FLOAT`                | `number`                                  | IEEE 754 binary32 LE       |
 * | `DOUBLE`               | `number`                                  | IEEE 754 binary64 LE       |
 *
 * Logical types are stored physically: a DATE is its INT32 day number, a TIMESTAMP its INT64
 * count, a DECIMAL its unscaled integer or bytes; pass those.
 */
export type ParquetPhysicalType =
  | 'INT32'
  | 'INT64'
  | 'INT96'
  | 'FLOAT'
  | 'DOUBLE'
  | 'BYTE_ARRAY'
  | 'FIXED_LEN_BYTE_ARRAY';

/** Parquet's `Type` enum values (parquet.thrift), as stored in bloomkit's native format. */
export const PARQUET_TYPE_IDS: Readonly<Record<ParquetPhysicalType, number>> = {
  INT32: 1,
  INT64: 2,
  INT96: 3,
  FLOAT: 4,
  DOUBLE: 5,
  BYTE_ARRAY: 6,
  FIXED_LEN_BYTE_ARRAY: 7,
};

/** The bloomkit funnel each type's keys are checked against (FLOAT/DOUBLE: none fits; 'bytes'). */
export const PARQUET_FUNNELS: Readonly<Record<ParquetPhysicalType, Funnel>> = {
  INT32: 'int',
  INT64: 'long',
  INT96: 'bytes',
  FLOAT: 'bytes',
  DOUBLE: 'bytes',
  BYTE_ARRAY: 'string',
  FIXED_LEN_BYTE_ARRAY: 'bytes',
};

/** Throws a `RangeError` unless `type` is a supported physical type; returns it. */
export function checkParquetType(type: unknown): ParquetPhysicalType {
  if (typeof type === 'string' && Object.hasOwn(PARQUET_TYPE_IDS, type)) {
    return type as ParquetPhysicalType;
  }
  throw mustBe('type', `one of ${Object.keys(PARQUET_TYPE_IDS).join(', ')}`, type);
}

/**
 * The model false positive rate of a split-block filter at λ values per block: a probability, at
 * most 1 (the summed series can pass 1 by rounding when every term is 1).
 */
export function splitBlockFalsePositiveRate(lambda: number): number {
  const q = Math.log1p(-1 / 32);
  return Math.min(
    1,
    poissonMix(lambda, (j) => (-Math.expm1(q * j)) ** 8),
  );
}

/**
 * The design point of z blocks: half of each word's bits set (one bit per value in each of the
 * eight 32-bit words, `halfFillLoad(32, 1)` = 22.2 values per block) and the model rate there,
 * 0.61%. The shape does not keep the rate a filter was made for (k is always 8), so a filter
 * made for a lower rate reports saturation later than one made at about 0.4%.
 */
export function splitBlockDesignPoint(blocks: number): { capacity: number; fpp: number } {
  const lambda = halfFillLoad(32, 1);
  return { capacity: lambda * blocks, fpp: splitBlockFalsePositiveRate(lambda) };
}

/** The shape {@link SplitBlockBloomFilter.create} picks. */
export interface SplitBlockSize {
  /** Number of 256-bit blocks (z). */
  readonly blocks: number;
  /** Bits per value at capacity: 256·z/n. */
  readonly bitsPerKey: number;
  /** The model false positive rate at capacity. */
  readonly expectedRate: number;
}

const SIZING = /* @__PURE__ */ new BlockSizing(
  splitBlockFalsePositiveRate,
  SPLIT_BLOCK_BITS,
  MAX_SPLIT_BLOCKS,
);

/**
 * The fewest 256-bit blocks whose model rate at `capacity` values is at most 0.97·fpp:
 * `capacity: 1e6, fpp: 0.01` → 41,404 blocks (10.6 bits/value).
 */
export function splitBlockSize(capacity: number, fpp: number): SplitBlockSize {
  const blocks = SIZING.blocks(capacity, fpp);
  return {
    blocks,
    bitsPerKey: (blocks * SPLIT_BLOCK_BITS) / capacity,
    expectedRate: splitBlockFalsePositiveRate(capacity / blocks),
  };
}
