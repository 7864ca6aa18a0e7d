/**
 * The cache-local (blocked) Bloom filter: every probe of a key lands in one 512-bit block, one
 * 64-byte cache line, so a lookup costs one cache miss where a classic filter pays up to k.
 * Design: Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom Filters" (WEA 2007;
 * ACM JEA 14, 2009), in the form of RocksDB's FastLocalBloom (util/bloom_impl.h, format_version 5).
 *
 * Guarantee: `has(key)` is true for every key ever added (no false negatives). For a key never
 * added it is true with probability about
 *   p(λ, k) = Σ_j Pois(j; λ) · (1 − (1 − 1/512)^(k·j))^k,     λ = n / z (keys per block)
 *
 * after n adds into z blocks with k probes: a block receives a Poisson number of keys, and inside
 * it the filter is a classic Bloom filter of 512 bits. {@link BlockedBloomFilter.create} picks
 * the fewest blocks (and the best k) whose model rate is at most 0.97·fpp. The model matches
 * measurements (10 bits/key, k = 6: model 0.958%, RocksDB measured 0.957%); the 3% headroom keeps
 * the measured rate under fpp despite sampling noise and any correlation of the probe sequence.
 * At fpp 0.01 that is 9.97 bits per key with k = 6 (measured 0.967% over 10^6 absent keys); a
 * classic filter needs 9.59 (see BENCHMARKS.md).
 *
 * Hash and positions (no BigInt, no `%`): h = XXH64(funnel bytes, seed 0) (hash/xxhash64.ts);
 *   block = ⌊lo32(h) · z / 2^32⌋                  (multiply-shift range reduction, Lemire 2019)
 *   x = hi32(h); repeat k: bit = x >>> 23 (top 9 bits, 0..511); x = x · 0x9e3779b9 mod 2^32
 * and bit b of the block is bit b & 31 of its 32-bit word b >>> 5. The key bytes are those of the
 * filter's funnel (hash/keys.ts), so a key is encoded exactly as for the classic filter.
 *
 * Limits: at most 2^27 blocks (2^36 bits, 8 GiB), 1 to 32 probes; no removal; the rate rises
 * past capacity (`saturation()`). Not RocksDB's bytes: RocksDB hashes with XXH3, this with XXH64.
 */

import { BitArray, type BitStorage, popcount32 } from '../../bits/bit-array.js';
import type { SharedFilterHandle } from '../../bits/shared-handle.js';
import { checkOptions, checkPositiveInteger } from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { WASM_BASE64 as BLOCKED_WASM } from '../../hash/blocked-wasm.js';
import { checkFunnel, type Funnel, type Key } from '../../hash/keys.js';
import { lazyWasm } from '../../hash/wasm-loader.js';
import { MAX_BATCH, xxh64Key, xxh64Many, xxViews } from '../../hash/xxhash64.js';
import { answerBytes, booleans, checkAnswers, checkOut, percent } from '../base.js';
import { xxh64Chunks } from '../batch-chunks.js';
import { BitFilter, bitsOf, sharedBits } from '../bit-filter.js';
import type { KeyOf, MembershipFilter, PackedKeys, Requirement } from '../filter.js';
import { checkPacked, keyEnd } from '../packed.js';
import { addHashes, hasHashes } from './batch.js';
import { blockedFormat } from './format.js';
import { addStrings, BlockedKernel, type BlockProbeExports, hasStrings } from './kernel.js';
import {
  BLOCK_BITS,
  blockedDesignPoint,
  blockedSize,
  fastRange32,
  MAX_BLOCKS,
  MAX_PROBES,
} from './sizing.js';

export {
  BLOCK_BITS,
  type BlockedSize,
  blockedFalsePositiveRate,
  blockedSize,
  fastRange32,
  MAX_BLOCKS,
  MAX_PROBES,
} from './sizing.js';

const GOLDEN = 0x9e3779b9 | 0;

/** The blocked filter's probe module (hash/wasm/blocked.wat), compiled on first use. */
const BLOCKED_MODULE = /* @__PURE__ */ lazyWasm<BlockProbeExports>(BLOCKED_WASM);

/** Options shared by every way of making a blocked filter. */
export interface BlockedBloomFilterCommonOptions<F extends Funnel = Funnel> {
  /** Key encoding; default `'string'` (UTF-8, as the classic filter). */
  funnel?: F;
  /** Keep the bits in a `SharedArrayBuffer` written atomically, for worker threads. */
  shared?: boolean;
}

/** Options of {@link BlockedBloomFilter.create}. */
export interface BlockedBloomFilterCreateOptions<F extends Funnel = Funnel>
  extends BlockedBloomFilterCommonOptions<F> {
  /** Expected number of distinct keys (n): a positive safe integer. */
  capacity: number;
  /** Target false positive probability at `capacity` keys, in (0, 1). */
  fpp: number;
}

/** An explicit shape: `new BlockedBloomFilter({ blocks, hashes })`. */
export interface BlockedBloomFilterShape extends BlockedBloomFilterCommonOptions {
  /** Number of 512-bit blocks, 1 to 2^27. */
  blocks: number;
  /** Probes per key, 1 to 32. */
  hashes: number;
}

export class BlockedBloomFilter<K extends Key = Key>
  extends BitFilter<K>
  implements MembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'BlockedBloomFilter';
  protected override readonly sharedType = 'blocked';
  /** The bit storage (plain or shared); block b is words [16b, 16b + 16). */
  override readonly bits: BitStorage;
  /** Number of 512-bit blocks (z). */
  readonly blocks: number;
  /** Probes per key (k). */
  readonly hashes: number;
  readonly funnel: Funnel;
  private readonly data: Uint32Array;
  /** Plain bits inside a wasm kernel (see kernel.ts), or null for the general path. */
  private readonly kernel: BlockedKernel | null;

  /** A filter of an explicit shape, or over existing storage of 512·`blocks` bits. */
  constructor(shape: BlockedBloomFilterShape, storage?: BitStorage) {
    super();
    checkOptions('shape', shape);
    this.blocks = checkPositiveInteger('blocks', shape.blocks, MAX_BLOCKS);
    this.hashes = checkPositiveInteger('hashes', shape.hashes, MAX_PROBES);
    this.funnel = checkFunnel(shape.funnel ?? 'string');
    const bitSize = this.blocks * BLOCK_BITS;
    this.kernel =
      storage === undefined && !shape.shared
        ? BlockedKernel.create(this.blocks, BLOCK_BITS / 8, BLOCKED_MODULE)
        : null;
    this.bits =
      this.kernel === null
        ? bitsOf(bitSize, shape.shared, storage)
        : new BitArray(bitSize, this.kernel.data, 0);
    this.data = this.bits.data;
  }

  /**
   * A filter for `capacity` keys at false positive rate `fpp` (see {@link blockedSize}):
   * `capacity: 1_000_000, fpp: 0.01` → 19,471 blocks (1.25 MB, 9.97 bits/key), k = 6.
   */
  static create<F extends Funnel = 'string'>(
    options: BlockedBloomFilterCreateOptions<F>,
  ): BlockedBloomFilter<KeyOf<F>> {
    checkOptions('options', options);
    const size = blockedSize(options.capacity, options.fpp);
    return new BlockedBloomFilter<KeyOf<F>>({
      ...options,
      blocks: size.blocks,
      hashes: size.hashes,
    });
  }

  /** Adds `key`. True iff a bit changed, i.e. the key was certainly not in the filter before. */
  override add(key: K): boolean {
    return this.addAs(this.funnel, key);
  }

  /** False if `key` was certainly never added; true if it probably was. */
  override has(key: K): boolean {
    return this.hasAs(this.funnel, key);
  }

  protected override addEncoded(bytes: Uint8Array): boolean {
    return this.addAs('bytes', bytes);
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    return this.hasAs('bytes', bytes);
  }

  private addAs(funnel: Funnel, key: Key): boolean {
    xxh64Key(funnel, key);
    const h = xxViews.hash;
    const base = fastRange32(h[0]!, this.blocks) << 4;
    const data = this.data;
    let x = h[1]!;
    let changed = false;
    for (let i = this.hashes; i > 0; i--) {
      const word = base + (x >>> 28);
      const mask = 1 << (x >>> 23);
      // Only a bit that is still 0 goes through the storage (which keeps the count, or is atomic).
      if ((data[word]! & mask) === 0 && this.bits.setMasked(word, mask)) changed = true;
      x = Math.imul(x, GOLDEN);
    }
    return changed;
  }

  private hasAs(funnel: Funnel, key: Key): boolean {
    xxh64Key(funnel, key);
    const h = xxViews.hash;
    const base = fastRange32(h[0]!, this.blocks) << 4;
    const data = this.data;
    let x = h[1]!;
    // Branch-free: AND the probed bits (x >>> 23 shifts by bits 23..27 of x, the bit in the word).
    let all = 1;
    for (let i = this.hashes; i > 0; i--) {
      all &= data[base + (x >>> 28)]! >>> (x >>> 23);
      x = Math.imul(x, GOLDEN);
    }
    return all !== 0;
  }

  /**
   * Adds every key, in order; returns how many were new. For an array, one WebAssembly call
   * hashes up to 1020 keys and the blocks are touched before they are written (see batch.ts):
   * the same result as `add` key by key, also when a key is of the wrong kind (the keys before
   * it are added, then its error is thrown). Any other iterable goes key by key.
   */
  override addMany(keys: Iterable<K>): number {
    if (!Array.isArray(keys)) return super.addMany(keys);
    if (this.kernel !== null && this.funnel === 'string') {
      const one = (i: number) => this.add(keys[i]!);
      return addStrings(this.kernel, keys, this.blocks, this.hashes, this.bits as BitArray, one);
    }
    let added = 0;
    for (let start = 0; start < keys.length; start += MAX_BATCH) {
      const count = Math.min(MAX_BATCH, keys.length - start);
      try {
        xxh64Many(this.funnel, keys, start, count);
      } catch (error) {
        for (let j = 0; j < count; j++) this.add(keys[start + j]!);
        throw error;
      }
      if (this.kernel === null) {
        added += addHashes(this.bits, this.blocks, this.hashes, xxViews.many, 0, count);
      } else {
        this.kernel.hashes(xxViews.many, 0, count, this.blocks, this.hashes, true);
        added += this.kernel.take(count, true, null, 0, this.bits as BitArray);
      }
    }
    return added;
  }

  /** `has` for every key, in order (an array takes the batch path of {@link addMany}). */
  override hasMany(keys: Iterable<K>, out?: boolean[]): boolean[] {
    if (!Array.isArray(keys)) return super.hasMany(keys, out);
    if (this.kernel !== null && this.funnel === 'string') {
      const one = (i: number) => this.has(keys[i]!);
      return hasStrings(
        this.kernel,
        keys,
        this.blocks,
        this.hashes,
        this.bits as BitArray,
        one,
        out,
      );
    }
    checkAnswers(out);
    const found = answerBytes(keys.length);
    for (let start = 0; start < keys.length; start += MAX_BATCH) {
      const count = Math.min(MAX_BATCH, keys.length - start);
      xxh64Many(this.funnel, keys, start, count);
      if (this.kernel === null) {
        hasHashes(this.data, this.blocks, this.hashes, xxViews.many, 0, count, found, start);
      } else {
        this.kernel.hashes(xxViews.many, 0, count, this.blocks, this.hashes, false);
        this.kernel.take(count, false, found, start, this.bits as BitArray);
      }
    }
    return booleans(found, out);
  }

  /**
   * Adds every packed key (its funnel bytes, see `PackedKeys`), in order; returns how many were
   * new. The keys are hashed where their bytes lie, a chunk per WebAssembly call, then touched
   * and probed (see batch.ts): the same bits and answers as `add` key by key.
   */
  override addBatch(batch: PackedKeys, out?: Uint8Array): number {
    const n = checkPacked(batch);
    const flags = out === undefined ? null : checkOut(out, n);
    if (this.kernel !== null) return this.kernelBatch(batch, n, true, flags);
    return xxh64Chunks(batch, n, (h, at, start, stop) =>
      addHashes(this.bits, this.blocks, this.hashes, h, at, stop - start, flags, start),
    );
  }

  /** `has` of every packed key: `out[i]` is 1 or 0 (see {@link addBatch}). */
  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const n = checkPacked(batch);
    const result = checkOut(out, n);
    if (this.kernel !== null) {
      this.kernelBatch(batch, n, false, result);
      return result;
    }
    xxh64Chunks(batch, n, (h, at, start, stop) =>
      hasHashes(this.data, this.blocks, this.hashes, h, at, stop - start, result, start),
    );
    return result;
  }

  /**
   * Keys [0, n) of `batch` through the kernel (see kernel.ts); a key longer than the kernel's key
   * area takes the per-key path, with the same result.
   */
  private kernelBatch(batch: PackedKeys, n: number, add: boolean, out: Uint8Array | null): number {
    return this.kernel!.run(
      batch,
      n,
      this.blocks,
      this.hashes,
      add,
      out,
      this.bits as BitArray,
      (i) => {
        const key = batch.bytes.subarray(batch.offsets[i]!, keyEnd(batch, i));
        return add ? this.addAs('bytes', key) : this.hasAs('bytes', key);
      },
    );
  }

  /** What another filter must share with this one to be combined. */
  protected override requirements(other: this): readonly Requirement[] {
    return [
      ['have the same number of blocks', this.blocks, other.blocks],
      ['have the same number of probes', this.hashes, other.hashes],
      ['have equal funnels', this.funnel, other.funnel],
    ];
  }

  /**
   * Keys added, estimated from the bits set X under the Poisson load model:
   * n̂ = −z·ln(1 − X/m) / (1 − (1 − 1/512)^k), rounded; `Infinity` when every bit is set.
   */
  override estimatedCount(): number {
    const m = this.bitSize;
    const perKey = -Math.expm1(this.hashes * Math.log1p(-1 / BLOCK_BITS));
    const x = (-this.blocks * Math.log1p(-this.bits.bitCount() / m)) / perKey;
    return Number.isFinite(x) ? Math.round(x) : Number.POSITIVE_INFINITY;
  }

  /** The design point of its blocks and probes (see `saturation()`, `blockedDesignPoint`). */
  override designPoint(): { capacity: number; fpp: number } {
    return blockedDesignPoint(this.blocks, this.hashes);
  }

  /**
   * The false positive rate the bits set now imply, exactly: the mean over blocks of
   * (bits set in the block / 512)^k (a lookup picks a uniform block, then k bits in it). O(m/32).
   */
  expectedFpp(): number {
    const data = this.data;
    const k = this.hashes;
    let sum = 0;
    for (let b = 0; b < data.length; b += 16) {
      let c = 0;
      for (let w = 0; w < 16; w++) c += popcount32(data[b + w]!);
      if (c !== 0) sum += (c / BLOCK_BITS) ** k;
    }
    return sum / this.blocks;
  }

  /** An independent copy (with the same kind of storage). */
  clone(): BlockedBloomFilter<K> {
    if (this.kernel === null) return new BlockedBloomFilter<K>(this.shape(), this.bits.clone());
    const copy = new BlockedBloomFilter<K>(this.shape());
    copy.data.set(this.data);
    copy.bits.recount();
    return copy;
  }

  /** The explicit shape of this filter. */
  shape(): BlockedBloomFilterShape {
    return { blocks: this.blocks, hashes: this.hashes, funnel: this.funnel };
  }

  /** The filter behind a {@link share} handle, on the same shared bits. */
  static fromShared<K extends Key = Key>(handle: SharedFilterHandle): BlockedBloomFilter<K> {
    const { shape, bits } = sharedBits<BlockedBloomFilterShape>(
      handle,
      'blocked',
      (s) => s.blocks * BLOCK_BITS,
    );
    return new BlockedBloomFilter<K>(shape, bits);
  }

  /** bloomkit's native format (filter type 5; see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(blockedFormat.parts(this));
  }

  protected override summary(): string {
    return `${this.blocks} blocks of 512 bits, k=${this.hashes} funnel=${this.funnel} fill=${percent(this.bitCount, this.bitSize)} ≈${this.estimatedCount()} keys`;
  }

  /**
   * Reads bytes written by {@link toBytes}. With `{ copy: false }` the words view a 4-byte-aligned
   * payload inside `bytes` on a little-endian host (see `DecodeOptions`).
   */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): BlockedBloomFilter<K> {
    return blockedFormat.decode(bytes, options, BlockedBloomFilter) as BlockedBloomFilter<K>;
  }
}
