/**
 * What every bloomkit filter has in common, so that one conformance suite can check them all.
 */

import { IncompatibleFiltersError, show } from '../errors.js';
import type { Funnel, Key } from '../hash/keys.js';

/** An approximate set: `has` never answers false for a key that was added (and not removed). */
export interface MembershipFilter {
  /** The key encoding the filter was built for; keys of another kind are a `TypeError`. */
  readonly funnel: Funnel;
  /** Adds `key`; true if the filter changed (the key was certainly new), as Guava's `put`. */
  add(key: Key): boolean;
  /** False if `key` was certainly never added; true if it probably was. */
  has(key: Key): boolean;
  /** Forgets every key. */
  clear(): void;
  /** bloomkit's native binary form (see docs/FORMAT.md). */
  toBytes(): Uint8Array;
}

/** A filter that supports deletion. */
export interface DeletableFilter extends MembershipFilter {
  /** Removes one occurrence of `key`; false (and no change) if it cannot be present. */
  remove(key: Key): boolean;
}

/** A property two filters must share to be combined: [what they must have, this value, other's]. */
export type Requirement = readonly [must: string, mine: unknown, theirs: unknown];

/**
 * Why `self` and `other` cannot be combined (union, intersection), or null if they can: `other`
 * must be another instance of `type` and meet every requirement. The reason names the first
 * difference and both values, in Guava's words (`BloomFilters must have equal funnels (a != b)`).
 */
export function incompatibility(
  type: abstract new (...args: never[]) => object,
  self: object,
  other: unknown,
  requirements: (other: never) => readonly Requirement[],
): string | null {
  if (!(other instanceof type)) return `other must be a ${type.name}, got ${show(other)}`;
  if (other === self) return `cannot combine a ${type.name} with itself`;
  for (const [must, mine, theirs] of requirements(other as never)) {
    if (mine !== theirs) return `${type.name}s must ${must} (${String(mine)} != ${String(theirs)})`;
  }
  return null;
}

/**
 * Throws what {@link incompatibility} finds: a `TypeError` when `other` is not a `type` at all,
 * else an `IncompatibleFiltersError`.
 */
export function checkCombinable(
  type: abstract new (...args: never[]) => object,
  self: object,
  other: unknown,
  requirements: (other: never) => readonly Requirement[],
): void {
  const problem = incompatibility(type, self, other, requirements);
  if (problem === null) return;
  if (!(other instanceof type)) throw new TypeError(problem);
  throw new IncompatibleFiltersError(problem);
}
