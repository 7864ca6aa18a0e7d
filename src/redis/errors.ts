/**
 * Errors of the Redis-backed filters. Bad arguments are `RangeError`/`TypeError` as everywhere in
 * bloomkit; these classes cover what a caller of a shared store wants to catch.
 */

import { IncompatibleFiltersError, show } from '../errors.js';

/**
 * A Redis command of a filter operation failed: the connection closed (the server died or
 * restarted), the client is not connected, the server answered an error, or the operation did not
 * finish within the filter's `timeout`. `cause` holds the client library's own error.
 *
 * A failed batch says in `batch` which keys were applied. Adding is idempotent, so retrying an add
 * is always safe; a key whose add was acknowledged is never answered absent unless an error said
 * the filter was lost ({@link RedisFilterLostError}).
 */
export class RedisFilterError extends Error {
  override readonly name: string = 'RedisFilterError';
  /** For a batch (`addMany`, `hasMany`, `removeMany`): what happened to each key. */
  batch?: BatchOutcome;
}

/** Per-key status codes of {@link BatchOutcome.status}. */
export const KEY_STATUS = {
  /** Never sent, or refused by the server without a change: safe to send again. */
  notApplied: 0,
  /** Acknowledged by the server. */
  applied: 1,
  /** Sent without an answer (timeout, dropped connection): it may or may not have been applied. */
  unknown: 2,
} as const;

/**
 * What a batch that stopped early did. The batch stops sending at the first failure, so keys past
 * `seen` were never read from the input. A retry should send only the keys whose status is
 * `notApplied` (for removes, resending an `unknown` key may remove it twice).
 */
export interface BatchOutcome {
  /** Keys taken from the input before the batch stopped. */
  readonly seen: number;
  /** How many of them were acknowledged. */
  readonly applied: number;
  /** `status[i]` for key i < seen: a {@link KEY_STATUS} code. */
  readonly status: Uint8Array;
}

/**
 * Part of the filter is missing from Redis: a shard (or the metadata) was deleted, evicted under
 * memory pressure, expired, or lost in a restart without persistence. Keys added before may now be
 * answered absent, so the filter refuses to answer or write; `clear()` rebuilds the missing shards
 * empty (the caller re-adds its keys), `destroy()` removes the filter.
 */
export class RedisFilterLostError extends RedisFilterError {
  override readonly name = 'RedisFilterLostError';
}

/**
 * The filter this object opened was deleted and created again (another `id` in its metadata)
 * since: its shape may differ, so this object refuses to touch it. Open it again.
 */
export class RedisFilterStaleError extends RedisFilterError {
  override readonly name = 'RedisFilterStaleError';
}

/**
 * The server may evict keys under memory pressure (`maxmemory-policy` `allkeys-*`, or `volatile-*`
 * for a filter with a TTL), which would silently lose part of a filter. Pass
 * `allowEviction: true` to accept that (the loss is then detected and reported as
 * {@link RedisFilterLostError}).
 */
export class RedisEvictionPolicyError extends RedisFilterError {
  override readonly name = 'RedisEvictionPolicyError';
}

/** The operation did not complete within the filter's `timeout` (ms). */
export class RedisFilterTimeoutError extends RedisFilterError {
  override readonly name = 'RedisFilterTimeoutError';
}

/** `open` found no filter of that name (never created, deleted, or expired by its TTL). */
export class RedisFilterNotFoundError extends RedisFilterError {
  override readonly name = 'RedisFilterNotFoundError';
}

/**
 * A filter of that name exists with other parameters (or is of another kind) than the ones given
 * to `create`/`open`/`fromBytes`. Names the parameter and both values.
 */
export class RedisFilterMismatchError extends IncompatibleFiltersError {
  constructor(
    /** The filter's name. */
    readonly filter: string,
    /** The parameter that differs, e.g. `capacity`. */
    readonly parameter: string,
    /** The value stored in Redis (`undefined` when the stored filter has none). */
    readonly existing: string | undefined,
    /** The value asked for (`undefined` when none was given). */
    readonly requested: string | undefined,
  ) {
    super(
      `Redis filter ${show(filter)} exists with ${parameter} ${existing ?? '(none)'}, requested ${requested ?? '(none)'}`,
    );
    // The base class types `name` as its own literal; this subclass still names itself.
    (this as { name: string }).name = 'RedisFilterMismatchError';
  }
}
