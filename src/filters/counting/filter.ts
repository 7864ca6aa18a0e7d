/**
 * The counting Bloom filter (Fan, Cao, Almeida and Broder, "Summary Cache: A Scalable Wide-Area
 * Web Cache Sharing Protocol", IEEE/ACM ToN 8(3), 2000): a classic Bloom filter whose bits are
 * 4-bit counters, so that keys can be removed.
 *
 * Positions: exactly those of the classic filter with the same m and k (MurmurHash3 x64 128 of
 * the key's funnel bytes, then Guava's MURMUR128_MITZ_64 double hashing, see `hash/strategies.ts`).
 * A counter is above 0 exactly where the classic filter built from the same keys has a bit set, so
 * `has` answers exactly like that classic filter and the false positive rate is the same:
 * (1 − e^(−kn/m))^k after n keys, the requested fpp at `capacity` with Guava sizing
 * (`capacity: 1000, fpp: 0.01` → 9600 counters, k = 7, 4800 bytes). {@link
 * CountingBloomFilter.toBloomFilter} returns that classic filter (a quarter of the bytes: one bit
 * per counter instead of four), for readers that never remove.
 *
 * Guarantee: a key added and not removed answers true, as long as every key removed was added
 * before (see "the hazard" below). Each add records one occurrence (a multiset): a key added
 * twice needs two removes before it may answer false.
 *
 * Memory: half a byte per counter, four times the classic filter (1e6 keys at 1%: 4.8 MB).
 *
 * Counters saturate at 15 and a saturated counter is never decremented (`bits/counters.ts`): its
 * true count is unknown, and lowering it could reach 0 under keys still present. A key whose
 * counters all saturated cannot be removed: a stale positive, never a false negative.
 *
 * The hazard: `remove(key)` of a key that was never added but is a false positive (all k of its
 * counters are above 0 because of other keys) decrements counters that belong to other keys, and
 * one of those keys may then answer false. No filter can tell such a key from a real one: that is
 * what a false positive is. `remove` is only safe for keys that were added; a caller that tracks
 * membership elsewhere (a database, a `Set`) uses {@link CountingBloomFilter.safeRemove}.
 *
 * Limits: at most 2^32 counters (2 GiB), 1 to 255 hashes; string funnel by default.
 */

import { COUNTER_MAX, CounterArray, MAX_COUNTERS } from '../../bits/counters.js';
import { SharedCounterArray } from '../../bits/shared-counters.js';
import {
  checkSharedHandle,
  type SharedFilterHandle,
  sharedView,
  shareStorage,
} from '../../bits/shared-handle.js';
import { checkOptions, checkPositiveInteger, checkProbability, show } from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { mitz64Probes, views } from '../../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../../hash/keys.js';
import { Modulus } from '../../hash/strategies.js';
import { bloomDesignPoint, estimateCount, expectedFpp, sizeBloom } from '../../math.js';
import { checkOut, FilterBase, percent } from '../base.js';
import { BloomFilter } from '../bloom/filter.js';
import type { DeletableFilter, KeyOf, PackedKeys } from '../filter.js';
import { checkPacked } from '../packed.js';
import { countingAddBatch, countingHasBatch, distinctPositions } from './batch.js';
import { countingFormatCore } from './format.js';
import { type MembershipSource, sourceHolds } from './source.js';

export type { MembershipSource } from './source.js';

/** Options of {@link CountingBloomFilter.create}: Guava sizing from an expected count and rate. */
export interface CountingBloomFilterCreateOptions<F extends Funnel = Funnel> {
  /** Expected number of keys present at once (n): a positive safe integer. */
  capacity: number;
  /** Target false positive probability at `capacity` keys, in (0, 1). */
  fpp: number;
  /** Key encoding; default `'string'` (UTF-8). */
  funnel?: F;
  /** Keep the counters in a `SharedArrayBuffer`, changed atomically, for worker threads. */
  shared?: boolean;
}

/** Options of `new CountingBloomFilter(...)`: an explicit shape. */
export interface CountingBloomFilterShape {
  /** Number of counters (m); rounded up to a multiple of 64, as the classic filter's bits are. */
  counters: number;
  /** Counters per key (k), 1 to 255. */
  hashes: number;
  /** Key encoding; default `'string'`. */
  funnel?: Funnel;
}

export class CountingBloomFilter<K extends Key = Key>
  extends FilterBase<K>
  implements DeletableFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'CountingBloomFilter';
  /** The 4-bit counters. */
  declare readonly counters: CounterArray;
  /** Counters per key (k). */
  declare readonly hashes: number;
  declare readonly funnel: Funnel;
  declare private readonly mod: Modulus;
  /** The distinct positions of the last key hashed. */
  declare private readonly idx: Float64Array;

  /**
   * A filter of an explicit shape, or over existing counters (`storage` must hold `counters`
   * counters, rounded up to a multiple of 64). Most callers want {@link CountingBloomFilter.create}.
   */
  constructor(shape: CountingBloomFilterShape & { shared?: boolean }, storage?: CounterArray) {
    super();
    checkOptions('shape', shape);
    const m = checkPositiveInteger('counters', shape.counters, MAX_COUNTERS);
    const hashes = checkPositiveInteger('hashes', shape.hashes, 255);
    const size = Math.ceil(m / 64) * 64;
    this.funnel = checkFunnel(shape.funnel ?? 'string');
    if (storage !== undefined && (!(storage instanceof CounterArray) || storage.size !== size)) {
      throw new RangeError(
        `storage must be a CounterArray of ${size} counters, got ${storage instanceof CounterArray ? storage.size : show(storage)}`,
      );
    }
    this.counters =
      storage ?? (shape.shared ? new SharedCounterArray(size) : new CounterArray(size));
    this.hashes = hashes;
    this.mod = new Modulus(size);
    this.idx = new Float64Array(hashes);
  }

  /**
   * A filter for `capacity` keys at rate `fpp`, sized as Guava sizes a classic filter:
   * m = ⌊−n·ln p / ln²2⌋ counters (rounded up to 64), k = max(1, round(m/n · ln 2)).
   */
  static create<F extends Funnel = 'string'>(
    options: CountingBloomFilterCreateOptions<F>,
  ): CountingBloomFilter<KeyOf<F>> {
    checkOptions('options', options);
    checkPositiveInteger('capacity', options.capacity);
    checkProbability('fpp', options.fpp);
    const size = sizeBloom(options.capacity, options.fpp);
    if (size.bits > MAX_COUNTERS) {
      throw new RangeError(
        `capacity ${options.capacity} at fpp ${options.fpp} needs ${size.bits} counters, more than the maximum ${MAX_COUNTERS}`,
      );
    }
    return new CountingBloomFilter<KeyOf<F>>({
      counters: size.bits,
      hashes: size.hashes,
      funnel: options.funnel ?? 'string',
      shared: options.shared ?? false,
    });
  }

  /** Number of counters (m), a multiple of 64. */
  get counterSize(): number {
    return this.counters.size;
  }

  /** Bytes held by the counters: m / 2. */
  get byteLength(): number {
    return this.counters.data.length;
  }

  /** Hashes `key` once and writes its distinct positions into `idx`; returns how many. */
  private positions(funnel: Funnel, key: Key): number {
    mitz64Probes(funnel, key, this.hashes, this.mod);
    return distinctPositions(views.words, 0, views.masks, 0, this.hashes, this.idx);
  }

  /**
   * Records one occurrence of `key` (each of its counters goes up by one, saturating at 15).
   * Returns true iff the key was certainly new: some counter was 0, i.e. `has(key)` was false
   * (Guava's `put` contract). Adding a present key still counts it: two adds need two removes.
   */
  override add(key: K): boolean {
    return this.addAs(this.funnel, key);
  }

  protected override addEncoded(bytes: Uint8Array): boolean {
    return this.addAs('bytes', bytes);
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    return this.hasAs('bytes', bytes);
  }

  private addAs(funnel: Funnel, key: Key): boolean {
    const n = this.positions(funnel, key);
    const c = this.counters;
    let fresh = false;
    for (let i = 0; i < n; i++) if (c.increment(this.idx[i]!) === 0) fresh = true;
    return fresh;
  }

  /**
   * Adds every packed key (its funnel bytes), in order; returns how many were new. Hashes and
   * positions of a whole chunk come from one WebAssembly call (see batch.ts); the counters then
   * change exactly as `add` key by key would change them.
   */
  override addBatch(batch: PackedKeys, out?: Uint8Array): number {
    const n = checkPacked(batch);
    const flags = out === undefined ? null : checkOut(out, n);
    return countingAddBatch(this.counters, batch, n, this.hashes, this.mod, flags);
  }

  /** `has` of every packed key: `out[i]` is 1 or 0 (see {@link addBatch}). */
  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const n = checkPacked(batch);
    const result = checkOut(out, n);
    countingHasBatch(this.counters, batch, n, this.hashes, this.mod, result);
    return result;
  }

  /** False if `key` is certainly absent; true if it is probably present (all counters > 0). */
  override has(key: K): boolean {
    return this.hasAs(this.funnel, key);
  }

  private hasAs(funnel: Funnel, key: Key): boolean {
    mitz64Probes(funnel, key, this.hashes, this.mod);
    const { words, masks } = views;
    const c = this.counters;
    // No need to skip repeated positions here: stop at the first counter at 0.
    for (let i = 0; i < this.hashes; i++) {
      if (c.get(words[i]! * 32 + 31 - Math.clz32(masks[i]!)) === 0) return false;
    }
    return true;
  }

  /**
   * Removes one occurrence of `key`. If any of its counters is 0 the key is certainly absent:
   * nothing changes and the result is false. Otherwise every counter below 15 goes down by one
   * and the result is true.
   *
   * Only remove keys that were added. A never-added key that is a false positive passes the
   * check and takes counters from other keys, which may then answer false (the class comment's
   * hazard). When membership is tracked elsewhere, prefer {@link CountingBloomFilter.safeRemove}.
   */
  remove(key: K): boolean {
    const n = this.positions(this.funnel, key);
    const c = this.counters;
    const idx = this.idx;
    for (let i = 0; i < n; i++) if (c.get(idx[i]!) === 0) return false;
    for (let i = 0; i < n; i++) c.decrement(idx[i]!);
    return true;
  }

  /**
   * Removes one occurrence of `key` only if `source` (the caller's exact record of what was
   * added: a `Set`, an object with `has`, or a function) says it is present. This closes the
   * hazard of {@link CountingBloomFilter.remove}: a key the source does not hold is never
   * removed, whatever the counters say. The source must answer for the state before this
   * removal; update it afterwards. Returns true iff an occurrence was removed. A key the source
   * holds but whose counters include a 0 (the source and the filter disagree) is not removed
   * and gives false.
   */
  safeRemove(key: K, source: MembershipSource): boolean {
    return sourceHolds(source, key) && this.remove(key);
  }

  /**
   * The minimum of `key`'s counters: 0 means certainly absent. Without hazardous removes it is
   * never below min(occurrences of `key`, 15): an upper estimate of the key's multiplicity (as in
   * a count-min sketch; collisions only add), and 15 means "15 or more".
   */
  count(key: K): number {
    const n = this.positions(this.funnel, key);
    const c = this.counters;
    let min = COUNTER_MAX;
    for (let i = 0; i < n; i++) {
      const v = c.get(this.idx[i]!);
      if (v < min) min = v;
    }
    return min;
  }

  /** The k positions of `key` in probe order, as the classic filter's `indexesOf`. */
  indexesOf(key: K): number[] {
    mitz64Probes(this.funnel, key, this.hashes, this.mod);
    const out: number[] = [];
    for (let i = 0; i < this.hashes; i++) {
      out.push(views.words[i]! * 32 + 31 - Math.clz32(views.masks[i]!));
    }
    return out;
  }

  /**
   * The classic filter with a bit set wherever a counter is above 0: same m, k, funnel and
   * positions, so its `has` answers exactly as this filter's does now, at an eighth of a byte per
   * counter instead of half a byte (a quarter of the size). It does not follow later changes.
   */
  toBloomFilter(): BloomFilter<K> {
    const f = new BloomFilter<K>({
      bits: this.counterSize,
      hashes: this.hashes,
      funnel: this.funnel,
    });
    const words = f.bits.data;
    const bytes = this.counters.data;
    // Counter i becomes bit i: byte j holds counters 2j and 2j+1, i.e. bits 2j and 2j+1.
    for (let w = 0; w < words.length; w++) {
      let word = 0;
      for (let b = 0; b < 16; b++) {
        const v = bytes[w * 16 + b]!;
        if ((v & 15) !== 0) word |= 1 << (2 * b);
        if (v >>> 4 !== 0) word |= 1 << (2 * b + 1);
      }
      words[w] = word;
    }
    f.bits.recount();
    return f;
  }

  /** Number of counters above 0 (a scan of the counters). */
  nonZeroCount(): number {
    return this.counters.nonZeroCount();
  }

  /** Number of saturated counters (at 15, never decremented again). */
  saturatedCount(): number {
    return this.counters.saturatedCount();
  }

  override designPoint(): { capacity: number; fpp: number } {
    return bloomDesignPoint(this.counterSize, this.hashes); // the classic filter's, over counters
  }

  /** The classic filter's `expectedFpp()`: (counters above 0 / m)^k. */
  expectedFpp(): number {
    return expectedFpp(this.counters.nonZeroCount(), this.counterSize, this.hashes);
  }

  /** The classic filter's `approximateElementCount()` from the counters above 0 (distinct keys). */
  override estimatedCount(): number {
    return estimateCount(this.counters.nonZeroCount(), this.counterSize, this.hashes);
  }

  /** Sets every counter to 0. */
  override clear(): void {
    this.counters.clear();
  }

  /** An independent copy. */
  clone(): CountingBloomFilter<K> {
    return new CountingBloomFilter<K>(this.shape(), this.counters.clone());
  }

  /** Same shape, funnel and counters. */
  equals(other: unknown): boolean {
    if (!(other instanceof CountingBloomFilter)) return false;
    if (other === this) return true;
    if (
      other.hashes !== this.hashes ||
      other.counterSize !== this.counterSize ||
      other.funnel !== this.funnel
    ) {
      return false;
    }
    const a = this.counters.data;
    const b = other.counters.data;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** The explicit shape of this filter. */
  shape(): CountingBloomFilterShape {
    return { counters: this.counterSize, hashes: this.hashes, funnel: this.funnel };
  }

  /**
   * A handle to this filter's shared memory, to send to a worker (`postMessage`): there
   * `CountingBloomFilter.fromShared(handle)` opens the same filter on the same bits, and adds from any number
   * of threads lose nothing (each counter changes by compare-and-swap, saturating at 15 and never below 0). Only for a filter made with `{ shared: true }` (else a
   * `TypeError`). `estimatedCount()`, `expectedFpp()` and `bitCount` read a snapshot: adds
   * racing the count may or may not be in it.
   */
  share(): SharedFilterHandle {
    return shareStorage('counting', 'CountingBloomFilter', this.shape(), this.counters.data);
  }

  /** The filter behind a {@link share} handle, on the same shared counters. */
  static fromShared<K extends Key = Key>(handle: SharedFilterHandle): CountingBloomFilter<K> {
    const h = checkSharedHandle(handle, 'counting');
    const shape = h.shape as unknown as CountingBloomFilterShape;
    const size = Math.ceil(shape.counters / 64) * 64;
    return new CountingBloomFilter<K>(
      shape,
      new SharedCounterArray(size, sharedView(h, Uint8Array, size / 2)),
    );
  }

  /** bloomkit's native format (filter type 2, see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(countingFormatCore.parts(this));
  }

  protected override summary(): string {
    const m = this.counterSize;
    return `m=${m} counters k=${this.hashes} funnel=${this.funnel} nonzero=${percent(this.nonZeroCount(), m)} ≈${this.estimatedCount()} keys`;
  }

  /**
   * Reads the native format written by {@link CountingBloomFilter.toBytes}. With
   * `{ copy: false }` the counters view the payload inside `bytes` (see `DecodeOptions`).
   */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): CountingBloomFilter<K> {
    return countingFormatCore.decode(bytes, options, CountingBloomFilter) as CountingBloomFilter<K>;
  }
}
