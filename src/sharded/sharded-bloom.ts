/**
 * `ShardedBloomFilter`: the in-memory twin of `RedisBloomFilter`, with the same sharded layout
 * (layout.ts) and the same bytes, so a filter can be built offline and served from Redis, or a
 * Redis filter backed up to a file and queried locally, with identical answers.
 *
 * Guarantee: no false negatives. For a key never added, the rate is that of a blocked Bloom
 * filter: each shard of b bits holds about n/S keys with k positions, giving
 * ≈ (1 − e^(−k·(n/S)/b))^k per shard, within a few parts per thousand of the unblocked
 * (1 − e^(−kn/m))^k for shards of 2^23 bits (test/redis-sharded.test.ts measures it).
 *
 * Bytes: shard j is bytes [j·b/8, (j+1)·b/8), exactly the Redis string of that shard (padded with
 * zero bytes to b/8). Within a shard, bit o is byte `o >>> 3`, mask `0x80 >>> (o & 7)`: most
 * significant bit first, the order of Redis' SETBIT/GETBIT/BITFIELD (bit 0 is the MSB of byte 0).
 * Guava and bloomkit's classic filter number bits the other way (LSB first within 64-bit words);
 * {@link ShardedBloomFilter.toBloomFilter} converts a one-shard filter.
 *
 * Limits: 2^36 bits in all (bloomkit's MAX_BITS), shards of at most 2^32 bits, 1 to 255 hashes.
 * Keys cannot be removed (use `RedisCountingBloomFilter`).
 */

import { show } from '../errors.js';
import { checkOut, FilterBase, percent } from '../filters/base.js';
import { mitz64Chunks } from '../filters/batch-chunks.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { KeyOf, MembershipFilter, PackedKeys } from '../filters/filter.js';
import { checkPacked } from '../filters/packed.js';
import {
  bytesToWords,
  type DecodeOptions,
  joinContainer,
  wordsToBytes,
} from '../formats/native.js';
import { hashIndex } from '../hash/batch.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { estimateCount, expectedFpp } from '../math.js';
import {
  checkLayout,
  checkShardBits,
  DEFAULT_SHARD_BITS,
  Locator,
  multiplyShift,
  type ShardLayout,
  shardLayout,
} from './layout.js';
import { decodeSharded, shardedParts } from './sharded-codec.js';

/** Options of {@link ShardedBloomFilter.create} (and of `RedisBloomFilter.create`). */
export interface ShardedBloomOptions {
  /** Expected number of distinct keys (n): a positive safe integer. */
  capacity: number;
  /** Target false positive probability at `capacity` keys, in (0, 1). */
  fpp: number;
  /** Most bits per shard: a multiple of 64 in [64, 2^32]; default 2^23 (1 MiB). */
  shardBits?: number;
  /** Key encoding; default `'string'` (UTF-8, Guava's `stringFunnel(UTF_8)`). */
  funnel?: Funnel;
}

/** Everything that defines a sharded filter: its parameters and the shape they gave. */
export interface ShardedBloomShape extends ShardLayout {
  readonly capacity: number;
  readonly fpp: number;
  /** The shard size limit asked for (the shards have `shardBits` ≤ this). */
  readonly maxShardBits: number;
  readonly funnel: Funnel;
}

/** Computes the shape for `options`, checking every value. */
export function shardedShape(options: ShardedBloomOptions): ShardedBloomShape {
  const maxShardBits = checkShardBits('shardBits', options.shardBits ?? DEFAULT_SHARD_BITS);
  const funnel = checkFunnel(options.funnel ?? 'string');
  const layout = shardLayout(options.capacity, options.fpp, maxShardBits);
  return { ...layout, capacity: options.capacity, fpp: options.fpp, maxShardBits, funnel };
}

const REVERSED = new Uint8Array(256);
for (let i = 0; i < 256; i++) {
  let r = 0;
  for (let b = 0; b < 8; b++) if (i & (1 << b)) r |= 0x80 >>> b;
  REVERSED[i] = r;
}

export class ShardedBloomFilter<K extends Key = Key>
  extends FilterBase<K>
  implements MembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'ShardedBloomFilter';
  readonly shape: ShardedBloomShape;
  /** All shards, back to back (see the module comment for the bit order). */
  readonly bytes: Uint8Array;
  private readonly locator: Locator;
  private readonly shardBytes: number;

  /** A filter of an explicit shape, empty or over `bytes` (S·b/8 bytes, not copied). */
  constructor(shape: ShardedBloomShape, bytes?: Uint8Array) {
    super();
    checkLayout(shape);
    checkFunnel(shape.funnel);
    this.shape = shape;
    this.shardBytes = shape.shardBits / 8;
    const size = shape.shards * this.shardBytes;
    if (bytes !== undefined && bytes.length !== size) {
      throw new RangeError(`bytes has ${bytes.length} bytes, the shape needs ${size}`);
    }
    this.bytes = bytes ?? new Uint8Array(size);
    this.locator = new Locator(shape, shape.funnel);
  }

  /** An empty filter sized as `RedisBloomFilter.create` sizes it (see layout.ts). */
  static create<F extends Funnel = 'string'>(
    options: ShardedBloomOptions & { funnel?: F },
  ): ShardedBloomFilter<KeyOf<F>> {
    return new ShardedBloomFilter<KeyOf<F>>(shardedShape(options));
  }

  get funnel(): Funnel {
    return this.shape.funnel;
  }

  /** Number of shards (S). */
  get shards(): number {
    return this.shape.shards;
  }

  /** Bits per shard (b). */
  get shardBits(): number {
    return this.shape.shardBits;
  }

  /** Positions per key (k). */
  get hashes(): number {
    return this.shape.hashes;
  }

  /** Total bits, S·b. */
  get bitSize(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  /** The bytes of shard `i` (a view): what `GET` of that shard's Redis key returns, zero-padded. */
  shard(i: number): Uint8Array {
    const start = i * this.shardBytes;
    return this.bytes.subarray(start, start + this.shardBytes);
  }

  /** The shard and the k offsets in it of `key` (allocates; for tools and tests). */
  positionsOf(key: Key): { shard: number; offsets: number[] } {
    const shard = this.locator.locate(key);
    return { shard, offsets: Array.from(this.locator.offsets) };
  }

  /** Adds `key`; true iff a bit changed (the key was certainly new). */
  override add(key: K): boolean {
    return this.setAt(this.locator.locate(key));
  }

  protected override addEncoded(bytes: Uint8Array): boolean {
    return this.setAt(this.locator.locateBytes(bytes));
  }

  /**
   * Adds every packed key in order, as `add` key by key (a key repeated in the batch is new only
   * the first time); returns how many were new, and with `out`, `out[i]` = 1 if key i was. Each
   * chunk of keys is hashed and placed in one call (hash/batch.ts), the shards and offsets that
   * `locate` gives key by key.
   */
  override addBatch(batch: PackedKeys, out?: Uint8Array): number {
    const count = checkPacked(batch);
    return this.batch(batch, count, out === undefined ? null : checkOut(out, count), true);
  }

  /** `has` of every packed key: `out[i]` is 1 or 0 (see {@link addBatch} for the hashing). */
  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const count = checkPacked(batch);
    const result = checkOut(out, count);
    this.batch(batch, count, result, false);
    return result;
  }

  /**
   * Tests (`add` false) or sets the bits of keys [0, count) of `batch`; key i's answer (1 if it
   * holds every bit / 1 if it set one) goes to `answers[i]`. Returns the sum of the answers.
   */
  private batch(
    batch: PackedKeys,
    count: number,
    answers: Uint8Array | null,
    add: boolean,
  ): number {
    const { shards, hashes: k } = this.shape;
    const shardBytes = this.shardBytes;
    const bytes = this.bytes;
    return mitz64Chunks(batch, count, k, this.locator.mod, (p, w, start, stop) => {
      let sum = 0;
      // Probe i of key j is bit (mask i) of word (word i): shard bit 32·word + log2(mask), at
      // byte o >>> 3 under mask 0x80 >>> (o & 7) (Redis' bit order, see the module comment).
      for (let j = start, h = hashIndex + 1; j < stop; j++, h += 4, w += 2 * k) {
        const base = multiplyShift(p[h]!, shards) * shardBytes;
        let answer = add ? 0 : 1;
        for (let i = 0; i < k; i++) {
          const o = (p[w + i]! >>> 0) * 32 + 31 - Math.clz32(p[w + k + i]!);
          const at = base + Math.floor(o / 8);
          const mask = 0x80 >>> (o % 8);
          const v = bytes[at]!;
          if ((v & mask) !== 0) continue;
          if (!add) {
            answer = 0;
            break;
          }
          bytes[at] = v | mask;
          answer = 1;
        }
        if (answers !== null) answers[j] = answer;
        sum += answer;
      }
      return sum;
    });
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    return this.testAt(this.locator.locateBytes(bytes));
  }

  /** Sets the bits of the key just placed in `shard` (offsets in the locator); true if any changed. */
  private setAt(shard: number): boolean {
    const base = shard * this.shardBytes;
    const offsets = this.locator.offsets;
    const bytes = this.bytes;
    let changed = false;
    for (let i = 0; i < offsets.length; i++) {
      const o = offsets[i]!;
      const at = base + Math.floor(o / 8);
      const mask = 0x80 >>> (o % 8);
      const v = bytes[at]!;
      if ((v & mask) === 0) {
        bytes[at] = v | mask;
        changed = true;
      }
    }
    return changed;
  }

  /** False if `key` was certainly never added; true if it probably was. */
  override has(key: K): boolean {
    return this.testAt(this.locator.locate(key));
  }

  private testAt(shard: number): boolean {
    const base = shard * this.shardBytes;
    const offsets = this.locator.offsets;
    const bytes = this.bytes;
    for (let i = 0; i < offsets.length; i++) {
      const o = offsets[i]!;
      if ((bytes[base + Math.floor(o / 8)]! & (0x80 >>> (o % 8))) === 0) return false;
    }
    return true;
  }

  /** Forgets every key. */
  override clear(): void {
    this.bytes.fill(0);
  }

  /** Number of bits set. */
  bitCount(): number {
    let n = 0;
    const bytes = this.bytes;
    for (let i = 0; i < bytes.length; i++) {
      let v = bytes[i]!;
      v -= (v >>> 1) & 0x55;
      v = (v & 0x33) + ((v >>> 2) & 0x33);
      n += (v + (v >>> 4)) & 0x0f;
    }
    return n;
  }

  /** −(m/k)·ln(1 − bitCount/m) over the whole filter (Swamidass-Baldi; Guava's estimator). */
  override estimatedCount(): number {
    return estimateCount(this.bitCount(), this.bitSize, this.hashes);
  }

  /**
   * The design its shape keeps, as `bloomkit redis info` prints it: the capacity and the fpp it
   * was created with.
   */
  override designPoint(): { capacity: number; fpp: number } {
    return { capacity: this.shape.capacity, fpp: this.shape.fpp };
  }

  /** (bitCount/m)^k: the rate the bits set now imply (Guava's `expectedFpp`). */
  expectedFpp(): number {
    return expectedFpp(this.bitCount(), this.bitSize, this.hashes);
  }

  /** Same shape and same bits. */
  equals(other: unknown): boolean {
    if (!(other instanceof ShardedBloomFilter)) return false;
    const a = this.shape;
    const b = other.shape;
    if (
      a.capacity !== b.capacity ||
      a.fpp !== b.fpp ||
      a.maxShardBits !== b.maxShardBits ||
      a.funnel !== b.funnel ||
      a.shards !== b.shards ||
      a.shardBits !== b.shardBits ||
      a.hashes !== b.hashes
    ) {
      return false;
    }
    for (let i = 0; i < this.bytes.length; i++) if (this.bytes[i] !== other.bytes[i]) return false;
    return true;
  }

  /**
   * The classic `BloomFilter` with the same bits, for a one-shard filter: its positions are then
   * exactly Guava's for (capacity, fpp), so the result can be written with `toGuava()`.
   * Throws a `RangeError` for more than one shard.
   */
  toBloomFilter(): BloomFilter {
    if (this.shards !== 1) {
      throw new RangeError(
        `only a one-shard filter maps onto a classic BloomFilter, this one has ${this.shards} shards`,
      );
    }
    const filter = new BloomFilter({
      bits: this.shardBits,
      hashes: this.hashes,
      funnel: this.funnel,
      strategy: 'MURMUR128_MITZ_64',
    });
    const lsbFirst = new Uint8Array(this.bytes.length);
    for (let i = 0; i < lsbFirst.length; i++) lsbFirst[i] = REVERSED[this.bytes[i]!]!;
    bytesToWords(lsbFirst, filter.bits.data);
    filter.bits.recount();
    return filter;
  }

  /**
   * The one-shard filter with the same bits as a classic `BloomFilter` built for (capacity, fpp)
   * with MURMUR128_MITZ_64, e.g. read from Guava's bytes with `BloomFilter.fromGuava`: build with
   * Guava, serve from Redis (`RedisBloomFilter.fromBytes(client, name, result.toBytes())`). Pass
   * the capacity and fpp the filter was created with (Guava does not store them); throws a
   * `RangeError` if they do not give the filter's size and k, or if it does not fit in one shard
   * of `shardBits` (default 2^23; at most 2^32).
   */
  static fromBloomFilter(
    bloom: BloomFilter,
    options: { capacity: number; fpp: number; shardBits?: number },
  ): ShardedBloomFilter {
    if (!(bloom instanceof BloomFilter)) {
      throw new TypeError(`bloom must be a BloomFilter, got ${show(bloom)}`);
    }
    if (bloom.strategy !== 'MURMUR128_MITZ_64') {
      throw new RangeError(`only MURMUR128_MITZ_64 filters map onto shards, got ${bloom.strategy}`);
    }
    const shardBits = options.shardBits ?? Math.max(DEFAULT_SHARD_BITS, bloom.bitSize);
    const shape = shardedShape({ ...options, shardBits, funnel: bloom.funnel });
    if (shape.shards !== 1 || shape.shardBits !== bloom.bitSize || shape.hashes !== bloom.hashes) {
      throw new RangeError(
        `a filter of ${bloom.bitSize} bits and ${bloom.hashes} hashes is not the one shard that capacity ${show(options.capacity)} and fpp ${show(options.fpp)} give with shardBits ${shardBits} (${shape.shards} shards of ${shape.shardBits} bits, ${shape.hashes} hashes)`,
      );
    }
    const lsbFirst = wordsToBytes(bloom.bits.data);
    const bytes = new Uint8Array(lsbFirst.length);
    for (let i = 0; i < bytes.length; i++) bytes[i] = REVERSED[lsbFirst[i]!]!;
    return new ShardedBloomFilter(shape, bytes);
  }

  /** bloomkit's native format, filter type `shardedBloom` (see sharded-codec.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(shardedParts(this));
  }

  protected override summary(): string {
    const s = this.shape;
    return `${s.shards} shards of ${s.shardBits} bits, k=${s.hashes} funnel=${s.funnel} fill=${percent(this.bitCount(), this.bitSize)} ≈${this.estimatedCount()} keys`;
  }

  /** Reads the bytes written by {@link ShardedBloomFilter.toBytes} or `RedisBloomFilter.toBytes`. */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): ShardedBloomFilter<K> {
    return decodeSharded(bytes, options, ShardedBloomFilter) as ShardedBloomFilter<K>;
  }
}
