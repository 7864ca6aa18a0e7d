/**
 * A Redis filter's metadata hash: reading it from any reply shape, checking its fields against
 * what the caller asked for, the metadata version, filter ids and TTLs.
 */

import { randomInt } from 'node:crypto';
import { FormatError, show } from '../errors.js';
import { RedisFilterMismatchError } from './errors.js';
import type { Meta } from './store.js';

function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/** A hash reply as field → value: a flat array (RESP2, Lua) or a map/object (RESP3). */
export function toMeta(reply: unknown): Meta {
  const meta: Meta = {};
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) meta[text(reply[i])] = text(reply[i + 1]);
  } else if (reply instanceof Map) {
    for (const [field, value] of reply) meta[text(field)] = text(value);
  } else if (reply !== null && typeof reply === 'object') {
    for (const [field, value] of Object.entries(reply)) meta[field] = text(value);
  }
  return meta;
}

/** Reads an integer field of the metadata, or throws `FormatError`. */
export function metaInt(meta: Meta, field: string, name: string): number {
  const raw = meta[field];
  const value = raw === undefined ? Number.NaN : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || String(value) !== raw) {
    throw new FormatError(
      `Redis filter ${show(name)} has a bad ${field} in its metadata: ${show(raw)}`,
    );
  }
  return value;
}

/**
 * Throws `RedisFilterMismatchError` for the first field of `requested` whose value differs from
 * the stored one (a missing value is `undefined`).
 */
export function checkMeta(
  name: string,
  meta: Meta,
  requested: Readonly<Record<string, string | undefined>>,
): void {
  for (const [field, value] of Object.entries(requested)) {
    if (meta[field] !== value) throw new RedisFilterMismatchError(name, field, meta[field], value);
  }
}

/** The metadata version this bloomkit writes and reads. */
export const META_VERSION = '2';

/** Checks the metadata version and kind of an existing filter. */
export function checkKind(name: string, meta: Meta, kind: string): void {
  if (meta.v !== META_VERSION) {
    throw new FormatError(
      `Redis filter ${show(name)} has metadata version ${show(meta.v)}; this bloomkit reads version ${META_VERSION}`,
    );
  }
  checkMeta(name, meta, { kind });
}

/** A new filter id: a random u32 ≥ 1 (0 marks a missing shard). */
export function newId(): string {
  return String(randomInt(1, 2 ** 32 - 1));
}

/** Converts a `ttl` option (seconds, may be fractional) to whole ms, or throws `RangeError`. */
export function ttlMs(ttl: unknown): number | undefined {
  if (ttl === undefined) return undefined;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || Math.round(ttl * 1000) < 1) {
    throw new RangeError(
      `ttl must be a positive number of seconds (at least 0.001), got ${show(ttl)}`,
    );
  }
  return Math.round(ttl * 1000);
}
