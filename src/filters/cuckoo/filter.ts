/**
 * The cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter: Practically Better
 * Than Bloom", CoNEXT 2014): an f-bit fingerprint of each key in one of two buckets of b = 4 slots.
 *
 * Hashing (native hash scheme 2, `cuckooMurmur128`): one MurmurHash3 x64 128 of the key's funnel
 * bytes (h1, h2). The first bucket is i1 = (low 32 bits of h1) mod B, the fingerprint is
 * fp = (high 32 bits of h2) mod (2^f − 1) + 1 (0 marks an empty slot), and the second bucket is
 * i2 = i1 XOR o with o = fmix32(fp) mod B, or 1 when that is 0 and B > 1 (fmix32 is MurmurHash3's
 * 32-bit finalizer; B a power of two). This is partial-key cuckoo hashing: o depends on the
 * fingerprint only, so either bucket follows from the other and a fingerprint moves without its
 * key. Unlike the reference implementation, o is never 0 (i1 = i2 would leave a key one bucket),
 * which matters in small tables.
 *
 * Insertion puts fp into a free slot of i1, else of i2; else it evicts a random fingerprint of the
 * bucket, moves it to that fingerprint's other bucket, and so on for at most 500 kicks (the
 * reference implementation's `kMaxCuckooCount`). If the last evicted fingerprint finds no room, it
 * is kept in a one-entry victim slot, as in the reference implementation: nothing stored is lost,
 * and that `add` succeeds. The filter is then full: every later `add` throws a `FilterFullError`
 * and changes nothing, until a `remove` frees a slot (the victim is then put back into the table).
 *
 * Guarantee: every key added and not removed answers true, including after a `FilterFullError`
 * (no false negatives, at any load). A key never added answers true with probability at most
 * 1 − (1 − 1/(2^f − 1))^(2b) ≈ 2b/2^f (two buckets of b fingerprints; the victim adds a share of
 * 2/(B·2^f)), less at lower load;
 * f = ⌈log2(2b/ε)⌉ for a target ε (ε = 0.01 → f = 10, bound 0.78%), and at least 6: with fewer
 * bits the alternate bucket takes fewer than 2^f distinct offsets and large tables fill to less
 * than 95% (4 bits: 94.1% at 2^18 buckets, measured).
 *
 * Sizing: {@link CuckooFilter.create} takes the smallest power-of-two B whose safe load covers
 * `capacity` ({@link cuckooSafeCapacity}). With b = 4, large tables fill to about 95.5% before the
 * first failed insert (the paper's Table 2; measured here: 96–97% up to 2^16 buckets, 95.4–95.7%
 * at 2^22–2^24 and 95.2% at 2^25 and 2^26, one fill each), but small tables scatter widely
 * (16 slots: as few as 9 keys in 50,000 seeded fills), so the safe load is 94% from 1024 buckets
 * up and lower below (B = 1 and 2 hold 4 and 8 keys always: every key reaches every slot). Above
 * 2^26 buckets the 94% is an extrapolation (the load at first failure falls slowly with size).
 * The tests fill tables of every size up to 2^14 buckets to their safe capacity with many key
 * sets and never see a failure. Memory: 4·B·f bits, bit-packed; at ε = 0.01 (f = 10)
 * and 95% load that is f/0.95 ≈ 10.5 bits per key (the paper's (log2(1/ε) + 3)/α), against 9.6
 * for a Bloom filter; the power-of-two rounding of B can double it for a given capacity.
 *
 * Multiset semantics, as in the paper: each `add` stores one more copy of the fingerprint, so a
 * key added twice is still present after one `remove`. A key can be stored at most 2b = 8 times
 * (both buckets full of its fingerprint; b times when B = 1); a further `add` throws
 * `FilterFullError` and changes nothing. `add` returns true iff the key was not present before
 * (Guava's `put` contract, as every bloomkit filter), and stores a copy either way.
 *
 * The hazard of every deletable filter: `remove` of a key that was never added but shares a
 * fingerprint and bucket with a stored key removes that key's fingerprint, and that key may then
 * answer false. Only remove keys that were added.
 *
 * Limits: buckets a power of two from 1 to 2^30, f from 6 to 32 bits, at most 2^35 table bits
 * (4 GiB); ε must be at least 2b/2^32 ≈ 1.9e−9.
 */

import { checkOptions, FilterFullError, show } from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { hashKey, views } from '../../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../../hash/keys.js';
import { FilterBase, percent } from '../base.js';
import type { DeletableFilter, KeyOf } from '../filter.js';
import { BucketTable } from './buckets.js';
import { cuckooFormat } from './format.js';
import {
  CUCKOO_BUCKET_SIZE,
  checkCuckooShape,
  cuckooDesignPoint,
  cuckooFalsePositiveRate,
  cuckooSize,
} from './sizing.js';

export { cuckooFingerprintBits, cuckooSafeCapacity } from './sizing.js';

const B = CUCKOO_BUCKET_SIZE;

/** Options of {@link CuckooFilter.create}. */
export interface CuckooFilterCreateOptions<F extends Funnel = Funnel> {
  /** Keys the filter must hold without a failure: a positive safe integer. */
  capacity: number;
  /** Target false positive rate ε in (0, 1); the fingerprint has f = ⌈log2(2b/ε)⌉ bits. */
  fpp: number;
  /** Key encoding; default `'string'` (UTF-8). */
  funnel?: F;
}

/** Options of `new CuckooFilter(...)`: an explicit shape. */
export interface CuckooFilterShape {
  /** Number of buckets of 4 slots: a power of two from 1 to 2^30. */
  buckets: number;
  /** Fingerprint bits f, 6 to 32. */
  fingerprintBits: number;
  /** Key encoding; default `'string'`. */
  funnel?: Funnel;
}

/** The victim slot: a fingerprint evicted by an insert that ran out of kicks, and its bucket. */
export interface CuckooVictim {
  readonly bucket: number;
  readonly fingerprint: number;
}

export class CuckooFilter<K extends Key = Key> extends FilterBase<K> implements DeletableFilter<K> {
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'CuckooFilter';
  /** Number of buckets (B), a power of two. */
  readonly bucketCount: number;
  /** Fingerprint bits (f). */
  readonly fingerprintBits: number;
  readonly funnel: Funnel;
  /** The bit-packed slots: slot s (bucket s >>> 2) is bits [s·f, s·f + f) of the LE words. */
  readonly table: Uint32Array;
  private readonly mask: number;
  private readonly buckets: BucketTable;
  private readonly fpRange: number;
  private stored = 0;
  /** Scratch of the last hash: first bucket and fingerprint. */
  private i1 = 0;
  private fp = 0;

  /** An empty filter of an explicit shape. Most callers want {@link CuckooFilter.create}. */
  constructor(shape: CuckooFilterShape) {
    super();
    checkOptions('shape', shape);
    const { buckets, fingerprintBits: f } = checkCuckooShape(shape);
    this.funnel = checkFunnel(shape.funnel ?? 'string');
    this.bucketCount = buckets;
    this.fingerprintBits = f;
    this.mask = buckets - 1;
    this.fpRange = 2 ** f - 1;
    this.buckets = new BucketTable(buckets, f);
    this.table = this.buckets.words;
  }

  /**
   * A filter that holds `capacity` keys at rate `fpp`: f = max(6, ⌈log2(8/fpp)⌉) bits and the
   * smallest power-of-two bucket count B with {@link cuckooSafeCapacity}(B) ≥ capacity
   * (`capacity: 1e6, fpp: 0.01` → f = 10 and 2^19 buckets, 2.6 MB, since 2^18 buckets are safe for
   * 985,661 keys only; `capacity: 900_000` fits 2^18 buckets, 1.3 MB, 86% full at capacity).
   */
  static create<F extends Funnel = 'string'>(
    options: CuckooFilterCreateOptions<F>,
  ): CuckooFilter<KeyOf<F>> {
    checkOptions('options', options);
    const { buckets, fingerprintBits: f } = cuckooSize(options.capacity, options.fpp);
    return new CuckooFilter<KeyOf<F>>({
      buckets,
      fingerprintBits: f,
      funnel: options.funnel ?? 'string',
    });
  }

  /** Number of fingerprints stored (copies of keys, the victim included). */
  get size(): number {
    return this.stored;
  }

  /** Number of slots: 4 per bucket. */
  get slotCount(): number {
    return this.bucketCount * B;
  }

  /** Fingerprints stored / slots. */
  get loadFactor(): number {
    return this.stored / this.slotCount;
  }

  /** Bytes held by the table. */
  get byteLength(): number {
    return this.table.byteLength;
  }

  /** True once an insert ran out of kicks: the victim slot is taken and `add` throws. */
  get full(): boolean {
    return this.buckets.victimUsed;
  }

  /** The victim slot, or `undefined` when it is free. */
  get victim(): CuckooVictim | undefined {
    const t = this.buckets;
    return t.victimUsed ? { bucket: t.victimBucket, fingerprint: t.victimFp } : undefined;
  }

  /** Hashes `key` into `i1` and `fp` (see the class comment). */
  private hash(funnel: Funnel, key: Key): void {
    hashKey(funnel, key);
    const h = views.hash;
    this.i1 = h[0]! & this.mask;
    this.fp = ((h[3]! >>> 0) % this.fpRange) + 1;
  }

  /**
   * Stores one more copy of `key`'s fingerprint. Returns true iff the key was not present
   * before (`has(key)` was false). Throws `FilterFullError`, changing nothing, when the filter
   * is full (an earlier insert left a fingerprint in the victim slot) or when the key is already
   * stored 2b = 8 times.
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
    this.hash(funnel, key);
    const i1 = this.i1;
    const fp = this.fp;
    if (this.buckets.victimUsed) {
      throw new FilterFullError(
        `cuckoo filter is full: ${this.stored} fingerprints in ${this.slotCount} slots (load ${this.loadFactor.toFixed(4)}); remove keys or use a larger filter`,
      );
    }
    const i2 = this.buckets.alt(i1, fp);
    const copies = this.buckets.countIn(i1, fp) + (i2 === i1 ? 0 : this.buckets.countIn(i2, fp));
    const most = i2 === i1 ? B : 2 * B;
    if (copies >= most) {
      throw new FilterFullError(
        `${show(key)} is already stored ${copies} times, the most its two buckets hold`,
      );
    }
    this.buckets.place(i1, fp);
    this.stored++;
    return copies === 0;
  }

  /** False if `key` is certainly absent; true if one of its buckets (or the victim) holds its fingerprint. */
  override has(key: K): boolean {
    return this.hasAs(this.funnel, key);
  }

  private hasAs(funnel: Funnel, key: Key): boolean {
    this.hash(funnel, key);
    const i1 = this.i1;
    const fp = this.fp;
    const i2 = this.buckets.alt(i1, fp);
    for (let j = 0; j < B; j++) {
      if (this.buckets.slot(i1 * B + j) === fp || this.buckets.slot(i2 * B + j) === fp) return true;
    }
    return this.buckets.victimIs(i1, i2, fp);
  }

  /**
   * Removes one copy of `key`'s fingerprint; false (and no change) if neither bucket nor the
   * victim holds it. If the victim slot was taken, its fingerprint is then put back into the
   * table. Only remove keys that were added (see the class comment's hazard).
   */
  remove(key: K): boolean {
    this.hash(this.funnel, key);
    const i1 = this.i1;
    const fp = this.fp;
    const i2 = this.buckets.alt(i1, fp);
    if (this.buckets.remove(i1, fp) || this.buckets.remove(i2, fp)) {
      this.stored--;
      const t = this.buckets;
      if (t.victimUsed) {
        t.victimUsed = false;
        t.place(t.victimBucket, t.victimFp);
      }
      return true;
    }
    if (this.buckets.victimIs(i1, i2, fp)) {
      this.buckets.victimUsed = false;
      this.stored--;
      return true;
    }
    return false;
  }

  /** Copies of `key`'s fingerprint in its two buckets and the victim (0 means absent). */
  count(key: K): number {
    this.hash(this.funnel, key);
    const i1 = this.i1;
    const fp = this.fp;
    const i2 = this.buckets.alt(i1, fp);
    const n = this.buckets.countIn(i1, fp) + (i2 === i1 ? 0 : this.buckets.countIn(i2, fp));
    return n + (this.buckets.victimIs(i1, i2, fp) ? 1 : 0);
  }

  /** Its safe capacity and the rate there (`cuckooDesignPoint`): it does not saturate. */
  override designPoint(): { capacity: number; fpp: number } {
    return cuckooDesignPoint(this.bucketCount, this.fingerprintBits);
  }

  /**
   * The false positive rate the current load implies: 1 − (1 − 1/(2^f − 1))^(2b·load), the
   * chance that one of the occupied slots of two buckets holds a given fingerprint
   * (`cuckooFalsePositiveRate`, the model every tool uses).
   */
  expectedFpp(): number {
    return cuckooFalsePositiveRate(this.loadFactor, this.fingerprintBits);
  }

  /** Fingerprints stored (each add stores one; a key added twice counts twice). */
  override estimatedCount(): number {
    return this.size;
  }

  /** Forgets every key. */
  override clear(): void {
    this.table.fill(0);
    this.stored = 0;
    this.buckets.setVictim(false);
  }

  /** An independent copy (same table, victim and count). */
  clone(): CuckooFilter<K> {
    const c = new CuckooFilter<K>(this.shape());
    c.table.set(this.table);
    c.restore(this.stored, this.victim);
    return c;
  }

  /** Same shape, funnel, table and victim. */
  equals(other: unknown): boolean {
    if (!(other instanceof CuckooFilter)) return false;
    if (other === this) return true;
    const [v, w] = [this.victim, other.victim];
    if (
      other.bucketCount !== this.bucketCount ||
      other.fingerprintBits !== this.fingerprintBits ||
      other.funnel !== this.funnel ||
      v?.bucket !== w?.bucket ||
      v?.fingerprint !== w?.fingerprint
    ) {
      return false;
    }
    const a = this.table;
    const b = other.table;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** The explicit shape of this filter. */
  shape(): CuckooFilterShape {
    return {
      buckets: this.bucketCount,
      fingerprintBits: this.fingerprintBits,
      funnel: this.funnel,
    };
  }

  /** Number of non-empty slots in the table (a scan; `size` minus the victim). */
  occupiedSlots(): number {
    return this.buckets.occupied(this.slotCount);
  }

  /**
   * For the codec: sets the count and victim after the table was filled directly. `stored` must
   * equal the occupied slots plus the victim.
   * @internal
   */
  restore(stored: number, victim: CuckooVictim | undefined): void {
    this.stored = stored;
    this.buckets.setVictim(victim !== undefined, victim?.bucket, victim?.fingerprint);
  }

  /** bloomkit's native format (filter type 4, see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(cuckooFormat.parts(this));
  }

  protected override summary(): string {
    return `${this.bucketCount} buckets x ${B} slots, f=${this.fingerprintBits} bits, funnel=${this.funnel} load=${percent(this.size, this.slotCount)} ${this.size} keys`;
  }

  /** Reads the native format written by {@link CuckooFilter.toBytes}. */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    _options?: DecodeOptions,
  ): CuckooFilter<K> {
    return cuckooFormat.decode(bytes, _options, CuckooFilter) as CuckooFilter<K>;
  }
}
