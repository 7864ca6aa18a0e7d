/**
 * What the application components need of a filter: an in-memory one (answers at once, one
 * process) or an async one (a Redis filter shared by many processes; answers with promises).
 */

import { show } from '../errors.js';
import type { AsyncMembershipFilter, MembershipFilter } from '../filters/filter.js';
import type { Key } from '../hash/keys.js';

/**
 * Any filter a component can work with: a {@link MembershipFilter} (in memory) or an
 * {@link AsyncMembershipFilter} (Redis, ...). Written as the few methods the components call, so
 * that a filter whose `add`/`addMany` report more (a Redis filter's per-key results) fits too.
 */
export interface AnyFilter<K extends Key> {
  has(key: K): boolean | Promise<boolean>;
  hasMany(keys: K[]): boolean[] | Promise<boolean[]>;
  add(key: K): unknown;
  addMany(keys: K[]): unknown;
}

/** `hasMany` when the filter has it (one round trip for Redis), else `has` of each key. */
export async function hasEach<K extends Key>(filter: AnyFilter<K>, keys: K[]): Promise<boolean[]> {
  if (typeof filter.hasMany === 'function') return await filter.hasMany(keys);
  return Promise.all(keys.map((key) => filter.has(key)));
}

/** `addMany` when the filter has it, else `add` of each key. */
export async function addEach<K extends Key>(filter: AnyFilter<K>, keys: K[]): Promise<void> {
  if (typeof filter.addMany === 'function') await filter.addMany(keys);
  else for (const key of keys) await filter.add(key);
}

/** Throws a `TypeError` naming `name` unless `value` has the methods of a filter that can add. */
export function checkFilter<K extends Key>(name: string, value: unknown): AnyFilter<K> {
  const f = value as Partial<MembershipFilter<K>> | null;
  if (
    f === null ||
    typeof f !== 'object' ||
    typeof f.has !== 'function' ||
    typeof f.add !== 'function'
  ) {
    throw new TypeError(
      `${name} must be a MembershipFilter or an AsyncMembershipFilter, got ${show(value)}`,
    );
  }
  return value as AnyFilter<K>;
}

/** Throws a `TypeError` naming `name` unless `value` is a function; returns it. */
export function checkFunction<T>(name: string, value: T): T {
  if (typeof value !== 'function') {
    throw new TypeError(`${name} must be a function, got ${show(value)}`);
  }
  return value;
}

/** Resolves after pending I/O callbacks had a turn (a macrotask), in browsers and Node alike. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
