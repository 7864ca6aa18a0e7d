/**
 * The caller's source of truth that {@link CountingBloomFilter.safeRemove} asks before it removes
 * a key: the exact record of what was added (a `Set`, anything with `has(key)`, or a function),
 * which closes the hazard of removing a false positive (see filter.ts).
 */

import { mustBe, show } from '../../errors.js';
import type { Key } from '../../hash/keys.js';

/**
 * The source of truth {@link CountingBloomFilter.safeRemove} asks: a `Set` of keys, or anything
 * with `has(key)`, or a function. It must answer for the state before the removal.
 */
export type MembershipSource = { has(key: Key): boolean } | ((key: Key) => boolean);

/** Whether `source` holds `key`; a `TypeError` for a source of another kind or a non-boolean answer. */
export function sourceHolds(source: MembershipSource, key: Key): boolean {
  let present: unknown;
  if (typeof source === 'function') present = source(key);
  else if (source !== null && typeof source === 'object' && typeof source.has === 'function') {
    present = source.has(key);
  } else {
    throw mustBe('source', 'a Set, an object with has(key) or a function', source, TypeError);
  }
  if (typeof present !== 'boolean') {
    throw new TypeError(`source must answer a boolean for ${show(key)}, got ${show(present)}`);
  }
  return present;
}
