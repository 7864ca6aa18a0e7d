/**
 * The Redis side of running a filter's operations: {@link RedisStore} is the generic operation
 * runner (src/sharded/ops.ts: time bounds, windows, per-key outcome) over a
 * {@link RedisShardStore}, with the raw commands the Redis-only structures (`RedisSeenSet`) send.
 *
 * Metadata (hash `bk:m:{name}`, all values strings):
 *
 * | field       | meaning                                                                  |
 * |-------------|--------------------------------------------------------------------------|
 * | `v`         | metadata version, `2`                                                    |
 * | `kind`      | `bloom`, `counting`, `cuckoo` or `scalable`                              |
 * | `id`        | random u32 ≥ 1, new for every creation (shards carry it, scripts.ts)     |
 * | `gen`       | generation, from 1, bumped by every `clear`                              |
 * | `ready`     | `1` once every shard exists (until then `open` creates the missing ones) |
 * | `funnel`    | key encoding                                                             |
 * | `capacity`, `fpp` | as created                                                         |
 * | `shardBits` | shard size limit asked for: bits; for `counting`, counters (option / 4)  |
 * | `ttl`       | time to live in ms, absent without one; `expireAt` ms since the epoch    |
 * | `shards`, `bits`, `hashes` | the shape: S, b (counters for `counting`) and k          |
 * | `growth`, `ratio`, `layers`, `layer:i` | scalable: see stored-scalable.ts             |
 * | `sum`       | CRC-32C of the fields that decide hashing (src/sharded/meta.ts: metaSum)  |
 *
 * It is created once, atomically, by a Lua script that writes it only if it does not exist and
 * returns what is there, so clients racing to create a filter all end up with the same one.
 */

import { StoreOps, type StoreOptions } from '../sharded/ops.js';
import type { RedisConnection } from './client.js';
import type { Durability } from './durability.js';
import type { LuaScript } from './scripts.js';
import { RedisShardStore } from './shard-store.js';

export { DEFAULT_TIMEOUT } from '../sharded/ops.js';
export type { RedisConnection } from './client.js';

/** Options every Redis filter accepts when created or opened. */
export interface RedisFilterConnectionOptions extends StoreOptions {
  /**
   * Accept a server whose `maxmemory-policy` may evict the filter's keys (`allkeys-*`, or
   * `volatile-*` for a filter with a TTL). Default false: `create` and `open` reject with
   * `RedisEvictionPolicyError`. Evicted shards are detected either way (`RedisFilterLostError`).
   */
  allowEviction?: boolean;
  /**
   * What `create` and `open` require of the server's persistence. `'strict'` (the default):
   * `appendonly yes` with `appendfsync always` on every master, the only configuration in which a
   * crash loses no acknowledged add; anything else, or a server that does not let `CONFIG GET`
   * read it, rejects with `RedisPersistenceError`. `'best-effort'`: any configuration; what was
   * found is in `store.persistence`.
   */
  durability?: Durability;
}

/** One Redis filter object's operations: the runner of ops.ts over a {@link RedisShardStore}. */
export class RedisStore extends StoreOps<RedisShardStore> {
  constructor(
    connection: RedisConnection,
    /** Names the filter in error messages, e.g. `RedisBloomFilter "seen"`. */
    label: string,
    options: RedisFilterConnectionOptions = {},
  ) {
    const store = new RedisShardStore(connection, options.allowEviction, options.durability);
    super(store, label, options);
  }

  /** Sends one command about `key` (the routing key on a cluster). Errors are not wrapped here. */
  send(key: string, readonly: boolean, args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.store.send(key, readonly, args);
  }

  /** Like `send`, with bulk-string replies as `Buffer`s (for binary values). */
  sendBinary(key: string, args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.store.sendBinary(key, args);
  }

  /** Runs `script` (EVALSHA, or EVAL after NOSCRIPT); every key must be in `keys`, in one slot. */
  eval(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | Buffer)[],
  ): Promise<unknown> {
    return this.store.eval(script, keys, args);
  }
}
