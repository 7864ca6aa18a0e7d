/**
 * The cuckoo filter's table: B buckets of b = 4 slots, each slot an f-bit fingerprint (0 = empty),
 * bit-packed: slot s is bits [s·f, s·f + f) of the little-endian 32-bit words. Storage only; the
 * hashing and the kicks are the filter's (filter.ts).
 */

import { CUCKOO_BUCKET_SIZE as B } from './sizing.js';

export class BucketTable {
  /** The packed slots, whole 64-bit words so a serialized payload stays 8-byte aligned. */
  readonly words: Uint32Array;
  private readonly f: number;
  private readonly fpMask: number;

  constructor(buckets: number, fingerprintBits: number) {
    this.f = fingerprintBits;
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
}
