/**
 * Bit storage for every bit-based filter: an array of 64-bit words, stored as pairs of
 * little-endian 32-bit halves in a `Uint32Array` (word w = data[2w] | data[2w+1] << 32), so that
 * bit i lives in word i >>> 6 at bit i & 63 exactly as in Guava's `LockFreeBitArray`.
 *
 * Storage is kept apart from filter logic (Guava's `Strategy` vs `LockFreeBitArray`): a filter
 * computes bit indexes and asks its storage to test or set them. Two storages exist:
 * {@link BitArray} (plain memory, a maintained popcount) and `SharedBitArray` (a
 * `SharedArrayBuffer` written with `Atomics.or`, shared by worker threads). Reads are plain loads
 * in both: bits only ever go from 0 to 1 between clears, so a racing read at worst misses a set
 * that has not finished, as in Guava.
 *
 * Indexes up to {@link MAX_BITS} (2^36) are exact: the word is `(i / 32) | 0`, the bit `i & 31`.
 */

import { checkPositiveInteger, IncompatibleFiltersError, mustBe } from '../errors.js';
import { MAX_BITS } from '../math.js';

/** What a filter needs from its bits. */
export interface BitStorage {
  /** Number of bits: a positive multiple of 64. */
  readonly bitSize: number;
  /** The 64-bit words as little-endian 32-bit halves; length = bitSize / 32. */
  readonly data: Uint32Array;
  /** True if bit `index` is set. */
  get(index: number): boolean;
  /** Sets bit `index`; true iff it was 0 before (Guava's `LockFreeBitArray.set`). */
  set(index: number): boolean;
  /** Sets the bits of `mask` in 32-bit word `word`; true iff any of them was 0 before. */
  setMasked(word: number, mask: number): boolean;
  /** Sets bit `masks[i]` of word `words[i]` for i < k; true iff any bit changed. */
  setProbes(words: Int32Array, masks: Int32Array, k: number): boolean;
  /** Number of bits set. */
  bitCount(): number;
  /** Clears every bit. */
  clear(): void;
  /** ORs `other`'s bits into this one (same size required). */
  orWith(other: BitStorage): void;
  /** ANDs `other`'s bits into this one (same size required). */
  andWith(other: BitStorage): void;
  /** Marks any cached count stale after `data` was written directly (counted when next asked). */
  recount(): void;
  /** An independent copy with the same kind of storage. */
  clone(): BitStorage;
}

/** Population count of a 32-bit word (SWAR). */
export function popcount32(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Population count of a whole word array. */
export function popcountAll(data: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < data.length; i++) n += popcount32(data[i]!);
  return n;
}

/** Validates a bit count for storage: a positive multiple of 64 up to {@link MAX_BITS}. */
export function checkBitSize(bitSize: number): number {
  checkPositiveInteger('bits', bitSize, MAX_BITS);
  if (bitSize % 64 !== 0) {
    throw mustBe('bits', 'a multiple of 64', bitSize);
  }
  return bitSize;
}

/** `data` when it holds the words of `bitSize` bits, else a `RangeError`. */
export function checkWords(bitSize: number, data: Uint32Array): Uint32Array {
  if (data.length !== bitSize / 32) {
    throw new RangeError(`data must hold ${bitSize / 32} 32-bit words, got ${data.length}`);
  }
  return data;
}

/** Throws unless two storages have the same size. */
export function checkSameSize(a: BitStorage, b: BitStorage): void {
  if (a.bitSize !== b.bitSize) {
    throw new IncompatibleFiltersError(
      `bit arrays must have the same size (${a.bitSize} != ${b.bitSize})`,
    );
  }
}

/**
 * Plain in-memory bits with a popcount maintained on every change. After bits were written
 * directly (a view over loaded bytes, `recount`, `orWith`), the popcount is unknown until
 * `bitCount()` is first asked, which counts once (O(m/32)): a command that loads a filter,
 * adds and saves never pays for it.
 */
export class BitArray implements BitStorage {
  declare readonly bitSize: number;
  declare readonly data: Uint32Array;
  /** Bits set, or -1 while unknown. */
  declare private count: number;

  /**
   * A zeroed array of `bitSize` bits, or a view over existing `data` (not copied; its popcount
   * is counted when first asked, unless the caller passes the known `count`).
   */
  constructor(bitSize: number, data?: Uint32Array, count?: number) {
    this.bitSize = checkBitSize(bitSize);
    if (data === undefined) {
      this.data = new Uint32Array(bitSize / 32);
      this.count = 0;
    } else {
      this.data = checkWords(bitSize, data);
      this.count = count ?? -1;
    }
  }

  /** Records `n` bits set directly in `data` by a kernel that knows they were clear. */
  noteSet(n: number): void {
    if (this.count >= 0) this.count += n;
  }

  get(index: number): boolean {
    return (this.data[(index / 32) | 0]! & (1 << (index & 31))) !== 0;
  }

  set(index: number): boolean {
    const w = (index / 32) | 0;
    const mask = 1 << (index & 31);
    const old = this.data[w]!;
    if ((old & mask) !== 0) return false;
    this.data[w] = old | mask;
    if (this.count >= 0) this.count++;
    return true;
  }

  setMasked(word: number, mask: number): boolean {
    const old = this.data[word]!;
    if ((old & mask) === mask) return false;
    this.data[word] = old | mask;
    if (this.count >= 0) this.count += popcount32((old & mask) ^ mask);
    return true;
  }

  setProbes(words: Int32Array, masks: Int32Array, k: number): boolean {
    const data = this.data;
    let added = 0;
    // Branch-free: whether a bit was new is a coin flip in a half-full filter, and a mispredicted
    // branch per probe costs more than an unconditional store.
    for (let i = 0; i < k; i++) {
      const w = words[i]!;
      const mask = masks[i]!;
      const old = data[w]!;
      data[w] = old | mask;
      const fresh = ~old & mask;
      added += (fresh | -fresh) >>> 31;
    }
    if (this.count >= 0) this.count += added;
    return added !== 0;
  }

  bitCount(): number {
    if (this.count < 0) this.count = popcountAll(this.data);
    return this.count;
  }

  clear(): void {
    this.data.fill(0);
    this.count = 0;
  }

  orWith(other: BitStorage): void {
    checkSameSize(this, other);
    const a = this.data;
    const b = other.data;
    for (let i = 0; i < a.length; i++) a[i]! |= b[i]!;
    this.count = -1;
  }

  andWith(other: BitStorage): void {
    checkSameSize(this, other);
    const a = this.data;
    const b = other.data;
    for (let i = 0; i < a.length; i++) a[i]! &= b[i]!;
    this.count = -1;
  }

  recount(): void {
    this.count = -1;
  }

  clone(): BitArray {
    return new BitArray(this.bitSize, this.data.slice(), this.count < 0 ? undefined : this.count);
  }
}
