/**
 * Errors of the Redis-backed filters. Bad arguments are `RangeError`/`TypeError` as everywhere in
 * bloomkit; these classes cover what a caller of a shared store wants to catch.
 */

import { IncompatibleFiltersError, show } from '../errors.js';

/**
 * A Redis command of a filter operation failed: the connection closed (the server died or
 * restarted), the client is offline, the server answered an error, or the operation did not finish
 * within the filter's `timeout`. `cause` holds node-redis' own error.
 *
 * A failed `add`/`addMany` may have applied some of its keys and not others. Adding is idempotent,
 * so the remedy is to retry the whole call; a key whose add was acknowledged is never lost (a
 * server without persistence loses everything when it restarts, of course).
 */
export class RedisFilterError extends Error {
  override readonly name: string = 'RedisFilterError';
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
