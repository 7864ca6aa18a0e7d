/**
 * What every bloomkit filter has in common, so that one conformance suite can check them all.
 */

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
