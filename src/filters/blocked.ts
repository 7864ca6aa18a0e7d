/**
 * The cache-local (blocked) Bloom filter: every probe of a key lands in one 512-bit block, one
 * 64-byte cache line, so a lookup costs one cache miss where a classic filter pays up to k.
 * Design: Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom Filters" (WEA 2007;
 * ACM JEA 14, 2009), in the form of RocksDB's FastLocalBloom (util/bloom_impl.h, format_version 5).
 *
 * Guarantee: `has(key)` is true for every key ever added (no false negatives). For a key never
 * added it is true with probability about
 *
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
 * Limits: at most 2^27 blocks (2^36 bits, 8 GiB), 1 to 32 probes. Keys cannot be removed. The
 * rate rises past the sized capacity (watch `expectedFpp()`, which is exact for the bits set).
 * Not interchangeable with RocksDB's filter bytes: RocksDB hashes with XXH3, bloomkit with XXH64.
 */

import { BitArray, type BitStorage, popcount32 } from '../bits/bit-array.js';
import { SharedBitArray } from '../bits/shared-bit-array.js';
import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import { decodeBlocked, encodeBlocked } from '../formats/blocked-codec.js';
import type { DecodeOptions } from '../formats/native.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { MAX_BATCH, xxh64Key, xxh64Many, xxViews } from '../hash/xxhash64.js';
import {
  checkCombinable,
  incompatibility,
  type MembershipFilter,
  type Requirement,
} from './filter.js';

/** Bits per block: one 64-byte cache line. */
export const BLOCK_BITS = 512;
/** Most blocks a blocked filter may have: 2^27 (2^36 bits). */
export const MAX_BLOCKS = 2 ** 27;
/** Most probes per key. */
export const MAX_PROBES = 32;
/** The model rate a new filter is sized for, as a fraction of the requested fpp. */
export const SIZING_HEADROOM = 0.97;

const TWO_32 = 4294967296;
const GOLDEN = 0x9e3779b9 | 0;

/**
 * Σ_j Pois(j; λ)·f(j): the expectation of `f` over a Poisson(λ) load, summed in log space from
 * j = 0 to λ + 12√λ + 30 (the rest of the mass is below 1e-30).
 */
export function poissonMix(lambda: number, f: (j: number) => number): number {
  if (lambda === 0) return f(0);
  const last = Math.ceil(lambda + 12 * Math.sqrt(lambda) + 30);
  const logLambda = Math.log(lambda);
  let logP = -lambda;
  let sum = 0;
  for (let j = 0; j <= last; j++) {
    if (j > 0) logP += logLambda - Math.log(j);
    sum += Math.exp(logP) * f(j);
  }
  return sum;
}

/** The model false positive rate of a 512-bit blocked filter at λ keys per block, k probes. */
export function blockedFalsePositiveRate(lambda: number, k: number): number {
  const q = k * Math.log1p(-1 / BLOCK_BITS);
  return poissonMix(lambda, (j) => (-Math.expm1(q * j)) ** k);
}

/**
 * The largest load λ (keys per block) at which `rate(λ)` stays at or below `target`, by doubling
 * then bisection (the rate grows with λ). `rate` must be increasing.
 */
export function maxLoad(target: number, rate: (lambda: number) => number): number {
  let lo = 0;
  let hi = 1;
  while (rate(hi) <= target) {
    lo = hi;
    hi *= 2;
    if (hi > 2 ** 40) return hi;
  }
  for (let i = 0; i < 60 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (rate(mid) <= target) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The k in 1..MAX_PROBES with the lowest model rate at load λ (the rate is unimodal in k). */
function bestProbes(lambda: number): { k: number; rate: number } {
  let best = { k: 1, rate: blockedFalsePositiveRate(lambda, 1) };
  for (let k = 2; k <= MAX_PROBES; k++) {
    const rate = blockedFalsePositiveRate(lambda, k);
    if (rate >= best.rate) break;
    best = { k, rate };
  }
  return best;
}

const loadCache = new Map<number, number>();

/** The shape {@link BlockedBloomFilter.create} picks. */
export interface BlockedSize {
  /** Number of 512-bit blocks (z). */
  readonly blocks: number;
  /** Probes per key (k). */
  readonly hashes: number;
  /** Bits per key at capacity: 512·z/n. */
  readonly bitsPerKey: number;
  /** The model false positive rate at capacity. */
  readonly expectedRate: number;
}

/**
 * Sizes a blocked filter: the fewest 512-bit blocks z whose model rate (with the best k) at
 * `capacity` keys is at most {@link SIZING_HEADROOM}·fpp. `capacity: 1e6, fpp: 0.01` →
 * 19,471 blocks (9.97 bits/key), k = 6, model rate 0.970%.
 */
export function blockedSize(capacity: number, fpp: number): BlockedSize {
  checkPositiveInteger('capacity', capacity);
  checkProbability('fpp', fpp);
  let lambda = loadCache.get(fpp);
  if (lambda === undefined) {
    lambda = maxLoad(SIZING_HEADROOM * fpp, (l) => bestProbes(l).rate);
    if (loadCache.size > 256) loadCache.clear();
    loadCache.set(fpp, lambda);
  }
  const blocks = Math.max(1, Math.ceil(capacity / lambda));
  if (!(blocks <= MAX_BLOCKS)) {
    throw new RangeError(
      `capacity ${show(capacity)} at fpp ${show(fpp)} needs ${blocks} blocks of 512 bits, more than the maximum ${MAX_BLOCKS}`,
    );
  }
  const { k, rate } = bestProbes(capacity / blocks);
  return { blocks, hashes: k, bitsPerKey: (blocks * BLOCK_BITS) / capacity, expectedRate: rate };
}

/** Options shared by every way of making a blocked filter. */
export interface BlockedBloomFilterCommonOptions {
  /** Key encoding; default `'string'` (UTF-8, as the classic filter). */
  funnel?: Funnel;
  /** Keep the bits in a `SharedArrayBuffer` written atomically, for worker threads. */
  shared?: boolean;
}

/** Options of {@link BlockedBloomFilter.create}. */
export interface BlockedBloomFilterCreateOptions extends BlockedBloomFilterCommonOptions {
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

/**
 * ⌊x·n / 2^32⌋ for a 32-bit x (taken unsigned) and 1 ≤ n ≤ 2^31, exactly: Lemire's
 * multiply-shift range reduction ("Fast random integer generation in an interval", ACM TOMACS
 * 2019) without `%` or BigInt. Below n = 2^21 the product fits a double's 53 bits; above, x is
 * split into 16-bit halves so that every partial product is exact.
 */
export function fastRange32(x: number, n: number): number {
  const u = x >>> 0;
  if (n <= 0x200000) return Math.floor((u * n) / TWO_32);
  return Math.floor(((u >>> 16) * n + Math.floor(((u & 0xffff) * n) / 65536)) / 65536);
}

/** Block starts of the current batch (addMany / hasMany). */
const batchBases = new Int32Array(MAX_BATCH);
/** Keeps the prefetching loads of hasMany / addMany alive (the compiler drops unused loads). */
let sink = 0;

/** The value of the last prefetching pass (for tests; it has no meaning). */
export function prefetchSink(): number {
  return sink;
}

export class BlockedBloomFilter implements MembershipFilter {
  /** The bit storage (plain or shared); block b is words [16b, 16b + 16). */
  readonly bits: BitStorage;
  /** Number of 512-bit blocks (z). */
  readonly blocks: number;
  /** Probes per key (k). */
  readonly hashes: number;
  readonly funnel: Funnel;
  private readonly data: Uint32Array;

  /** A filter of an explicit shape, or over existing storage of 512·`blocks` bits. */
  constructor(shape: BlockedBloomFilterShape, storage?: BitStorage) {
    if (shape === null || typeof shape !== 'object') {
      throw new TypeError(`shape must be an object, got ${show(shape)}`);
    }
    this.blocks = checkPositiveInteger('blocks', shape.blocks, MAX_BLOCKS);
    this.hashes = checkPositiveInteger('hashes', shape.hashes, MAX_PROBES);
    this.funnel = checkFunnel(shape.funnel ?? 'string');
    const bitSize = this.blocks * BLOCK_BITS;
    if (storage !== undefined && storage.bitSize !== bitSize) {
      throw new RangeError(`storage has ${storage.bitSize} bits, the shape needs ${bitSize}`);
    }
    this.bits = storage ?? (shape.shared ? new SharedBitArray(bitSize) : new BitArray(bitSize));
    this.data = this.bits.data;
  }

  /**
   * A filter for `capacity` keys at false positive rate `fpp` (see {@link blockedSize}):
   * `capacity: 1_000_000, fpp: 0.01` → 19,471 blocks (1.25 MB, 9.97 bits/key), k = 6.
   */
  static create(options: BlockedBloomFilterCreateOptions): BlockedBloomFilter {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`options must be an object, got ${show(options)}`);
    }
    const size = blockedSize(options.capacity, options.fpp);
    return new BlockedBloomFilter({ ...options, blocks: size.blocks, hashes: size.hashes });
  }

  /** Number of bits (m = 512·z). */
  get bitSize(): number {
    return this.bits.bitSize;
  }

  /** Number of bits set. */
  get bitCount(): number {
    return this.bits.bitCount();
  }

  /** Adds `key`. True iff a bit changed, i.e. the key was certainly not in the filter before. */
  add(key: Key): boolean {
    xxh64Key(this.funnel, key);
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

  /** False if `key` was certainly never added; true if it probably was. */
  has(key: Key): boolean {
    xxh64Key(this.funnel, key);
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

  /** Adds every key; true if any of them changed the filter. */
  addAll(keys: Iterable<Key>): boolean {
    let changed = false;
    for (const key of keys) if (this.add(key)) changed = true;
    return changed;
  }

  /**
   * Adds `keys` in batches (one WebAssembly call hashes up to 1020 keys, then the blocks are
   * touched before they are written, so that cache misses overlap); returns how many of them
   * changed the filter. Same result as calling {@link add} on each key in order, also when a key
   * is of the wrong kind: the keys before it are added, then its error is thrown. Kept because it
   * measures faster: 78 vs 91 ns per key at 10^6 keys, 124 vs 183 ns at 10^7 (see hasMany).
   */
  addMany(keys: ArrayLike<Key>): number {
    let changed = 0;
    const bits = this.bits;
    const data = this.data;
    const bases = batchBases;
    const blocks = this.blocks;
    for (let start = 0; start < keys.length; start += MAX_BATCH) {
      const count = Math.min(MAX_BATCH, keys.length - start);
      try {
        xxh64Many(this.funnel, keys, start, count);
      } catch (error) {
        for (let j = 0; j < count; j++) this.add(keys[start + j]!);
        throw error;
      }
      const many = xxViews.many;
      let touched = 0;
      for (let j = 0; j < count; j++) {
        const base = fastRange32(many[2 * j]!, blocks) << 4;
        bases[j] = base;
        touched |= data[base + (many[2 * j + 1]! >>> 28)]!;
      }
      sink = touched;
      for (let j = 0; j < count; j++) {
        const base = bases[j]!;
        let x = many[2 * j + 1]!;
        let any = false;
        for (let i = this.hashes; i > 0; i--) {
          const word = base + (x >>> 28);
          const mask = 1 << (x >>> 23);
          if ((data[word]! & mask) === 0 && bits.setMasked(word, mask)) any = true;
          x = Math.imul(x, GOLDEN);
        }
        if (any) changed++;
      }
    }
    return changed;
  }

  /**
   * `has` for every key: `out[i]` is 1 if `keys[i]` is probably present, else 0. Writes into
   * `out` when given (it must hold `keys.length` bytes), else into a new `Uint8Array`.
   *
   * Kept because it measures faster than `has` in a loop: one WebAssembly call hashes up to
   * 1020 keys, and a first pass touches every key's block so that the cache misses of many keys
   * overlap. On 30-byte URL keys (Node 20, x64): 55 vs 63 ns per key at 10^6 keys, 83 vs 92 ns
   * (up to 105 vs 165 ns on a busier machine) at 10^7 keys; see BENCHMARKS.md.
   */
  hasMany(keys: ArrayLike<Key>, out?: Uint8Array): Uint8Array {
    const result = out ?? new Uint8Array(keys.length);
    if (!(result instanceof Uint8Array) || result.length < keys.length) {
      throw new RangeError(`out must be a Uint8Array of at least ${keys.length} bytes`);
    }
    const data = this.data;
    const bases = batchBases;
    const blocks = this.blocks;
    for (let start = 0; start < keys.length; start += MAX_BATCH) {
      const count = Math.min(MAX_BATCH, keys.length - start);
      xxh64Many(this.funnel, keys, start, count);
      const many = xxViews.many;
      // Pass 1: every key's block, and one load from it. The loop is short, so the CPU keeps
      // many of these cache misses in flight at once (a software prefetch).
      let touched = 0;
      for (let j = 0; j < count; j++) {
        const base = fastRange32(many[2 * j]!, blocks) << 4;
        bases[j] = base;
        touched |= data[base + (many[2 * j + 1]! >>> 28)]!;
      }
      sink = touched;
      // Pass 2: the probes, now mostly cache hits.
      for (let j = 0; j < count; j++) {
        const base = bases[j]!;
        let x = many[2 * j + 1]!;
        let all = 1;
        for (let i = this.hashes; i > 0; i--) {
          all &= data[base + (x >>> 28)]! >>> (x >>> 23);
          x = Math.imul(x, GOLDEN);
        }
        result[start + j] = all;
      }
    }
    return result;
  }

  /** Same block count, same k, same funnel, and not the same object. */
  isCompatible(other: BlockedBloomFilter): boolean {
    return incompatibility(BlockedBloomFilter, this, other, this.requirements) === null;
  }

  private readonly requirements = (other: BlockedBloomFilter): readonly Requirement[] => [
    ['have the same number of blocks', this.blocks, other.blocks],
    ['have the same number of probes', this.hashes, other.hashes],
    ['have equal funnels', this.funnel, other.funnel],
  ];

  private checkCompatible(other: BlockedBloomFilter): void {
    checkCombinable(BlockedBloomFilter, this, other, this.requirements);
  }

  /** Adds every key of `other` (bitwise OR), in place; returns this. */
  union(other: BlockedBloomFilter): this {
    this.checkCompatible(other);
    this.bits.orWith(other.bits);
    return this;
  }

  /**
   * Keeps the bits set in both (bitwise AND), in place; returns this. Keys added to both still
   * answer true; the rate is at most that of either filter.
   */
  intersect(other: BlockedBloomFilter): this {
    this.checkCompatible(other);
    this.bits.andWith(other.bits);
    return this;
  }

  /**
   * Keys added, estimated from the bits set X under the Poisson load model:
   * n̂ = −z·ln(1 − X/m) / (1 − (1 − 1/512)^k), rounded; `Infinity` when every bit is set.
   */
  estimatedCount(): number {
    const m = this.bitSize;
    const perKey = -Math.expm1(this.hashes * Math.log1p(-1 / BLOCK_BITS));
    const x = (-this.blocks * Math.log1p(-this.bits.bitCount() / m)) / perKey;
    return Number.isFinite(x) ? Math.round(x) : Number.POSITIVE_INFINITY;
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
  clone(): BlockedBloomFilter {
    return new BlockedBloomFilter(this.shape(), this.bits.clone());
  }

  /** Forgets every key. */
  clear(): void {
    this.bits.clear();
  }

  /** Same shape, funnel and bits. */
  equals(other: unknown): boolean {
    if (!(other instanceof BlockedBloomFilter)) return false;
    if (other === this) return true;
    if (
      other.blocks !== this.blocks ||
      other.hashes !== this.hashes ||
      other.funnel !== this.funnel
    ) {
      return false;
    }
    const a = this.data;
    const b = other.data;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** The explicit shape of this filter. */
  shape(): BlockedBloomFilterShape {
    return { blocks: this.blocks, hashes: this.hashes, funnel: this.funnel };
  }

  /** bloomkit's native format (filter type 5; see formats/blocked-codec.ts). */
  toBytes(): Uint8Array {
    return encodeBlocked(this);
  }

  /**
   * Reads bytes written by {@link toBytes}. With `{ copy: false }` the words view a 4-byte-aligned
   * payload inside `bytes` on a little-endian host (see `DecodeOptions`).
   */
  static fromBytes(bytes: Uint8Array, options?: DecodeOptions): BlockedBloomFilter {
    return decodeBlocked(bytes, options);
  }
}
