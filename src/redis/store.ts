/**
 * The storage side of the Redis filters (kept apart from filter logic, as Guava keeps `Strategy`
 * apart from `LockFreeBitArray`): sending commands through a node-redis client or cluster, running
 * Lua scripts, pipelining batches, reading and creating the metadata hash, and turning failures into
 * bloomkit's typed errors within a bounded time.
 *
 * Pipelining: node-redis writes every command issued in the same turn of the event loop in one go
 * (it flushes its queue from `setImmediate`), and a cluster client routes each command to the
 * node that owns its key's slot first, so a batch issued synchronously becomes one pipelined write
 * per node. `pipelined` issues a batch that way, a window of 512 keys at a time with up to four
 * windows in flight, so memory and garbage stay bounded and the client's encoding overlaps the
 * server's work. test/redis-cluster.test.ts checks it on the servers: 30,000 commands over three
 * nodes arrive in about 140 socket reads per node.
 *
 * Metadata (hash `bk:m:{name}`, all values strings):
 *
 * | field       | meaning                                                                  |
 * |-------------|--------------------------------------------------------------------------|
 * | `v`         | metadata version, `1`                                                    |
 * | `kind`      | `bloom`, `counting` or `scalable`                                        |
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

import { createHash } from 'node:crypto';
import { FilterFullError, FormatError, show } from '../errors.js';
import { RedisFilterError, RedisFilterMismatchError, RedisFilterTimeoutError } from './errors.js';
import { CREATE, type LuaScript } from './scripts.js';

/**
 * A connected node-redis (v5) client, `createClient(...)` (or a pool, `createClientPool(...)`), or
 * cluster, `createCluster(...)`: whatever its modules, scripts, RESP version or type mapping.
 * Recommended settings for bounded failures: `disableOfflineQueue: true` (commands fail at once
 * while disconnected instead of waiting for a reconnect) and a `socket.reconnectStrategy`; and the
 * filter's own `timeout` option to bound every operation.
 */
export type RedisConnection = RedisClientLike | RedisClusterLike;

/** What bloomkit uses of a node-redis client: `sendCommand(args, options)`. */
export interface RedisClientLike {
  sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown>;
}

/** What bloomkit uses of a node-redis cluster: `sendCommand(firstKey, isReadonly, args, options)`. */
export interface RedisClusterLike {
  sendCommand(
    firstKey: string | Buffer | undefined,
    isReadonly: boolean | undefined,
    args: readonly (string | Buffer)[],
    options?: object,
  ): Promise<unknown>;
  readonly masters: unknown;
  nodeClient(node: never): unknown;
}

/** Options every Redis filter accepts when created or opened. */
export interface RedisFilterConnectionOptions {
  /**
   * Bound on each operation (one key or a whole batch), in ms: past it the call rejects with
   * `RedisFilterTimeoutError` (the commands may still run later). Default: none (rely on the
   * client's own settings).
   */
  timeout?: number;
}

/** node-redis command options: bulk strings (RESP type `$`, 36) decoded as `Buffer`. */
const BINARY = { typeMapping: { 36: Buffer } } as const;

/** A filter's metadata, field → value. */
export type Meta = Record<string, string>;

/** The fields a new filter's metadata is created with (`kind` among them). */
export type MetaFields = Readonly<Record<string, string>> & { readonly kind: string };

/**
 * `pipelined` issues a window of this many commands at once, with up to DEPTH windows in flight.
 * Small windows keep node-redis' garbage low: with 200k BITFIELD_RO on one connection, windows of
 * 512 ran at ~370k/s where windows of 32k ran at ~140k/s (bench/redis).
 */
export const WINDOW = 512;
const DEPTH = 4;

export class RedisStore {
  readonly isCluster: boolean;
  readonly timeout: number | undefined;
  private readonly standalone: RedisClientLike | undefined;
  private readonly cluster: RedisClusterLike | undefined;

  constructor(
    client: RedisConnection,
    /** Names the filter in error messages, e.g. `RedisBloomFilter "seen"`. */
    readonly label: string,
    options: RedisFilterConnectionOptions = {},
  ) {
    if (client === null || typeof client !== 'object' || typeof client.sendCommand !== 'function') {
      throw new TypeError(
        `client must be a connected node-redis client or cluster, got ${show(client)}`,
      );
    }
    const timeout = options.timeout;
    if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0)) {
      throw new RangeError(`timeout must be a positive number of ms, got ${show(timeout)}`);
    }
    this.timeout = timeout;
    // A cluster has `masters` and `nodeClient`; a client (or a pool) does not.
    this.isCluster = 'masters' in client && 'nodeClient' in client;
    if (this.isCluster) this.cluster = client as RedisClusterLike;
    else this.standalone = client as RedisClientLike;
  }

  /** Sends one command about `key` (the routing key on a cluster). Errors are not wrapped here. */
  send(key: string, readonly: boolean, args: readonly (string | Buffer)[]): Promise<unknown> {
    if (this.cluster !== undefined) return this.cluster.sendCommand(key, readonly, args);
    return this.standalone!.sendCommand(args);
  }

  /** Like `send`, with bulk-string replies as `Buffer`s (for binary values). */
  sendBinary(key: string, args: readonly (string | Buffer)[]): Promise<unknown> {
    if (this.cluster !== undefined) return this.cluster.sendCommand(key, true, args, BINARY);
    return this.standalone!.sendCommand(args, BINARY);
  }

  /** Runs `script` (EVALSHA, or EVAL after NOSCRIPT); every key must be in `keys`, in one slot. */
  async eval(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | Buffer)[],
  ): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.send(keys[0]!, false, ['EVALSHA', script.sha, ...tail]);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return this.send(keys[0]!, false, ['EVAL', script.source, ...tail]);
    }
  }

  /**
   * Runs `fn` as one filter operation: node-redis errors become `RedisFilterError` (with the
   * original as `cause`), and with a `timeout` the call rejects with `RedisFilterTimeoutError`
   * once it has run that long.
   */
  async op<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const timeout = this.timeout;
    if (timeout === undefined) {
      try {
        return await fn();
      } catch (err) {
        throw wrap(`${this.label}: ${what}`, err);
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new RedisFilterTimeoutError(
              `${this.label}: ${what} did not complete within ${timeout} ms`,
            ),
          ),
        timeout,
      );
    });
    const work = fn();
    work.catch(() => undefined); // a late failure after the deadline is not unhandled
    try {
      return await Promise.race([work, deadline]);
    } catch (err) {
      throw wrap(`${this.label}: ${what}`, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Issues `issue(i)` for i in [0, count), a window of {@link WINDOW} at a time with up to
   * DEPTH windows in flight, and hands each window's replies to `done(start, replies)` in order.
   * Stops issuing at the first failure and rethrows it.
   */
  async pipelined(
    count: number,
    issue: (i: number) => Promise<unknown>,
    done: (start: number, replies: unknown[]) => void,
  ): Promise<void> {
    const inFlight: Promise<void>[] = [];
    for (let start = 0; start < count; start += WINDOW) {
      const end = Math.min(count, start + WINDOW);
      const pending = new Array<Promise<unknown>>(end - start);
      for (let i = start; i < end; i++) pending[i - start] = issue(i);
      const batch = Promise.all(pending).then((replies) => done(start, replies));
      batch.catch(() => undefined); // awaited below; silence it if an earlier window failed
      inFlight.push(batch);
      if (inFlight.length >= DEPTH) await inFlight.shift();
    }
    for (const batch of inFlight) await batch;
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

  /** Deletes keys, one DEL per key (on a cluster they are in different slots), pipelined. */
  async del(keys: readonly string[]): Promise<void> {
    await this.pipelined(
      keys.length,
      (i) => this.send(keys[i]!, false, ['DEL', keys[i]!]),
      () => undefined,
    );
  }

  /** A key name nobody else will pick (for scratch keys), with `tag` as its hash tag. */
  scratchKey(tag: string): string {
    const nonce = createHash('sha1')
      .update(`${process.pid}:${Date.now()}:${Math.random()}`)
      .digest('hex')
      .slice(0, 16);
    return `${tag}:tmp:${nonce}`;
  }
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** bloomkit's own errors (and argument errors) pass; anything from node-redis is wrapped. */
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
  if (!Number.isSafeInteger(value) || value < 0) {
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

/** Checks the metadata version and kind of an existing filter. */
export function checkKind(name: string, meta: Meta, kind: string): void {
  if (meta.v !== '1') {
    throw new FormatError(
      `Redis filter ${show(name)} has metadata version ${show(meta.v)}; this bloomkit reads version 1`,
    );
  }
  checkMeta(name, meta, { kind });
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
