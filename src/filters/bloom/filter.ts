/**
 * The classic Bloom filter (Bloom, "Space/Time Trade-offs in Hash Coding with Allowable Errors",
 * CACM 1970), bit for bit the same as Guava's `com.google.common.hash.BloomFilter` (31.1).
 *
 * Guarantee: `has(key)` is true for every key ever added (no false negatives, ever). For a key
 * never added it is true with probability about (1 − e^(−kn/m))^k after n adds into m bits with
 * k hashes; sized by {@link BloomFilter.create} that is the requested fpp at `capacity` keys.
 *
 * Each key is hashed once with MurmurHash3 x64 128 (seed 0) over its funnel's bytes; the k bit
 * positions come from the two 64-bit halves by double hashing (Guava MURMUR128_MITZ_64, see
 * `hash/strategies.ts`). A filter built here and one built by Guava from the same keys have the
 * same bits: `toGuava()` writes Guava's `writeTo` bytes and `fromGuava()` reads them.
 *
 * Limits: at most 2^36 bits (8 GiB) and 255 hashes (Guava's own bound). Items cannot be removed
 * (see `CountingBloomFilter`); the rate rises past the sized capacity (watch `expectedFpp()`).
 */

import { BitArray, type BitStorage } from '../../bits/bit-array.js';
import { SharedBitArray } from '../../bits/shared-bit-array.js';
import type { SharedFilterHandle } from '../../bits/shared-handle.js';
import { checkOptions, checkPositiveInteger, checkProbability } from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { BloomKernel, hashKey, mitz64Probes, views } from '../../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../../hash/keys.js';
import {
  checkStrategy,
  Modulus,
  mitz32Indexes,
  mitz64Indexes,
  type StrategyName,
} from '../../hash/strategies.js';
import { bloomDesignPoint, estimateCount, expectedFpp, MAX_BITS, sizeBloom } from '../../math.js';
import { answerBytes, booleans, checkAnswers, checkOut, percent } from '../base.js';
import { BitFilter, bitsOf, sharedBits } from '../bit-filter.js';
import type { KeyOf, MembershipFilter, PackedKeys, Requirement } from '../filter.js';
import { checkPacked, keyEnd } from '../packed.js';
import { kernelAdd, kernelBatch, storageAddBatch, storageHasBatch } from './batch.js';
import { bloomFormatCore } from './format.js';

/** Key i of a packed batch, as a view. */
function packedKey(batch: PackedKeys, i: number): Uint8Array {
  return batch.bytes.subarray(batch.offsets[i]!, keyEnd(batch, i));
}

import { readGuava, writeGuava } from './guava.js';

/** Options shared by every way of making a classic filter. */
export interface BloomFilterCommonOptions<F extends Funnel = Funnel> {
  /** Key encoding; default `'string'` (UTF-8, Guava's `stringFunnel(UTF_8)`). */
  funnel?: F;
  /** Guava strategy; default `'MURMUR128_MITZ_64'`. */
  strategy?: StrategyName;
  /** Keep the bits in a `SharedArrayBuffer` written atomically, for worker threads. */
  shared?: boolean;
}

/** Options of {@link BloomFilter.create}: Guava sizing from an expected count and rate. */
export interface BloomFilterCreateOptions<F extends Funnel = Funnel>
  extends BloomFilterCommonOptions<F> {
  /** Expected number of distinct keys (n): a positive safe integer. */
  capacity: number;
  /** Target false positive probability at `capacity` keys, in (0, 1). */
  fpp: number;
}

/** Options of `new BloomFilter(...)`: an explicit shape. */
export interface BloomFilterShape<F extends Funnel = Funnel> extends BloomFilterCommonOptions<F> {
  /** Bits (m); rounded up to a multiple of 64 as Guava does. */
  bits: number;
  /** Hash functions per key (k), 1 to 255. */
  hashes: number;
}

export class BloomFilter<K extends Key = Key> extends BitFilter<K> implements MembershipFilter<K> {
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'BloomFilter';
  protected override readonly sharedType = 'classic';
  /** The bit storage (plain or shared). */
  declare readonly bits: BitStorage;
  /** Number of hash functions (bit positions per key), k. */
  declare readonly hashes: number;
  declare readonly funnel: Funnel;
  declare readonly strategy: StrategyName;
  declare private readonly mod: Modulus;
  declare private readonly data: Uint32Array;
  declare private readonly mitz64: boolean;
  declare private readonly idx: Float64Array;
  /** Plain bits inside a wasm kernel (see hash/hasher.ts), or null for the general path. */
  declare private readonly kernel: BloomKernel | null;
  declare private readonly plain: BitArray | null;

  /**
   * A filter of an explicit shape, or over existing storage (`storage` must have `bits` bits,
   * rounded up to a multiple of 64). Most callers want {@link BloomFilter.create}.
   */
  constructor(shape: BloomFilterShape, storage?: BitStorage) {
    super();
    checkOptions('shape', shape);
    const bits = checkPositiveInteger('bits', shape.bits, MAX_BITS);
    const hashes = checkPositiveInteger('hashes', shape.hashes, 255);
    const bitSize = Math.ceil(bits / 64) * 64;
    this.funnel = checkFunnel(shape.funnel ?? 'string');
    this.strategy = checkStrategy(shape.strategy ?? 'MURMUR128_MITZ_64');
    this.mitz64 = this.strategy === 'MURMUR128_MITZ_64';
    this.kernel =
      storage === undefined && !shape.shared && this.mitz64 ? BloomKernel.create(bitSize) : null;
    this.plain = this.kernel === null ? null : new BitArray(bitSize, this.kernel.data, 0);
    this.bits = this.plain ?? bitsOf(bitSize, shape.shared, storage);
    this.hashes = hashes;
    this.mod = new Modulus(bitSize);
    this.data = this.bits.data;
    this.idx = new Float64Array(hashes);
  }

  /**
   * A filter for `capacity` keys at false positive rate `fpp`, sized exactly as Guava 31.1's
   * `BloomFilter.create(funnel, capacity, fpp)`: m = ⌊−n·ln p / ln²2⌋ bits (rounded up to 64),
   * k = max(1, round(m/n · ln 2)). `capacity: 1000, fpp: 0.01` → 9600 bits, k = 7.
   */
  static create<F extends Funnel = 'string'>(
    options: BloomFilterCreateOptions<F>,
  ): BloomFilter<KeyOf<F>> {
    checkOptions('options', options);
    checkProbability('fpp', options.fpp);
    const size = sizeBloom(options.capacity, options.fpp);
    return new BloomFilter<KeyOf<F>>({ ...options, bits: size.bits, hashes: size.hashes });
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
    const k = this.hashes;
    if (this.kernel !== null) {
      const added = this.kernel.add(funnel, key, k, this.mod);
      if (added >= 0) {
        this.plain!.noteSet(added);
        return added > 0;
      }
    }
    const bits = this.bits;
    let changed = false;
    if (this.mitz64) {
      mitz64Probes(funnel, key, k, this.mod);
      return bits.setProbes(views.words, views.masks, k);
    }
    hashKey(funnel, key);
    mitz32Indexes(views.hash, k, this.mod.m, this.idx);
    for (let i = 0; i < k; i++) if (bits.set(this.idx[i]!)) changed = true;
    return changed;
  }

  private hasAs(funnel: Funnel, key: Key): boolean {
    const k = this.hashes;
    if (this.kernel !== null) {
      const found = this.kernel.has(funnel, key, k, this.mod);
      if (found >= 0) return found === 1;
    }
    const data = this.data;
    if (this.mitz64) {
      mitz64Probes(funnel, key, k, this.mod);
      const words = views.words;
      const masks = views.masks;
      for (let i = 0; i < k; i++) if ((data[words[i]!]! & masks[i]!) === 0) return false;
      return true;
    }
    hashKey(funnel, key);
    mitz32Indexes(views.hash, k, this.mod.m, this.idx);
    for (let i = 0; i < k; i++) {
      const j = this.idx[i]!;
      if ((data[(j / 32) | 0]! & (1 << (j & 31))) === 0) return false;
    }
    return true;
  }

  /**
   * Adds every key, in order; returns how many were new. An array of strings (funnel 'string')
   * is packed chunk by chunk into the kernel's memory and hashed and set a chunk per WebAssembly
   * call (see batch.ts): the same bits and result as `add` key by key, also when a key is of the
   * wrong kind (the keys before it are added, then its error is thrown).
   */
  override addMany(keys: Iterable<K>): number {
    if (this.kernel === null || this.funnel !== 'string' || !Array.isArray(keys)) {
      return super.addMany(keys);
    }
    const keyAt = (i: number) => this.add(keys[i]!);
    return kernelAdd(
      this.kernel,
      keys,
      keys.length,
      this.hashes,
      this.mod,
      null,
      keyAt,
      this.plain!,
    );
  }

  /**
   * `has` of each key, in order. An array of strings (funnel 'string') is packed chunk by chunk
   * into the kernel's memory and hashed and tested a chunk per WebAssembly call (see batch.ts):
   * the same answers as `has` key by key, also when a key is of the wrong kind (its error is
   * thrown).
   */
  override hasMany(keys: Iterable<K>, out?: boolean[]): boolean[] {
    if (this.kernel === null || this.funnel !== 'string' || !Array.isArray(keys)) {
      return super.hasMany(keys, out);
    }
    checkAnswers(out);
    const found = answerBytes(keys.length);
    const keyAt = (i: number) => this.has(keys[i]!);
    kernelBatch(
      this.kernel,
      keys,
      keys.length,
      this.hashes,
      this.mod,
      false,
      found,
      keyAt,
      this.plain!,
    );
    return booleans(found, out);
  }

  /**
   * Adds every packed key (its funnel bytes, see `PackedKeys`), in order; returns how many were
   * new. MurmurHash3 and the MITZ_64 walks run over a whole chunk of keys per WebAssembly call
   * (see batch.ts): the same bits, and the same answers, as `add` key by key.
   */
  override addBatch(batch: PackedKeys, out?: Uint8Array): number {
    if (!this.mitz64) return super.addBatch(batch, out);
    const n = checkPacked(batch);
    const flags = out === undefined ? null : checkOut(out, n);
    const k = this.hashes;
    if (this.kernel === null) return storageAddBatch(this.bits, batch, n, k, this.mod, flags);
    const keyAt = (i: number) => this.addEncoded(packedKey(batch, i));
    return kernelAdd(this.kernel, batch, n, k, this.mod, flags, keyAt, this.plain!);
  }

  /** `has` of every packed key: `out[i]` is 1 or 0 (see {@link addBatch}). */
  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    if (!this.mitz64) return super.hasBatch(batch, out);
    const n = checkPacked(batch);
    const result = checkOut(out, n);
    const k = this.hashes;
    if (this.kernel === null) storageHasBatch(this.data, batch, n, k, this.mod, result);
    else {
      kernelBatch(
        this.kernel,
        batch,
        n,
        k,
        this.mod,
        false,
        result,
        (i) => this.hasEncoded(packedKey(batch, i)),
        this.plain!,
      );
    }
    return result;
  }

  /**
   * Tests (`add` false) or sets (`add` true) the MITZ_64 bits of keys already hashed, in the
   * filter's wasm kernel: `count` (at most 1024) MurmurHash3 rows [h1 lo, h1 hi, h2 lo, h2 hi] of
   * `h` from row `at`, in order. `out[j]` gets 1/0 (all bits set) for a test, the bits key j set
   * (nonzero: new) for an add, exactly as `has` / `add` of that key. Returns their sum, or -1 (and
   * does nothing) when the filter has no kernel. For the scalable filter, which hashes a key once
   * for all its layers.
   * @internal
   */
  kernelHashes(h: Int32Array, at: number, count: number, add: boolean, out: Uint8Array): number {
    const kernel = this.kernel;
    if (kernel === null) return -1;
    const sum = kernel.hashes(h, at, count, this.hashes, this.mod, add, out);
    if (add) this.plain!.noteSet(sum);
    return sum;
  }

  /**
   * The k bit indexes of `key` in this filter, in probe order (for tools, tests and storages
   * that are not in memory). Allocates the result.
   */
  indexesOf(key: K): number[] {
    hashKey(this.funnel, key);
    const out = new Float64Array(this.hashes);
    if (this.mitz64) mitz64Indexes(views.hash, this.hashes, this.mod, out);
    else mitz32Indexes(views.hash, this.hashes, this.mod.m, out);
    return Array.from(out);
  }

  /** What another filter must share with this one to be combined (Guava's putAll checks). */
  protected override requirements(other: this): readonly Requirement[] {
    return [
      ['have the same number of hash functions', this.hashes, other.hashes],
      ['have the same size underlying bit arrays', this.bitSize, other.bitSize],
      ['have equal strategies', this.strategy, other.strategy],
      ['have equal funnels', this.funnel, other.funnel],
    ];
  }

  /** Guava `approximateElementCount()`: −(m/k)·ln(1 − bitCount/m), rounded half up. */
  override estimatedCount(): number {
    return estimateCount(this.bits.bitCount(), this.bitSize, this.hashes);
  }

  /** The design point of m bits and k hashes (see `saturation()`, math.ts `bloomDesignPoint`). */
  override designPoint(): { capacity: number; fpp: number } {
    return bloomDesignPoint(this.bitSize, this.hashes);
  }

  /** Guava `expectedFpp()`: (bitCount/m)^k, the rate that the bits set now imply. */
  expectedFpp(): number {
    return expectedFpp(this.bits.bitCount(), this.bitSize, this.hashes);
  }

  /** An independent copy (with the same kind of storage). */
  clone(): BloomFilter<K> {
    if (this.bits instanceof SharedBitArray)
      return new BloomFilter<K>(this.shape(), this.bits.clone());
    const copy = new BloomFilter<K>(this.shape());
    copy.bits.data.set(this.data);
    copy.bits.recount();
    return copy;
  }

  /** The explicit shape of this filter. */
  shape(): BloomFilterShape {
    return {
      bits: this.bitSize,
      hashes: this.hashes,
      funnel: this.funnel,
      strategy: this.strategy,
    };
  }

  /** The filter behind a {@link share} handle, on the same shared bits. */
  static fromShared<K extends Key = Key>(handle: SharedFilterHandle): BloomFilter<K> {
    const { shape, bits } = sharedBits<BloomFilterShape>(
      handle,
      'classic',
      (s) => Math.ceil(s.bits / 64) * 64,
    );
    return new BloomFilter<K>(shape, bits);
  }

  /** Guava's `writeTo` bytes (see `guava.ts`). */
  toGuava(): Uint8Array {
    return writeGuava(this);
  }

  /**
   * Reads Guava's `writeTo` bytes, as `BloomFilter.readFrom(in, funnel)`. The funnel is not in
   * Guava's bytes: pass the one the Java side used (default `'string'`).
   */
  static fromGuava<F extends Funnel = 'string'>(
    bytes: Uint8Array,
    options: { funnel?: F; shared?: boolean } = {},
  ): BloomFilter<KeyOf<F>> {
    return readGuava(bytes, options, BloomFilter) as BloomFilter<KeyOf<F>>;
  }

  /** bloomkit's native format: see `formats/native.ts` and docs/FORMAT.md. */
  override toBytes(): Uint8Array {
    return joinContainer(bloomFormatCore.parts(this));
  }

  protected override summary(): string {
    const m = this.bitSize;
    return `m=${m} k=${this.hashes} funnel=${this.funnel} fill=${percent(this.bitCount, m)} ≈${this.estimatedCount()} keys`;
  }

  /**
   * Reads bloomkit's native format written by {@link BloomFilter.toBytes}. With
   * `{ copy: false }` the bits view the payload inside `bytes` when it is 4-byte aligned on a
   * little-endian host (no copy; `bytes` must then stay untouched), else they are copied.
   */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): BloomFilter<K> {
    return bloomFormatCore.decode(bytes, options, BloomFilter) as BloomFilter<K>;
  }
}
