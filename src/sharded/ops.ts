/**
 * How a stored filter runs its work against a {@link ShardStore}, whatever the store: every call
 * is one operation bounded in time, and a batch is sent in bounded windows.
 *
 * - An operation fails at once when the store is not ready; a store client's failure becomes the
 *   store's typed error (`ShardStore.wrap`); past `timeout` ms without an answer it rejects with
 *   the store's timeout error and its `signal` tells the work to send nothing more; a caller's
 *   `signal` aborts it the same way with `signal.reason`.
 * - Batches: keys are taken from the input (any iterable or async iterable) a window of
 *   {@link WINDOW} at a time; a window's operations are issued in one turn of the event loop (one
 *   pipelined burst, see store.ts), with up to {@link DEPTH} windows in flight. Memory stays
 *   bounded whatever the batch size, and the first failure, timeout or abort stops the batch: no
 *   window is sent after it, and the error's `batch` says which keys were applied. The timeout
 *   bounds each window (a batch fails when no window completed for `timeout` ms), so a large batch
 *   is not cut by it.
 */

import { show } from '../errors.js';
import type { AbortSignalLike, ProgressOptions } from '../filters/filter.js';
import { type BatchOutcome, KEY_STATUS, StoredFilterError } from './errors.js';
import type { ShardStore } from './store.js';

export { settleAll } from './settle.js';

/** Options of every stored filter's `create` and `open`. */
export interface StoreOptions {
  /**
   * Bound in ms on each operation, and on each window of a batch: a call rejects with the store's
   * timeout error (`RedisFilterTimeoutError`) when the store has not answered for this long (a
   * batch when no window completed for this long, whatever its size), and a batch then sends
   * nothing more. Default 10,000 ms ({@link DEFAULT_TIMEOUT}); `Infinity` for none; otherwise
   * below 2^31 (a timer cannot wait longer: `RangeError`).
   */
  timeout?: number;
  /**
   * Replicas that must hold a write before it is acknowledged. 0 (the default): acknowledged
   * when the primary applied it, as Redis does; its asynchronous replication means a failover
   * after a primary crash can lose the last writes, and no one can tell. n > 0: each window of
   * adds or removes is followed by a wait for n replicas (Redis `WAIT n replicaTimeout` on every
   * shard it wrote), and when fewer confirm, the call rejects with the store's replication error
   * (`RedisFilterReplicationError`) instead: an add that resolved is then on n replicas, and a
   * failover loses only writes whose callers were told. Costs a round trip per window, plus the
   * replicas' lag. The store must have replicas to wait for (`ShardStore.waitReplicas`).
   */
  replicas?: number;
  /** How long, in ms, each wait for `replicas` may take (default 1,000). */
  replicaTimeout?: number;
}

/** The default `timeout`, ms. */
export const DEFAULT_TIMEOUT = 10_000;

/** The default `replicaTimeout`, ms. */
export const DEFAULT_REPLICA_TIMEOUT = 1_000;

/**
 * Keys per window of a batch. Small windows keep few commands in flight: a node-redis command
 * allocates about 6 KB on its way out, and with 2,048 commands in flight (512 × 4) they outlived
 * V8's young-generation collections and were promoted, which made the old generation (the peak
 * RSS of a large batch) and the collector's work grow; at 1,024 in flight they die young.
 */
export const WINDOW = 256;
/** Windows in flight at once. */
export const DEPTH = 4;

/** The state of one operation: aborted on timeout, failure or the caller's signal. */
/** Whether an operation stopped, and why (what `AbortSignal` says, without its event target). */
export interface OpSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
}

export interface OpContext {
  /** Set once the operation failed, timed out or was aborted: `fn` then sends nothing more. */
  readonly signal: OpSignal;
  /** Restarts the timeout (a batch calls it whenever a window completes). */
  progress(): void;
  /** Stops the timeout until the next `progress()` (while a batch waits for its input). */
  pause(): void;
  /** Set by a batch, so that a timeout can say which keys were applied. */
  outcome?: Outcome;
}

/** The per-key status of a batch (see `BatchOutcome`). */
export class Outcome {
  status = new Uint8Array(WINDOW * DEPTH);
  seen = 0;

  reserve(n: number): void {
    this.seen += n;
    if (this.seen > this.status.length) {
      const grown = new Uint8Array(Math.max(this.seen, this.status.length * 2));
      grown.set(this.status);
      this.status = grown;
    }
  }

  snapshot(): BatchOutcome {
    const status = this.status.slice(0, this.seen);
    let applied = 0;
    for (let i = 0; i < status.length; i++) if (status[i] === KEY_STATUS.applied) applied++;
    return { seen: this.seen, applied, status };
  }
}

/** A store with a label and a timeout: runs one filter object's operations. */
export class StoreOps<S extends ShardStore = ShardStore> {
  readonly timeout: number;
  /** Replicas every write must reach before it is acknowledged (see {@link StoreOptions}). */
  readonly replicas: number;
  readonly replicaTimeout: number;

  constructor(
    readonly store: S,
    /** Names the filter in error messages, e.g. `RedisBloomFilter "seen"`. */
    readonly label: string,
    options: StoreOptions = {},
  ) {
    const timeout = options.timeout ?? DEFAULT_TIMEOUT;
    // setTimeout takes a signed 32-bit delay: 2^31 ms or more would fire after 1 ms.
    if (
      !(typeof timeout === 'number' && timeout > 0 && (timeout < 2 ** 31 || timeout === Infinity))
    ) {
      throw new RangeError(
        `timeout must be a positive number of ms below 2^31, or Infinity, got ${show(timeout)}`,
      );
    }
    this.timeout = timeout;
    const replicas = options.replicas ?? 0;
    if (!(Number.isInteger(replicas) && replicas >= 0 && replicas <= 1000)) {
      throw new RangeError(`replicas must be an integer in [0, 1000], got ${show(replicas)}`);
    }
    if (replicas > 0 && store.waitReplicas === undefined) {
      throw new RangeError(
        `replicas must be 0 for a ${store.noun} of this client (it cannot wait for replicas), got ${replicas}`,
      );
    }
    const replicaTimeout = options.replicaTimeout ?? DEFAULT_REPLICA_TIMEOUT;
    if (!(typeof replicaTimeout === 'number' && replicaTimeout > 0 && replicaTimeout < 2 ** 31)) {
      throw new RangeError(
        `replicaTimeout must be a positive number of ms below 2^31, got ${show(replicaTimeout)}`,
      );
    }
    this.replicas = replicas;
    this.replicaTimeout = replicaTimeout;
  }

  /**
   * After a window's writes (`op` of keys [offset, offset + count) of a batch, to the shards
   * `refs`): returns at once without the `replicas` option; else waits for that many replicas to
   * confirm them, the window's applied keys marked unknown in `status` meanwhile (and applied
   * again once confirmed). When fewer confirmed within `replicaTimeout`, they stay unknown and the
   * store's replication error is thrown: the writes are not acknowledged.
   */
  async replicated(
    refs: readonly string[],
    op: 'add' | 'remove',
    status: Uint8Array,
    offset: number,
    count: number,
  ): Promise<void> {
    if (this.replicas === 0 || refs.length === 0) return;
    // Unknown until the replicas confirm: a timeout, an abort or a lost link meanwhile leaves
    // them so (a batch's error must not call applied what a failover could lose).
    const applied: number[] = [];
    for (let i = offset; i < offset + count; i++) {
      if (status[i] !== KEY_STATUS.applied) continue;
      status[i] = KEY_STATUS.unknown;
      applied.push(i);
    }
    const got = await this.store.waitReplicas!(
      [...new Set(refs)],
      this.replicas,
      this.replicaTimeout,
    );
    if (got >= this.replicas) {
      for (const i of applied) status[i] = KEY_STATUS.applied;
      return;
    }
    throw this.store.error(
      'unreplicated',
      `${this.label}: ${op === 'add' ? 'adding' : 'removing'} ${count} key${count === 1 ? '' : 's'} applied by the primary, but only ${got} of ${this.replicas} replicas confirmed within ${this.replicaTimeout} ms: not acknowledged (a failover could lose it); ${op === 'add' ? 'adding again is safe' : 'do not send the removes again (the primary applied them)'}`,
    );
  }

  /**
   * Runs `fn` as one filter operation (see the module comment); `ctx.signal` tells `fn` to send
   * nothing more once the operation failed, timed out or was aborted.
   */
  async op<T>(
    what: string,
    fn: (ctx: OpContext) => Promise<T>,
    signal?: AbortSignalLike,
  ): Promise<T> {
    const label = `${this.label}: ${what}`;
    const notReady = this.store.notReady();
    if (notReady !== null) throw this.store.error('failed', `${label} failed: ${notReady}`);
    if (signal?.aborted === true) throw signal.reason;
    // A plain flag rather than an AbortController: only `fn` reads it, and an AbortController
    // (an EventTarget) per single-key operation costs more than the rest of the bookkeeping.
    const stop = { aborted: false, reason: undefined as unknown };
    const abort = (reason: unknown): void => {
      if (stop.aborted) return;
      stop.aborted = true;
      stop.reason = reason;
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    let expire: () => void = () => undefined;
    const ctx: OpContext = {
      signal: stop,
      progress: () => {
        clearTimeout(timer);
        if (Number.isFinite(this.timeout) && !stop.aborted) {
          timer = setTimeout(expire, this.timeout);
        }
      },
      pause: () => clearTimeout(timer),
    };
    const interrupted = new Promise<never>((_, reject) => {
      expire = () => {
        const err = this.store.error(
          'timeout',
          `${label} did not complete within ${this.timeout} ms`,
        ) as Error & { batch?: BatchOutcome };
        if (ctx.outcome !== undefined) err.batch = ctx.outcome.snapshot();
        abort(err);
        reject(err);
      };
      ctx.progress();
      if (signal !== undefined && typeof (signal as AbortSignal).addEventListener === 'function') {
        onAbort = () => {
          const reason: unknown = signal.reason;
          if (ctx.outcome !== undefined && reason instanceof Error) {
            (reason as { batch?: BatchOutcome }).batch = ctx.outcome.snapshot();
          }
          abort(reason);
          reject(reason);
        };
        (signal as AbortSignal).addEventListener('abort', onAbort, { once: true });
      }
    });
    interrupted.catch(() => undefined);
    const work = fn(ctx);
    work.catch(() => undefined); // a late failure after the deadline is not unhandled
    try {
      return await Promise.race([work, interrupted]);
    } catch (err) {
      if (err === signal?.reason && signal?.aborted) throw err;
      const wrapped = this.store.wrap(label, err);
      if (
        wrapped instanceof StoredFilterError &&
        wrapped.batch === undefined &&
        ctx.outcome !== undefined
      ) {
        wrapped.batch = ctx.outcome.snapshot();
      }
      abort(wrapped);
      throw wrapped;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) (signal as AbortSignal).removeEventListener('abort', onAbort);
    }
  }

  /**
   * A batch as one operation: takes the keys a window at a time and calls `run(window, offset,
   * status, ctx)` for each, up to {@link DEPTH} at once. `run` sends the window's operations (in
   * one turn) and records each key's status in `status[offset + j]` as it goes (`unknown` when
   * sent, `applied` or `notApplied` when answered). Stops taking keys at the first failure,
   * timeout or abort. Resolves to the number of keys. `size`: keys per window.
   */
  batch<K>(
    what: string,
    keys: Iterable<K> | AsyncIterable<K>,
    options: ProgressOptions | undefined,
    run: (window: K[], offset: number, status: Uint8Array, ctx: OpContext) => Promise<void>,
    size = WINDOW,
  ): Promise<number> {
    if (
      keys === null ||
      typeof keys !== 'object' ||
      !(Symbol.iterator in keys || Symbol.asyncIterator in keys)
    ) {
      throw new TypeError(`keys must be an iterable or async iterable, got ${show(keys)}`);
    }
    const onProgress = options?.onProgress;
    return this.op(
      what,
      async (ctx) => {
        const outcome = new Outcome();
        ctx.outcome = outcome;
        const source = windows(keys, size);
        const inFlight: Promise<void>[] = [];
        let failed: { err: unknown } | undefined;
        let done = 0;
        try {
          for (;;) {
            if (ctx.signal.aborted) throw ctx.signal.reason;
            if (failed !== undefined) throw failed.err;
            if (options?.signal?.aborted === true) throw options.signal.reason;
            if (inFlight.length === 0) ctx.pause(); // waiting for the caller's keys, not the store
            const next = await source.next();
            ctx.progress();
            if (next.done === true || ctx.signal.aborted || failed !== undefined) break;
            const window = next.value;
            const offset = outcome.seen;
            outcome.reserve(window.length);
            const work = run(window, offset, outcome.status, ctx).then(() => {
              ctx.progress();
              done += window.length;
              onProgress?.(done);
            });
            // Any window's failure stops the batch before the next window is taken.
            work.catch((err: unknown) => {
              failed ??= { err };
            });
            inFlight.push(work);
            if (inFlight.length >= DEPTH) await inFlight.shift();
          }
          for (const work of inFlight) await work;
        } finally {
          await source.return(undefined);
        }
        return outcome.seen;
      },
      options?.signal,
    );
  }

  /** Deletes shards `refs` (`ShardStore.deleteShards`), a window of them at a time. */
  async deleteShards(refs: readonly string[]): Promise<void> {
    for (let start = 0; start < refs.length; start += WINDOW * DEPTH) {
      await this.store.deleteShards(refs.slice(start, start + WINDOW * DEPTH));
    }
  }

  /** Issues `command(i)` for i in [0, count), a window of calls at a time; the replies in order. */
  async all<T>(count: number, command: (i: number) => Promise<T>): Promise<T[]> {
    const out = new Array<T>(count);
    for (let start = 0; start < count; start += WINDOW * DEPTH) {
      const end = Math.min(count, start + WINDOW * DEPTH);
      const pending: Promise<T>[] = [];
      for (let i = start; i < end; i++) pending.push(command(i));
      const replies = await Promise.all(pending);
      for (let i = 0; i < replies.length; i++) out[start + i] = replies[i]!;
    }
    return out;
  }
}

/** The keys of `source` in arrays of at most `size`, from an iterable or an async iterable. */
async function* windows<K>(
  source: Iterable<K> | AsyncIterable<K>,
  size: number,
): AsyncGenerator<K[]> {
  let window: K[] = [];
  if (Symbol.asyncIterator in source) {
    for await (const key of source as AsyncIterable<K>) {
      window.push(key);
      if (window.length === size) {
        yield window;
        window = [];
      }
    }
  } else {
    for (const key of source as Iterable<K>) {
      window.push(key);
      if (window.length === size) {
        yield window;
        window = [];
      }
    }
  }
  if (window.length > 0) yield window;
}
