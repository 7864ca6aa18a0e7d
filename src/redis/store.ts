/**
 * The storage side of the Redis filters: sending commands through a client library
 * (client.ts), running Lua scripts, bounding every operation in time, sending batches in bounded
 * windows, reading and creating the metadata hash, checking the server's eviction policy, and
 * turning failures into bloomkit's typed errors.
 *
 * Batches: keys are taken from the input (any iterable or async iterable) a window of
 * {@link WINDOW} at a time; a window's commands are issued in one turn of the event loop, which
 * both client libraries write as one pipelined burst (a cluster client one per node), with up to
 * {@link DEPTH} windows in flight. So memory stays bounded whatever the batch size, and the first
 * failure, timeout or abort stops the batch: no window is sent after it, and the error's `batch`
 * says which keys were applied.
 *
 * Metadata (hash `bk:m:{name}`, all values strings):
 *
 * | field       | meaning                                                                  |
 * |-------------|--------------------------------------------------------------------------|
 * | `v`         | metadata version, `2`                                                    |
 * | `kind`      | `bloom`, `counting` or `scalable`                                        |
 * | `id`        | random u32 ≥ 1, new for every creation (shards carry it, scripts.ts)     |
 * | `gen`       | generation, from 1, bumped by every `clear`                              |
 * | `ready`     | `1` once every shard exists (until then `open` creates the missing ones) |
 * | `funnel`    | key encoding                                                             |
 * | `capacity`, `fpp` | as created                                                         |
 * | `shardBits` | shard size limit asked for: bits; for `counting`, counters (option / 4)  |
 * | `ttl`       | time to live in ms, absent without one; `expireAt` ms since the epoch    |
 * | `shards`, `bits`, `hashes` | the shape: S, b (counters for `counting`) and k          |
 * | `growth`, `ratio`, `layers`, `layer:i` | scalable: see scalable.ts                     |
 *
 * It is created once, atomically, by a Lua script that writes it only if it does not exist and
 * returns what is there, so clients racing to create a filter all end up with the same one.
 */

import { FilterFullError, FormatError, show } from '../errors.js';
import type { AbortSignalLike, ProgressOptions } from '../filters/filter.js';
import { type CommandClient, commandClient, type RedisConnection } from './client.js';
import {
  type BatchOutcome,
  KEY_STATUS,
  RedisEvictionPolicyError,
  RedisFilterError,
  RedisFilterTimeoutError,
} from './errors.js';
import { toMeta } from './meta.js';
import { CREATE, type LuaScript } from './scripts.js';

export type { RedisConnection } from './client.js';

/** Options every Redis filter accepts when created or opened. */
export interface RedisFilterConnectionOptions {
  /**
   * Bound in ms on each operation, and on each window of a batch: a call rejects with
   * `RedisFilterTimeoutError` when Redis has not answered for this long (a batch when no window
   * completed for this long, whatever its size), and a batch then sends nothing more. Default
   * 10,000 ms ({@link DEFAULT_TIMEOUT}); `Infinity` for none.
   */
  timeout?: number;
  /**
   * Accept a server whose `maxmemory-policy` may evict the filter's keys (`allkeys-*`, or
   * `volatile-*` for a filter with a TTL). Default false: `create` and `open` reject with
   * `RedisEvictionPolicyError`. Evicted shards are detected either way (`RedisFilterLostError`).
   */
  allowEviction?: boolean;
}

/** The default `timeout`, ms. */
export const DEFAULT_TIMEOUT = 10_000;

/** A filter's metadata, field → value. */
export type Meta = Record<string, string>;

/** The fields a new filter's metadata is created with (`kind` among them). */
export type MetaFields = Readonly<Record<string, string>> & { readonly kind: string };

/** Keys per window of a batch (small windows keep the client libraries' garbage low). */
export const WINDOW = 512;
/** Windows in flight at once. */
export const DEPTH = 4;

/** The state of one operation: aborted on timeout, failure or the caller's signal. */
export interface OpContext {
  readonly signal: AbortSignal;
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

export class RedisStore {
  readonly client: CommandClient;
  readonly timeout: number;
  readonly allowEviction: boolean;

  constructor(
    connection: RedisConnection,
    /** Names the filter in error messages, e.g. `RedisBloomFilter "seen"`. */
    readonly label: string,
    options: RedisFilterConnectionOptions = {},
  ) {
    this.client = commandClient(connection);
    const timeout = options.timeout ?? DEFAULT_TIMEOUT;
    if (!(typeof timeout === 'number' && timeout > 0)) {
      throw new RangeError(`timeout must be a positive number of ms, got ${show(timeout)}`);
    }
    const allow = options.allowEviction ?? false;
    if (typeof allow !== 'boolean') {
      throw new TypeError(`allowEviction must be a boolean, got ${show(allow)}`);
    }
    this.timeout = timeout;
    this.allowEviction = allow;
  }

  get isCluster(): boolean {
    return this.client.isCluster;
  }

  /** Sends one command about `key` (the routing key on a cluster). Errors are not wrapped here. */
  send(key: string, readonly: boolean, args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.client.send(key, readonly, args);
  }

  /** Like `send`, with bulk-string replies as `Buffer`s (for binary values). */
  sendBinary(key: string, args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.client.sendBinary(key, args);
  }

  /** Runs `script` (EVALSHA, or EVAL after NOSCRIPT); every key must be in `keys`, in one slot. */
  eval(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | Buffer)[],
  ): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    return this.send(keys[0]!, false, ['EVALSHA', script.sha, ...tail]).catch((err: unknown) => {
      if (!isNoScript(err)) throw err;
      return this.send(keys[0]!, false, ['EVAL', script.source, ...tail]);
    });
  }

  /**
   * Runs `fn` as one filter operation: a client that is not connected fails at once, client errors
   * become `RedisFilterError` (the original as `cause`), and past the `timeout` the call rejects
   * with `RedisFilterTimeoutError` while `ctx.signal` tells `fn` to send nothing more. With a
   * caller's `signal`, aborting it does the same with `signal.reason`.
   */
  async op<T>(
    what: string,
    fn: (ctx: OpContext) => Promise<T>,
    signal?: AbortSignalLike,
  ): Promise<T> {
    const label = `${this.label}: ${what}`;
    const notReady = this.client.notReady();
    if (notReady !== null) throw new RedisFilterError(`${label} failed: ${notReady}`);
    if (signal?.aborted === true) throw signal.reason;
    const stop = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    let expire: () => void = () => undefined;
    const ctx: OpContext = {
      signal: stop.signal,
      progress: () => {
        clearTimeout(timer);
        if (Number.isFinite(this.timeout) && !stop.signal.aborted) {
          timer = setTimeout(expire, this.timeout);
        }
      },
      pause: () => clearTimeout(timer),
    };
    const interrupted = new Promise<never>((_, reject) => {
      expire = () => {
        const err = new RedisFilterTimeoutError(
          `${label} did not complete within ${this.timeout} ms`,
        );
        if (ctx.outcome !== undefined) err.batch = ctx.outcome.snapshot();
        stop.abort(err);
        reject(err);
      };
      ctx.progress();
      if (signal !== undefined && typeof (signal as AbortSignal).addEventListener === 'function') {
        onAbort = () => {
          const reason: unknown = signal.reason;
          if (ctx.outcome !== undefined && reason instanceof Error) {
            (reason as { batch?: BatchOutcome }).batch = ctx.outcome.snapshot();
          }
          stop.abort(reason);
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
      const wrapped = wrap(label, err);
      if (wrapped instanceof RedisFilterError && wrapped.batch === undefined && ctx.outcome) {
        wrapped.batch = ctx.outcome.snapshot();
      }
      stop.abort(wrapped);
      throw wrapped;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) (signal as AbortSignal).removeEventListener('abort', onAbort);
    }
  }

  /**
   * A batch as one operation: takes the keys a window at a time and calls `run(window, offset,
   * status)` for each, up to {@link DEPTH} at once. `run` sends the window's commands (in one
   * turn) and records each key's status in `status[offset + j]` as it goes (`unknown` when sent,
   * `applied` or `notApplied` when answered). Stops taking keys at the first failure, timeout or
   * abort. Returns the number of keys.
   */
  batch<K>(
    what: string,
    keys: Iterable<K> | AsyncIterable<K>,
    options: ProgressOptions | undefined,
    run: (window: K[], offset: number, status: Uint8Array, ctx: OpContext) => Promise<void>,
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
        const source = windows(keys);
        const inFlight: Promise<void>[] = [];
        let failed: { err: unknown } | undefined;
        let done = 0;
        try {
          for (;;) {
            if (ctx.signal.aborted) throw ctx.signal.reason;
            if (failed !== undefined) throw failed.err;
            if (options?.signal?.aborted === true) throw options.signal.reason;
            if (inFlight.length === 0) ctx.pause(); // waiting for the caller's keys, not Redis
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

  /** The metadata hash of a filter, or `undefined` if it does not exist. */
  async readMeta(key: string): Promise<Meta | undefined> {
    const reply = await this.send(key, true, ['HGETALL', key]);
    const meta = toMeta(reply);
    return Object.keys(meta).length === 0 ? undefined : meta;
  }

  /**
   * Creates the metadata hash with `fields` unless it exists (atomically, see CREATE); returns
   * whether this call created it and the metadata now stored.
   */
  async createMeta(
    key: string,
    fields: Readonly<Record<string, string>>,
    ttl: number | undefined,
  ): Promise<{ created: boolean; meta: Meta }> {
    const args: string[] = [ttl === undefined ? '' : String(ttl)];
    for (const [field, value] of Object.entries(fields)) args.push(field, value);
    const reply = await this.eval(CREATE, [key], args);
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new FormatError(`unexpected reply to the create script: ${show(reply)}`);
    }
    return { created: Number(reply[0]) === 1, meta: toMeta(reply[1]) };
  }

  /** Issues `command(i)` for i in [0, count), pipelined a window at a time; the replies in order. */
  async all(count: number, command: (i: number) => Promise<unknown>): Promise<unknown[]> {
    const out = new Array<unknown>(count);
    for (let start = 0; start < count; start += WINDOW * DEPTH) {
      const end = Math.min(count, start + WINDOW * DEPTH);
      const pending: Promise<unknown>[] = [];
      for (let i = start; i < end; i++) pending.push(command(i));
      const replies = await Promise.all(pending);
      for (let i = 0; i < replies.length; i++) out[start + i] = replies[i];
    }
    return out;
  }

  /** Deletes keys, one DEL per key (on a cluster they are in different slots), pipelined. */
  async del(keys: readonly string[]): Promise<void> {
    await this.all(keys.length, (i) => this.send(keys[i]!, false, ['DEL', keys[i]!]));
  }

  /**
   * Rejects with `RedisEvictionPolicyError` if any master's `maxmemory-policy` may evict the
   * filter's keys (`allkeys-*` always; `volatile-*` when it has a TTL), unless `allowEviction`.
   */
  async checkEviction(hasTtl: boolean): Promise<void> {
    if (this.allowEviction) return;
    for (const send of await this.client.masters()) {
      const info = String(await send(['INFO', 'memory']));
      const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
      if (policy === undefined) continue; // a server that does not say cannot be judged
      if (policy.startsWith('allkeys-') || (hasTtl && policy.startsWith('volatile-'))) {
        throw new RedisEvictionPolicyError(
          `${this.label}: the server's maxmemory-policy is ${policy}, which may evict the filter's keys${hasTtl ? ' (it has a TTL)' : ''} and lose acknowledged adds; use noeviction${hasTtl ? '' : ' or a volatile-* policy'}, or pass allowEviction: true`,
        );
      }
    }
  }
}

/** The keys of `source` in arrays of at most WINDOW, from an iterable or an async iterable. */
async function* windows<K>(source: Iterable<K> | AsyncIterable<K>): AsyncGenerator<K[]> {
  let window: K[] = [];
  if (Symbol.asyncIterator in source) {
    for await (const key of source as AsyncIterable<K>) {
      window.push(key);
      if (window.length === WINDOW) {
        yield window;
        window = [];
      }
    }
  } else {
    for (const key of source as Iterable<K>) {
      window.push(key);
      if (window.length === WINDOW) {
        yield window;
        window = [];
      }
    }
  }
  if (window.length > 0) yield window;
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** bloomkit's own errors (and argument errors) pass; anything from a client library is wrapped. */
function wrap(what: string, err: unknown): Error {
  if (
    err instanceof RedisFilterError ||
    err instanceof FilterFullError ||
    err instanceof FormatError ||
    err instanceof TypeError || // includes IncompatibleFiltersError, RedisFilterMismatchError
    err instanceof RangeError
  ) {
    return err;
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new RedisFilterError(`${what} failed: ${message}`, { cause: err });
}

export { checkKind, checkMeta, META_VERSION, metaInt, newId, toMeta, ttlMs } from './meta.js';
