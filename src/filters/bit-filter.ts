/**
 * What the three bit-array filters (classic, blocked, split-block) share, written once over their
 * storage (`BitStorage`: plain or shared memory): size and fill, Guava's `isCompatible` and
 * `putAll` rules for combining two filters (union = bitwise OR, intersection = bitwise AND, in
 * place), `equals`, `clear`, and shared memory (`share()`, and for the constructors and
 * `fromShared` the storage of a shape: {@link bitsOf}, {@link sharedBits}). Each filter states
 * what two filters must share to be combined (`requirements`), in the order Guava checks them, so
 * the first difference is the one named.
 */

import { BitArray, type BitStorage } from '../bits/bit-array.js';
import { SharedBitArray } from '../bits/shared-bit-array.js';
import {
  checkSharedHandle,
  type SharedFilterHandle,
  type SharedFilterType,
  sharedView,
  shareStorage,
} from '../bits/shared-handle.js';
import { typeNameOf } from '../errors.js';
import type { Key } from '../hash/keys.js';
import { FilterBase } from './base.js';
import { checkCombinable, incompatibility, type Requirement } from './filter.js';

type AnyClass = abstract new (...args: never[]) => object;

export abstract class BitFilter<K extends Key = Key> extends FilterBase<K> {
  /** The bit storage (plain or shared). */
  abstract readonly bits: BitStorage;
  /** What `other` must share with this filter to be combined: [what, mine, theirs]. */
  protected abstract requirements(other: this): readonly Requirement[];
  /** The type's name in a {@link share} handle. */
  protected abstract readonly sharedType: SharedFilterType;
  /** The explicit shape of this filter (what its constructor takes). */
  abstract shape(): object;

  /** Number of bits (m). */
  get bitSize(): number {
    return this.bits.bitSize;
  }

  /** Number of bits set. */
  get bitCount(): number {
    return this.bits.bitCount();
  }

  /** Whether `other` can be combined with this filter (same shape and hashing, not itself). */
  isCompatible(other: this): boolean {
    const rules = (o: never) => this.requirements(o);
    return incompatibility(this.constructor as AnyClass, this, other, rules) === null;
  }

  /**
   * Adds every key of `other` (Guava's `putAll`): the bitwise OR, in place; returns this. The
   * result answers true for every key added to either filter. Throws `IncompatibleFiltersError`
   * naming the first difference (or a `TypeError` when `other` is not this kind of filter).
   */
  union(other: this): this {
    checkCombinable(this.constructor as AnyClass, this, other, (o: never) => this.requirements(o));
    this.bits.orWith(other.bits);
    return this;
  }

  /**
   * Keeps only the bits set in both filters: the bitwise AND, in place; returns this. Every key
   * added to both still answers true; the rate is at most that of either filter (often higher
   * than a filter built from the true intersection, since shared bits of different keys survive).
   */
  intersect(other: this): this {
    checkCombinable(this.constructor as AnyClass, this, other, (o: never) => this.requirements(o));
    this.bits.andWith(other.bits);
    return this;
  }

  /** Forgets every key. */
  override clear(): void {
    this.bits.clear();
  }

  /** Same class, same shape and hashing (every requirement), and the same bits. */
  equals(other: unknown): boolean {
    if (!(other instanceof (this.constructor as AnyClass))) return false;
    if (other === this) return true;
    for (const [, mine, theirs] of this.requirements(other as this)) {
      if (mine !== theirs) return false;
    }
    const a = this.bits.data;
    const b = (other as this).bits.data;
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /**
   * A handle to this filter's shared memory, to send to a worker (`postMessage`): there the
   * class's `fromShared(handle)` opens the same filter on the same bits, and adds from any number
   * of threads lose nothing (`Atomics.or`). Only for a filter made with `{ shared: true }` (else a
   * `TypeError`). `estimatedCount()`, `expectedFpp()` and `bitCount` read a snapshot: adds
   * racing the count may or may not be in it.
   */
  share(): SharedFilterHandle {
    const name = typeNameOf(this.constructor);
    return shareStorage(this.sharedType, name, this.shape(), this.bits.data);
  }
}

/**
 * The storage of a filter of `bitSize` bits: `storage` when given (it must have that size), else
 * new bits, shared (written atomically) or plain.
 */
export function bitsOf(
  bitSize: number,
  shared: boolean | undefined,
  storage?: BitStorage,
): BitStorage {
  if (storage !== undefined && storage.bitSize !== bitSize) {
    throw new RangeError(`storage has ${storage.bitSize} bits, the shape needs ${bitSize}`);
  }
  return storage ?? (shared ? new SharedBitArray(bitSize) : new BitArray(bitSize));
}

/**
 * The shape and the shared bits behind a `share()` handle of a `type` filter (checked), for its
 * `fromShared`; `sizeOf` gives the bits of a shape.
 */
export function sharedBits<S>(
  handle: SharedFilterHandle,
  type: SharedFilterType,
  sizeOf: (shape: S) => number,
): { shape: S; bits: SharedBitArray } {
  const h = checkSharedHandle(handle, type);
  const shape = h.shape as unknown as S;
  const bitSize = sizeOf(shape);
  return { shape, bits: new SharedBitArray(bitSize, sharedView(h, Uint32Array, bitSize / 32)) };
}
