/**
 * Errors of the filters kept in a shard store (store.ts), and the per-key outcome of a batch.
 * Bad arguments are `RangeError`/`TypeError` as everywhere in bloomkit; these classes cover what a
 * caller of a shared store wants to catch. A store names its own subclasses (the Redis store makes
 * `RedisFilterError` and its kin, src/redis/errors.ts); every one is a {@link StoredFilterError}
 * (or, for parameters that differ, a {@link StoredFilterMismatchError}).
 */

import { FilterFullError, FormatError, IncompatibleFiltersError, show } from '../errors.js';

/** Per-key status codes of {@link BatchOutcome.status}. */
export const KEY_STATUS = {
  /** Never sent, or refused by the store without a change: safe to send again. */
  notApplied: 0,
  /** Acknowledged by the store. */
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
 * An operation of a stored filter failed: the store's connection failed, the operation did not
 * finish within the filter's `timeout`, or the filter's data is gone. A failed batch says in
 * `batch` which keys were applied.
 */
export class StoredFilterError extends Error {
  override readonly name: string = 'StoredFilterError';
  /** For a batch (`addMany`, `hasMany`, `removeMany`): what happened to each key. */
  batch?: BatchOutcome;
}

/** Part of the filter is missing from its store: keys added before may now be answered absent. */
export class StoredFilterLostError extends StoredFilterError {
  override readonly name: string = 'StoredFilterLostError';
}

/** The filter was deleted and created again since this object opened it: open it again. */
export class StoredFilterStaleError extends StoredFilterError {
  override readonly name: string = 'StoredFilterStaleError';
}

/** The operation did not complete within the filter's `timeout` (ms). */
export class StoredFilterTimeoutError extends StoredFilterError {
  override readonly name: string = 'StoredFilterTimeoutError';
}

/** `open` found no filter of that name (never created, deleted, or expired by its TTL). */
export class StoredFilterNotFoundError extends StoredFilterError {
  override readonly name: string = 'StoredFilterNotFoundError';
}

/**
 * Writes were applied by the store's primary, but fewer replicas than the filter's `replicas`
 * option confirmed them within `replicaTimeout`: they are not acknowledged, since a failover
 * could lose them. The batch's `status` counts them as unknown: adding again is safe; a remove
 * was applied by the primary and must not be sent again (it would remove twice).
 */
export class StoredFilterReplicationError extends StoredFilterError {
  override readonly name: string = 'StoredFilterReplicationError';
}

/** The kinds of failure a store names with its own error classes (see `ShardStore.error`). */
export type StoreErrorKind = 'failed' | 'timeout' | 'lost' | 'stale' | 'notFound' | 'unreplicated';

/** The generic error classes, by kind (a store without classes of its own uses these). */
export const STORED_ERRORS = {
  failed: StoredFilterError,
  timeout: StoredFilterTimeoutError,
  lost: StoredFilterLostError,
  stale: StoredFilterStaleError,
  notFound: StoredFilterNotFoundError,
  unreplicated: StoredFilterReplicationError,
} as const;

/**
 * What `ShardStore.wrap` gives for `err`: bloomkit's own errors (and argument errors) unchanged;
 * anything else (a store client's failure) as `new failed('<label> failed: <err>')`, with `err`
 * as its cause.
 */
export function wrapFailure(
  label: string,
  err: unknown,
  failed: new (message: string, options?: { cause: unknown }) => Error,
): unknown {
  if (
    err instanceof StoredFilterError ||
    err instanceof FilterFullError ||
    err instanceof FormatError ||
    err instanceof TypeError || // includes IncompatibleFiltersError and the mismatch errors
    err instanceof RangeError
  ) {
    return err;
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new failed(`${label} failed: ${message}`, { cause: err });
}

/** An error class of a store (`STORED_ERRORS`, or a store's own, e.g. `REDIS_ERRORS`). */
type ErrorClass = new (message: string, options?: { cause: unknown }) => Error;

/**
 * The error methods of a `ShardStore` (`error`, `mismatch`, `wrap`), written once: a store
 * extends this with its classes by kind and its mismatch class.
 */
export abstract class StoreErrorNames {
  protected constructor(
    private readonly classes: Readonly<Record<StoreErrorKind, ErrorClass>>,
    private readonly mismatchClass: new (
      filter: string,
      parameter: string,
      existing?: string,
      requested?: string,
    ) => Error,
  ) {}

  /** The store's error of `kind` (see `ShardStore.error`). */
  error(kind: StoreErrorKind, message: string, cause?: unknown): Error {
    return new this.classes[kind](message, cause === undefined ? undefined : { cause });
  }

  /** The store's error for a parameter that differs from the stored filter's. */
  mismatch(name: string, parameter: string, existing?: string, requested?: string): Error {
    return new this.mismatchClass(name, parameter, existing, requested);
  }

  /** bloomkit's own errors (and argument errors) pass; a store client's failure is wrapped. */
  wrap(label: string, err: unknown): unknown {
    return wrapFailure(label, err, this.classes.failed);
  }
}

/**
 * A filter of that name exists with other parameters (or is of another kind) than the ones given
 * to `create`/`open`/`fromBytes`. Names the parameter and both values.
 */
export class StoredFilterMismatchError extends IncompatibleFiltersError {
  constructor(
    /** The filter's name. */
    readonly filter: string,
    /** The parameter that differs, e.g. `capacity`. */
    readonly parameter: string,
    /** The value stored (`undefined` when the stored filter has none). */
    readonly existing: string | undefined,
    /** The value asked for (`undefined` when none was given). */
    readonly requested: string | undefined,
    /** How messages name a filter of this store, e.g. `Redis filter`. */
    noun = 'stored filter',
  ) {
    super(
      `${noun} ${show(filter)} exists with ${parameter} ${existing ?? '(none)'}, requested ${requested ?? '(none)'}`,
    );
    // The base class types `name` as its own literal; this subclass still names itself.
    (this as { name: string }).name = 'StoredFilterMismatchError';
  }
}
