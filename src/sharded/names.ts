/**
 * Filter names, the same rule for every store (so a filter can move between stores under its
 * name): a non-empty, well-formed string without `{` or `}`. Braces delimit Redis Cluster hash tags
 * (a `}` would end the tag early and put every shard in the same slot); a lone surrogate is sent
 * as U+FFFD by text protocols, so two names would share keys.
 */

import { show } from '../errors.js';

/** Throws a `TypeError` or `RangeError` unless `name` can name a filter; returns it. */
export function checkName(name: unknown): string {
  if (typeof name !== 'string') throw new TypeError(`name must be a string, got ${show(name)}`);
  if (name.length === 0) throw new RangeError('name must not be empty');
  if (name.includes('{') || name.includes('}')) {
    throw new RangeError(
      `name must not contain '{' or '}' (they delimit Redis Cluster hash tags), got ${show(name)}`,
    );
  }
  if (!isWellFormed(name)) {
    throw new RangeError(
      `name must be well-formed Unicode (a lone surrogate would be sent as U+FFFD and collide with other names), got ${show(name)}`,
    );
  }
  return name;
}

/** Whether `s` has no lone surrogate (String.prototype.isWellFormed, for runtimes without it). */
export function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return false;
    const d = s.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
    i++;
  }
  return true;
}
