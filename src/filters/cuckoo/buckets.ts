/**
 * The cuckoo filter's table: B buckets of b = 4 slots, each slot an f-bit fingerprint (0 = empty),
 * bit-packed: slot s is bits [s·f, s·f + f) of the little-endian 32-bit words; where a
 * fingerprint goes (its other bucket, the kicks) and the one-entry victim slot for the last
 * fingerprint an insert could not place (see filter.ts). The hashing of keys is the filter's.
 */

import { CUCKOO_BUCKET_SIZE as B, CUCKOO_MAX_KICKS, fmix32 } from './sizing.js';

export class BucketTable {
  /** The packed slots, whole 64-bit words so a serialized payload stays 8-byte aligned. */
  readonly words: Uint32Array;
  private readonly f: number;
  private readonly fpMask: number;
  /** Buckets − 1 (B is a power of two). */
  private readonly mask: number;
  private rng = 0x9e3779b9;
  /** The victim slot: taken, its bucket and its fingerprint. */
  victimUsed = false;
  victimBucket = 0;
  victimFp = 0;

  constructor(buckets: number, fingerprintBits: number) {
    this.f = fingerprintBits;
    this.mask = buckets - 1;
    this.fpMask = fingerprintBits === 32 ? 0xffffffff : 2 ** fingerprintBits - 1;
    this.words = new Uint32Array(Math.ceil((buckets * B * fingerprintBits) / 64) * 2);
  }

  /** The fingerprint in slot `s` (0 = empty). */
  slot(s: number): number {
    const pos = s * this.f;
    const w = (pos / 32) | 0;
    const off = pos & 31;
    let v = this.words[w]! >>> off;
    if (off + this.f > 32) v |= this.words[w + 1]! << (32 - off);
    return (v & this.fpMask) >>> 0;
  }

  setSlot(s: number, fp: number): void {
    const pos = s * this.f;
    const w = (pos / 32) | 0;
    const off = pos & 31;
    const t = this.words;
    t[w] = (t[w]! & ~(this.fpMask << off)) | (fp << off);
    if (off + this.f > 32) {
      const done = 32 - off;
      t[w + 1] = (t[w + 1]! & ~(this.fpMask >>> done)) | (fp >>> done);
    }
  }

  /** Copies of `fp` in bucket `i`. */
  countIn(i: number, fp: number): number {
    let n = 0;
    for (let j = 0; j < B; j++) if (this.slot(i * B + j) === fp) n++;
    return n;
  }

  /** Puts `fp` into a free slot of bucket `i`; false if the bucket is full. */
  insert(i: number, fp: number): boolean {
    for (let j = 0; j < B; j++) {
      const s = i * B + j;
      if (this.slot(s) === 0) {
        this.setSlot(s, fp);
        return true;
      }
    }
    return false;
  }

  /** Removes one copy of `fp` from bucket `i`; false if it holds none. */
  remove(i: number, fp: number): boolean {
    for (let j = 0; j < B; j++) {
      const s = i * B + j;
      if (this.slot(s) === fp) {
        this.setSlot(s, 0);
        return true;
      }
    }
    return false;
  }

  /** Slots holding a fingerprint among the first `slots` (a scan). */
  occupied(slots: number): number {
    let n = 0;
    for (let s = 0; s < slots; s++) if (this.slot(s) !== 0) n++;
    return n;
  }

  /** The other bucket of fingerprint `fp` stored in bucket `i`. */
  alt(i: number, fp: number): number {
    const off = fmix32(fp) & this.mask;
    return i ^ (off === 0 ? this.mask & 1 : off);
  }

  /** xorshift32: the kick choices (deterministic, so runs are reproducible). */
  private random(): number {
    let x = this.rng;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.rng = x;
    return x >>> 0;
  }

  /**
   * Stores `fp` in bucket `i` or its other bucket, evicting for at most 500 kicks; the last
   * evicted fingerprint goes to the victim slot (which must be free).
   */
  place(i: number, fp: number): void {
    if (this.insert(i, fp)) return;
    let index = this.alt(i, fp);
    let cur = fp;
    for (let kick = 0; kick < CUCKOO_MAX_KICKS; kick++) {
      if (this.insert(index, cur)) return;
      const s = index * B + (this.random() & (B - 1));
      const evicted = this.slot(s);
      this.setSlot(s, cur);
      cur = evicted;
      index = this.alt(index, cur);
    }
    this.victimUsed = true;
    this.victimBucket = index;
    this.victimFp = cur;
  }

  /** True if the victim slot holds `fp` for bucket `i1` or `i2`. */
  victimIs(i1: number, i2: number, fp: number): boolean {
    return (
      this.victimUsed &&
      this.victimFp === fp &&
      (this.victimBucket === i1 || this.victimBucket === i2)
    );
  }

  /** Sets the victim slot (`used` false: frees it). */
  setVictim(used: boolean, bucket = 0, fp = 0): void {
    this.victimUsed = used;
    this.victimBucket = bucket;
    this.victimFp = fp;
  }
}
