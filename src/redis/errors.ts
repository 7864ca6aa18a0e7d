/**
 * Errors of the Redis-backed filters: the Redis store's classes of the stored filters' errors
 * (src/sharded/errors.ts). Bad arguments are `RangeError`/`TypeError` as everywhere in bloomkit;
 * these classes cover what a caller of a shared store wants to catch.
 *
 * One hierarchy: each Redis error is a subclass of its storage-level twin
 * (`RedisFilterLostError extends StoredFilterLostError`, and so for Stale, Timeout, NotFound and
 * Replication), so code written against any `ShardStore` catches a lost Redis filter; and every
 * one of them is also `instanceof RedisFilterError` (the class recognises the Redis store's
 * errors by a brand, since a class has one parent).
 */

import {
  StoredFilterError,
  StoredFilterLostError,
  StoredFilterMismatchError,
  StoredFilterNotFoundError,
  StoredFilterReplicationError,
  StoredFilterStaleError,
  StoredFilterTimeoutError,
} from '../sharded/errors.js';

/** Marks the errors of the Redis store (see {@link RedisFilterError}). */
const REDIS = Symbol.for('bloomkit.RedisFilterError');

/** Whether `value` is an error of the Redis store. */
function isRedisError(value: unknown): boolean {
  return value instanceof StoredFilterError && (value as { [REDIS]?: unknown })[REDIS] === true;
}

export { type BatchOutcome, KEY_STATUS } from '../sharded/errors.js';

/**
 * A Redis command of a filter operation failed: the connection closed (the server died or
 * restarted), the client is not connected, the server answered an error, or the operation did not
 * finish within the filter's `timeout`. `cause` holds the client library's own error.
 *
 * A failed batch says in `batch` which keys were applied. Adding is idempotent, so retrying an add
 * is always safe; a key whose add was acknowledged is never answered absent unless an error said
 * the filter was lost ({@link RedisFilterLostError}).
 */
export class RedisFilterError extends StoredFilterError {
  override readonly name: string = 'RedisFilterError';
  readonly [REDIS] = true;

  /** Every error of the Redis store, its subclasses of the storage-level classes included. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class on the right of `instanceof`: a subclass keeps the ordinary test.
    // biome-ignore lint/complexity/noThisInStatic: which class is asked is the point
    return this === RedisFilterError
      ? isRedisError(value)
      : // biome-ignore lint/complexity/noThisInStatic: the subclass asked
        Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/**
 * Part of the filter is missing from Redis: a shard (or the metadata) was deleted, evicted under
 * memory pressure, expired, or lost in a restart without persistence. Keys added before may now be
 * answered absent, so the filter refuses to answer or write; `clear()` rebuilds the missing shards
 * empty (the caller re-adds its keys), `destroy()` removes the filter.
 */
export class RedisFilterLostError extends StoredFilterLostError {
  override readonly name = 'RedisFilterLostError';
  readonly [REDIS] = true;
}

/**
 * The filter this object opened was deleted and created again (another `id` in its metadata)
 * since: its shape may differ, so this object refuses to touch it. Open it again.
 */
export class RedisFilterStaleError extends StoredFilterStaleError {
  override readonly name = 'RedisFilterStaleError';
  readonly [REDIS] = true;
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

/**
 * The server's persistence may lose acknowledged writes in a crash (anything but `appendonly yes`
 * with `appendfsync always` on every master), or could not be read (`CONFIG` renamed or
 * disabled). Pass `durability: 'best-effort'` to accept that (persistence.ts lists what each
 * configuration loses).
 */
export class RedisPersistenceError extends RedisFilterError {
  override readonly name = 'RedisPersistenceError';
}

/** The operation did not complete within the filter's `timeout` (ms). */
export class RedisFilterTimeoutError extends StoredFilterTimeoutError {
  override readonly name = 'RedisFilterTimeoutError';
  readonly [REDIS] = true;
}

/** `open` found no filter of that name (never created, deleted, or expired by its TTL). */
export class RedisFilterNotFoundError extends StoredFilterNotFoundError {
  override readonly name = 'RedisFilterNotFoundError';
  readonly [REDIS] = true;
}

/**
 * The adds (or removes) were applied by the master, but fewer replicas than the filter's
 * `replicas` option confirmed them (`WAIT`) within `replicaTimeout` ms: they are not
 * acknowledged, because a failover to a replica that lacks them would lose them. A failed
 * batch's `status` marks the keys of the unconfirmed windows as unknown: adding again is safe; a
 * remove was applied by the master and must not be sent again (it would remove twice).
 */
export class RedisFilterReplicationError extends StoredFilterReplicationError {
  override readonly name = 'RedisFilterReplicationError';
  readonly [REDIS] = true;
}

/**
 * A filter of that name exists with other parameters (or is of another kind) than the ones given
 * to `create`/`open`/`fromBytes`. Names the parameter and both values.
 */
export class RedisFilterMismatchError extends StoredFilterMismatchError {
  constructor(filter: string, parameter: string, existing?: string, requested?: string) {
    super(filter, parameter, existing, requested, 'Redis filter');
    (this as { name: string }).name = 'RedisFilterMismatchError';
  }
}

/** The Redis store's class of each kind of stored-filter error (`ShardStore.error`). */
export const REDIS_ERRORS = {
  failed: RedisFilterError,
  timeout: RedisFilterTimeoutError,
  lost: RedisFilterLostError,
  stale: RedisFilterStaleError,
  notFound: RedisFilterNotFoundError,
  unreplicated: RedisFilterReplicationError,
} as const;
