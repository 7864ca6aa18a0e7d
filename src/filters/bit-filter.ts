/**
 * What the three bit-array filters (classic, blocked, split-block) share, written once over their
 * storage (`BitStorage`: plain or shared memory): size and fill, Guava's `isCompatible` and
 * `putAll` rules for combining two filters (union = bitwise OR, intersection = bitwise AND, in
 * place), `equals`, and `clear`. Each filter states what two filters must share to be combined
 * (`requirements`), in the order Guava checks them, so the first difference is the one named.
 */

import type { BitStorage } from '../bits/bit-array.js';
import type { Key } from '../hash/keys.js';
import { FilterBase } from './base.js';
import { checkCombinable, incompatibility, type Requirement } from './filter.js';

type AnyClass = abstract new (...args: never[]) => object;

export abstract class BitFilter<K extends Key = Key> extends FilterBase<K> {
  /** The bit storage (plain or shared). */
  abstract readonly bits: BitStorage;
  /** What `other` must share with this filter to be combined: [what, mine, theirs]. */
  protected abstract requirements(other: this): readonly Requirement[];

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
}
