/**
 * Parquet's split-block Bloom filter (SBBF), bit for bit as the Parquet specification defines it
 * (apache/parquet-format BloomFilter.md) and as parquet-java, Arrow, DuckDB and Impala write it.
 * Design: Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom Filters" (split
 * blocks: one bit per word), as adopted by Impala and then Parquet.
 *
 * Layout: z blocks of 256 bits, each eight little-endian 32-bit words. A value is hashed with
 * XXH64 (seed 0) over its PLAIN encoding (see {@link ParquetPhysicalType}); with h that hash,
 *
 *   block = ⌊hi32(h) · z / 2^32⌋                 (the spec's ((h >> 32) · z) >> 32)
 *   for i in 0..7: word i of the block gets bit (lo32(h) · SALT[i] mod 2^32) >>> 27
 *
 * Guarantee: no false negatives. For a value never added, `has` is true with probability
 *
 *   p(λ) = Σ_j Pois(j; λ) · (1 − (1 − 1/32)^j)^8,     λ = n / z (values per block)
 *
 * which reproduces the specification's table (10.5 bits per value → 1.01%, 16.9 → 0.0997%) and
 * its example (1024 blocks, 26,214 values → 1.26%). {@link SplitBlockBloomFilter.create} sizes
 * for a model rate of 0.97·fpp (10.6 bits per value at 1%) with any block count; parquet-java
 * rounds up to a power of two instead, which readers do not require.
 *
 * Limits: 1 to 2^28 blocks (8 GiB; the specification allows fewer than 2^31, parquet-java
 * writes at most 128 MiB). Values cannot be removed. BOOLEAN columns are not supported.
 */

import { BitArray, type BitStorage, popcount32 } from '../../bits/bit-array.js';
import type { SharedFilterHandle } from '../../bits/shared-handle.js';
import { checkOptions, checkPositiveInteger } from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { bytesToWords, wordsToBytes } from '../../formats/words.js';
import { estimateCount } from '../../math.js';
import { checkOut, percent } from '../base.js';
import { xxh64Chunks } from '../batch-chunks.js';
import { BitFilter, bitsOf, sharedBits } from '../bit-filter.js';
import { checkPacked, keyEnd } from '../packed.js';
import { decodeParquetBloomFilter, encodeParquetHeader, splitBlockFormatCore } from './format.js';
import { splitBlockKernel } from './kernel.js';
import { findSplitHash, insertSplitHash } from './probes.js';
import {
  checkParquetType,
  MAX_SPLIT_BLOCKS,
  PARQUET_FUNNELS,
  PARQUET_TYPE_IDS,
  type ParquetPhysicalType,
  SPLIT_BLOCK_BITS,
  splitBlockDesignPoint,
  splitBlockSize,
} from './sizing.js';
import { hashParquetValue } from './values.js';

// The public sizing names, from the class's module as the core barrel takes them.
export {
  PARQUET_TYPE_IDS,
  type ParquetPhysicalType,
  SALT,
  type SplitBlockSize,
  splitBlockFalsePositiveRate,
  splitBlockSize,
} from './sizing.js';

import type { Funnel, Key } from '../../hash/keys.js';
import { xxh64Key, xxViews } from '../../hash/xxhash64.js';
import { addStrings, type BlockedKernel, hasStrings } from '../blocked/kernel.js';
import type { MembershipFilter, PackedKeys, Requirement } from '../filter.js';

/** Options shared by every way of making a split-block filter. */
export interface SplitBlockCommonOptions {
  /** The column's physical type; default `'BYTE_ARRAY'`. */
  type?: ParquetPhysicalType;
  /** Keep the bits in a `SharedArrayBuffer` written atomically, for worker threads. */
  shared?: boolean;
}

/** Options of {@link SplitBlockBloomFilter.create}. */
export interface SplitBlockCreateOptions extends SplitBlockCommonOptions {
  /** Expected number of distinct values (n): a positive safe integer. */
  capacity: number;
  /** Target false positive probability at `capacity` values, in (0, 1). */
  fpp: number;
}

/** An explicit shape: `new SplitBlockBloomFilter({ blocks })`. */
export interface SplitBlockShape extends SplitBlockCommonOptions {
  /** Number of 256-bit blocks (the Parquet header's numBytes / 32), 1 to 2^28. */
  blocks: number;
}

export class SplitBlockBloomFilter<K extends Key = Key>
  extends BitFilter<K>
  implements MembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'SplitBlockBloomFilter';
  protected override readonly sharedType = 'split-block';
  /** The bit storage: block b is 32-bit words [8b, 8b + 8). */
  declare readonly bits: BitStorage;
  /** Number of 256-bit blocks (z). */
  declare readonly blocks: number;
  /** The column's physical type. */
  declare readonly type: ParquetPhysicalType;
  /** The funnel nearest to the type (keys are checked against the type, see above). */
  declare readonly funnel: Funnel;
  declare private readonly data: Uint32Array;
  declare private readonly typeId: number;
  /** Plain bits inside a wasm kernel (see ../blocked/kernel.ts), or null for the general path. */
  declare private readonly kernel: BlockedKernel | null;

  constructor(shape: SplitBlockShape, storage?: BitStorage) {
    super();
    checkOptions('shape', shape);
    this.blocks = checkPositiveInteger('blocks', shape.blocks, MAX_SPLIT_BLOCKS);
    this.type = checkParquetType(shape.type ?? 'BYTE_ARRAY');
    this.typeId = PARQUET_TYPE_IDS[this.type];
    this.funnel = PARQUET_FUNNELS[this.type];
    const bitSize = this.blocks * SPLIT_BLOCK_BITS;
    this.kernel = storage === undefined && !shape.shared ? splitBlockKernel(this.blocks) : null;
    this.bits =
      this.kernel === null
        ? bitsOf(bitSize, shape.shared, storage)
        : new BitArray(bitSize, this.kernel.data, 0);
    this.data = this.bits.data;
  }

  /** A filter for `capacity` distinct values at rate `fpp` (see {@link splitBlockSize}). */
  static create(options: SplitBlockCreateOptions): SplitBlockBloomFilter {
    checkOptions('options', options);
    const size = splitBlockSize(options.capacity, options.fpp);
    return new SplitBlockBloomFilter({ ...options, blocks: size.blocks });
  }

  /** Hashes `value` by the column's type into `xxViews.hash`; throws for a wrong kind. */
  private hash(value: Key): void {
    hashParquetValue(this.typeId, this.type, value);
  }

  /** Adds `value`. True iff a bit changed (the value was certainly not in the filter before). */
  override add(value: K): boolean {
    this.hash(value);
    const h = xxViews.hash;
    return this.insertHash(h[0]!, h[1]!);
  }

  /** False if `value` was certainly never added; true if it probably was. */
  override has(value: K): boolean {
    this.hash(value);
    const h = xxViews.hash;
    return this.findHash(h[0]!, h[1]!);
  }

  /** Adds a value given as its PLAIN bytes (what a batch holds). */
  protected override addEncoded(bytes: Uint8Array): boolean {
    xxh64Key('bytes', bytes);
    const h = xxViews.hash;
    return this.insertHash(h[0]!, h[1]!);
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    xxh64Key('bytes', bytes);
    const h = xxViews.hash;
    return this.findHash(h[0]!, h[1]!);
  }

  /** `add` of every value; an array of strings (BYTE_ARRAY) goes through the kernel by chunks. */
  override addMany(values: Iterable<K>): number {
    if (this.kernel === null || this.typeId !== 6 || !Array.isArray(values)) {
      return super.addMany(values);
    }
    return addStrings(this.kernel, values, this.blocks, 8, this.bits as BitArray, (i) =>
      this.add(values[i]!),
    );
  }

  /** `has` of every value, in order (an array of strings: see {@link addMany}). */
  override hasMany(values: Iterable<K>, out?: boolean[]): boolean[] {
    if (this.kernel === null || this.typeId !== 6 || !Array.isArray(values)) {
      return super.hasMany(values, out);
    }
    return hasStrings(
      this.kernel,
      values,
      this.blocks,
      8,
      this.bits as BitArray,
      (i) => this.has(values[i]!),
      out,
    );
  }

  /**
   * Adds every packed value (its PLAIN bytes), in order; returns how many were new. XXH64 runs
   * over a whole chunk of values per WebAssembly call (hash/batch.ts), then each is inserted as
   * by `add`: the same bits and answers as value by value.
   */
  override addBatch(batch: PackedKeys, out?: Uint8Array): number {
    const n = checkPacked(batch);
    const flags = out === undefined ? null : checkOut(out, n);
    if (this.kernel !== null) return this.kernelBatch(batch, n, true, flags);
    return xxh64Chunks(batch, n, (h, at, start, stop) => {
      let added = 0;
      for (let j = start; j < stop; j++, at += 2) {
        const fresh = this.insertHash(h[at]!, h[at + 1]!);
        if (fresh) added++;
        if (flags !== null) flags[j] = fresh ? 1 : 0;
      }
      return added;
    });
  }

  /** `has` of every packed value: `out[i]` is 1 or 0 (see {@link addBatch}). */
  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const n = checkPacked(batch);
    const result = checkOut(out, n);
    if (this.kernel !== null) {
      this.kernelBatch(batch, n, false, result);
      return result;
    }
    xxh64Chunks(batch, n, (h, at, start, stop) => {
      for (let j = start; j < stop; j++, at += 2)
        result[j] = this.findHash(h[at]!, h[at + 1]!) ? 1 : 0;
      return 0;
    });
    return result;
  }

  /**
   * Values [0, n) of `batch` through the kernel (XXH64 and the probes of a chunk in two
   * WebAssembly calls, see ../blocked/kernel.ts); a value longer than the kernel's key area takes
   * the per-value path, with the same result.
   */
  private kernelBatch(batch: PackedKeys, n: number, add: boolean, out: Uint8Array | null): number {
    return this.kernel!.run(batch, n, this.blocks, 8, add, out, this.bits as BitArray, (i) => {
      const value = batch.bytes.subarray(batch.offsets[i]!, keyEnd(batch, i));
      return add ? this.addEncoded(value) : this.hasEncoded(value);
    });
  }

  /** Adds a 64-bit XXH64 hash computed elsewhere (the spec's `filter_insert(h)`). */
  addHash(hash: bigint): boolean {
    const h = BigInt.asUintN(64, hash);
    return this.insertHash(Number(h & 0xffffffffn) | 0, Number(h >> 32n) | 0);
  }

  /** Tests a 64-bit XXH64 hash computed elsewhere (the spec's `filter_check(h)`). */
  hasHash(hash: bigint): boolean {
    const h = BigInt.asUintN(64, hash);
    return this.findHash(Number(h & 0xffffffffn) | 0, Number(h >> 32n) | 0);
  }

  /** The PLAIN bytes' XXH64 of `value` for this column type, as Parquet defines it. */
  hashOf(value: K): bigint {
    this.hash(value);
    const h = xxViews.hash;
    return (BigInt(h[1]! >>> 0) << 32n) | BigInt(h[0]! >>> 0);
  }

  private insertHash(lo: number, hi: number): boolean {
    return insertSplitHash(this.bits, this.blocks, lo, hi);
  }

  private findHash(lo: number, hi: number): boolean {
    return findSplitHash(this.data, this.blocks, lo, hi);
  }

  /** What another filter must share with this one to be combined. */
  protected override requirements(other: this): readonly Requirement[] {
    return [
      ['have the same number of blocks', this.blocks, other.blocks],
      ['have the same column type', this.type, other.type],
    ];
  }

  /**
   * Values added, estimated from the bits set X: a value sets one bit in each word of its block,
   * so under a Poisson load a bit stays 0 with probability e^(−λ/32) and
   * n̂ = −32·z·ln(1 − X/m), rounded; `Infinity` when every bit is set.
   */
  override estimatedCount(): number {
    // The classic estimator with k = 8: m/k = 256·z/8 = 32·z.
    return estimateCount(this.bits.bitCount(), this.bitSize, 8);
  }

  override designPoint(): { capacity: number; fpp: number } {
    return splitBlockDesignPoint(this.blocks); // half of each word's bits set (see sizing.ts)
  }

  /**
   * The false positive rate the bits set now imply, exactly: the mean over blocks of
   * Π_i (bits set in word i / 32). O(m/32).
   */
  expectedFpp(): number {
    const d = this.data;
    let sum = 0;
    for (let b = 0; b < d.length; b += 8) {
      let p = 1;
      for (let w = 0; w < 8 && p !== 0; w++) p *= popcount32(d[b + w]!) / 32;
      sum += p;
    }
    return sum / this.blocks;
  }

  /** An independent copy (with the same kind of storage). */
  clone(): SplitBlockBloomFilter<K> {
    if (this.kernel === null) return new SplitBlockBloomFilter<K>(this.shape(), this.bits.clone());
    const copy = new SplitBlockBloomFilter<K>(this.shape());
    copy.data.set(this.data);
    copy.bits.recount();
    return copy;
  }

  /** The filter behind a {@link share} handle, on the same shared bits. */
  static fromShared<K extends Key = Key>(handle: SharedFilterHandle): SplitBlockBloomFilter<K> {
    const { shape, bits } = sharedBits<SplitBlockShape>(
      handle,
      'split-block',
      (s) => s.blocks * SPLIT_BLOCK_BITS,
    );
    return new SplitBlockBloomFilter<K>(shape, bits);
  }

  /** The explicit shape of this filter. */
  shape(): SplitBlockShape {
    return { blocks: this.blocks, type: this.type };
  }

  /** The bitset as Parquet stores it after the header: 32·z bytes, words little-endian (a copy). */
  toBitset(): Uint8Array {
    return wordsToBytes(this.data).slice();
  }

  /**
   * What a Parquet writer stores at the column chunk's `bloom_filter_offset`: the thrift
   * `BloomFilterHeader` (numBytes, BLOCK, XXHASH, UNCOMPRESSED) followed by the bitset. Its
   * length is the chunk's `bloom_filter_length`.
   */
  toParquet(): Uint8Array {
    const head = encodeParquetHeader(this.blocks * 32);
    const out = new Uint8Array(head.length + this.blocks * 32);
    out.set(head, 0);
    out.set(this.toBitset(), head.length);
    return out;
  }

  /** A filter over a copy of a Parquet bitset (32·z bytes, no header) for a column of `type`. */
  static fromBitset(
    bitset: Uint8Array,
    options: { type?: ParquetPhysicalType; shared?: boolean } = {},
  ): SplitBlockBloomFilter {
    if (!(bitset instanceof Uint8Array)) throw new TypeError('bitset must be a Uint8Array');
    if (bitset.length === 0 || bitset.length % 32 !== 0) {
      throw new RangeError(`bitset length must be a positive multiple of 32, got ${bitset.length}`);
    }
    const filter = new SplitBlockBloomFilter({ ...options, blocks: bitset.length / 32 });
    bytesToWords(bitset, filter.bits.data);
    filter.bits.recount();
    return filter;
  }

  /**
   * Reads a filter as Parquet stores it (thrift header, then the bitset), e.g. the
   * `bloom_filter_length` bytes at a column chunk's `bloom_filter_offset`. Throws `FormatError`
   * for a header that is not BLOCK / XXHASH / UNCOMPRESSED or a truncated bitset.
   */
  static fromParquet(
    bytes: Uint8Array,
    options: { type?: ParquetPhysicalType; shared?: boolean } = {},
  ): SplitBlockBloomFilter {
    const { headerLength, numBytes } = decodeParquetBloomFilter(bytes);
    return SplitBlockBloomFilter.fromBitset(
      bytes.subarray(headerLength, headerLength + numBytes),
      options,
    );
  }

  /** bloomkit's native format (filter type 6; see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(splitBlockFormatCore.parts(this));
  }

  protected override summary(): string {
    return `${this.blocks} blocks of 256 bits, type=${this.type} fill=${percent(this.bitCount, this.bitSize)} ≈${this.estimatedCount()} values`;
  }

  /**
   * Reads bytes written by {@link toBytes}. With `{ copy: false }` the words view a 4-byte-aligned
   * payload inside `bytes` on a little-endian host (see `DecodeOptions`).
   */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): SplitBlockBloomFilter<K> {
    return splitBlockFormatCore.decode(
      bytes,
      options,
      SplitBlockBloomFilter,
    ) as SplitBlockBloomFilter<K>;
  }
}
