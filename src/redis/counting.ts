/**
 * `RedisCountingBloomFilter`: a counting Bloom filter (Fan, Cao, Almeida and Broder, "Summary
 * Cache", IEEE/ACM ToN 2000) in plain Redis, so keys can be removed. RedisBloom has no counting
 * filter; this one needs no module.
 *
 * Layout: the sharded layout of layout.ts with 4-bit counters instead of bits: S shards (keys
 * `bk:c:{name:i}`) of c counters each (c·4 ≤ `shardBits`, default 2^23 bits = 2^21 counters =
 * 1 MiB), the key's shard from its hash and its k counters inside it. Counter j of a shard is the
 * 4 bits at bit offset 4j (`BITFIELD ... u4 #j`), most significant bit first. A counter repeated
 * among a key's k positions is counted once (as bloomkit's in-memory `CountingBloomFilter` does),
 * so add and remove stay symmetric.
 *
 * - `add`: one `BITFIELD key OVERFLOW SAT INCRBY u4 #j 1 …`, atomic; the key was new iff some
 *   counter went from 0 to 1 (so two clients adding the same key never both see it as new).
 * - `has`: one `BITFIELD_RO key GET u4 #j …`; true iff every counter is above 0.
 * - `remove`: one Lua script that reads the key's counters and, only if every one is above 0,
 *   decrements them (scripts.ts COUNTING_REMOVE). Nothing else runs on the server in between, so a
 *   remove is all or nothing and never drives a counter of another key below what it needs.
 *
 * Saturation: counters stop at 15 (OVERFLOW SAT) and a saturated counter is never decremented. Past
 * 15 the true count is unknown; lowering it could reach 0 while keys that share the counter are
 * still present (a false negative). A stuck counter only costs stale positives.
 *
 * Guarantee and hazard: a key added (and not removed as often as added) answers true. Removing a
 * key that was never added but is a false positive takes counts from other keys, which may then
 * answer false; remove only keys you added.
 *
 * Rate: as the classic sharded filter of the same (capacity, fpp), since a counter is above 0
 * exactly where that filter would have a bit set. Memory: 4× the classic filter.
 */

import { show } from '../errors.js';
import { checkFunnel, type Key } from '../hash/keys.js';
import { checkShardBits, DEFAULT_SHARD_BITS, shardLayout } from '../sharded/layout.js';
import { COUNTING_ADD_EXPIRING, COUNTING_REMOVE } from './scripts.js';
import type { ShardedBloomOptions, ShardedBloomShape } from '../sharded/sharded-bloom.js';
import {
  createSharded,
  openSharded,
  RedisShardedFilter,
  type ShardedFilterType,
} from './sharded-filter.js';
import type { Meta, RedisConnection, RedisFilterConnectionOptions, RedisStore } from './store.js';

/** Options of {@link RedisCountingBloomFilter.create}. */
export interface RedisCountingBloomFilterOptions
  extends ShardedBloomOptions,
    RedisFilterConnectionOptions {
  /**
   * Most bits per shard (4 per counter): a multiple of 256 in [256, 2^32]; default 2^23 (1 MiB,
   * 2^21 counters).
   */
  shardBits?: number;
  /** Time to live in seconds: the filter and all its keys expire together. Default: never. */
  ttl?: number;
}

/** The largest counter value; a counter that reaches it stays there. */
export const COUNTER_MAX = 15;

/**
 * The shape of a counting filter: `shardBits` is counters per shard and `maxShardBits` the limit
 * in counters (the option divided by 4); the metadata stores them as `bits` and `shardBits`.
 */
function countingShape(options: RedisCountingBloomFilterOptions): ShardedBloomShape {
  const limitBits = checkShardBits('shardBits', options.shardBits ?? DEFAULT_SHARD_BITS);
  if (limitBits % 256 !== 0) {
    throw new RangeError(
      `shardBits must be a multiple of 256 for a counting filter (4 bits per counter), got ${show(limitBits)}`,
    );
  }
  const funnel = checkFunnel(options.funnel ?? 'string');
  const maxShardBits = limitBits / 4;
  const layout = shardLayout(options.capacity, options.fpp, maxShardBits);
  return { ...layout, capacity: options.capacity, fpp: options.fpp, maxShardBits, funnel };
}

/** Writes the distinct values of offsets[base, base + k) as strings `#j` into `out` from `at`. */
function distinctCounters(
  offsets: Float64Array,
  base: number,
  k: number,
  out: string[],
  at: number,
  stride: number,
  prefix: string,
): number {
  let n = 0;
  outer: for (let i = 0; i < k; i++) {
    const o = offsets[base + i]!;
    for (let j = 0; j < i; j++) if (offsets[base + j] === o) continue outer;
    out[at + n * stride] = `${prefix}${o}`;
    n++;
  }
  return n;
}

export class RedisCountingBloomFilter extends RedisShardedFilter {
  private static readonly type: ShardedFilterType<RedisCountingBloomFilter> = {
    label: 'RedisCountingBloomFilter',
    kind: 'counting',
    make: (store, name, meta) => new RedisCountingBloomFilter(store, name, meta),
  };

  private constructor(store: RedisStore, name: string, meta: Meta) {
    super(store, name, meta, 'c');
  }

  /**
   * Creates the filter `name` sized for (capacity, fpp), or opens it if it exists with the same
   * parameters; `RedisFilterMismatchError` if it exists with others or is of another kind.
   */
  static create(
    client: RedisConnection,
    name: string,
    options: RedisCountingBloomFilterOptions,
  ): Promise<RedisCountingBloomFilter> {
    return createSharded(RedisCountingBloomFilter.type, client, name, options, countingShape);
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static open(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisCountingBloomFilter> {
    return openSharded(RedisCountingBloomFilter.type, client, name, options);
  }

  /** Total counters. */
  get counterCount(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  private addCommand(shard: number, offsets: Float64Array, base: number): Promise<unknown> {
    const k = this.shape.hashes;
    const key = this.keys.get(shard);
    if (this.expireArg !== '') {
      const args = new Array<string>(k + 1);
      args[0] = this.expireArg;
      const n = distinctCounters(offsets, base, k, args, 1, 1, '');
      args.length = n + 1;
      return this.store.eval(COUNTING_ADD_EXPIRING, [key], args);
    }
    const args = new Array<string>(4 + 4 * k);
    args[0] = 'BITFIELD';
    args[1] = key;
    args[2] = 'OVERFLOW';
    args[3] = 'SAT';
    const n = distinctCounters(offsets, base, k, args, 6, 4, '#');
    for (let j = 0, p = 4; j < n; j++, p += 4) {
      args[p] = 'INCRBY';
      args[p + 1] = 'u4';
      args[p + 3] = '1';
    }
    args.length = 4 + 4 * n;
    return this.store.send(key, false, args);
  }

  private readCommand(shard: number, offsets: Float64Array, base: number): Promise<unknown> {
    const k = this.shape.hashes;
    const key = this.keys.get(shard);
    const args = new Array<string>(2 + 3 * k);
    args[0] = 'BITFIELD_RO';
    args[1] = key;
    const n = distinctCounters(offsets, base, k, args, 4, 3, '#');
    for (let j = 0, p = 2; j < n; j++, p += 3) {
      args[p] = 'GET';
      args[p + 1] = 'u4';
    }
    args.length = 2 + 3 * n;
    return this.store.send(key, true, args);
  }

  private removeCommand(shard: number, offsets: Float64Array, base: number): Promise<unknown> {
    const k = this.shape.hashes;
    const args = new Array<string>(k);
    args.length = distinctCounters(offsets, base, k, args, 0, 1, '');
    return this.store.eval(COUNTING_REMOVE, [this.keys.get(shard)], args);
  }

  private wasNew(reply: unknown): boolean {
    if (this.expireArg !== '') return Number(reply) === 1;
    const counters = reply as number[];
    for (let i = 0; i < counters.length; i++) if (Number(counters[i]) === 1) return true;
    return false;
  }

  /**
   * Records one occurrence of `key` (its counters go up by one, stopping at 15). True iff the key
   * was certainly new (some counter was 0). Adding a present key still counts it.
   */
  async add(key: Key): Promise<boolean> {
    const shard = this.locator.locate(key);
    const command = this.addCommand(shard, this.locator.offsets, 0);
    return this.wasNew(await this.store.op('add', () => command));
  }

  /** False if `key` is certainly absent; true if it is probably present. */
  async has(key: Key): Promise<boolean> {
    const shard = this.locator.locate(key);
    const command = this.readCommand(shard, this.locator.offsets, 0);
    return minOf(await this.store.op('has', () => command)) > 0;
  }

  /**
   * The smallest of `key`'s counters: 0 means certainly absent; otherwise an upper estimate of how
   * many times it was added (collisions only add), where 15 means "15 or more".
   */
  async count(key: Key): Promise<number> {
    const shard = this.locator.locate(key);
    const command = this.readCommand(shard, this.locator.offsets, 0);
    return minOf(await this.store.op('count', () => command));
  }

  /**
   * Removes one occurrence of `key`, atomically: if any of its counters is 0 nothing changes and
   * the result is false; otherwise every counter below 15 goes down by one and the result is true.
   * Only remove keys that were added (see the class comment).
   */
  async remove(key: Key): Promise<boolean> {
    const shard = this.locator.locate(key);
    const command = this.removeCommand(shard, this.locator.offsets, 0);
    return Number(await this.store.op('remove', () => command)) === 1;
  }

  /** `add` for every key, pipelined (every key is checked before anything is sent). */
  addMany(keys: Iterable<Key>): Promise<boolean[]> {
    return this.many(
      'addMany',
      keys,
      (s, o, b) => this.addCommand(s, o, b),
      (r) => this.wasNew(r),
    );
  }

  /** `has` for every key, pipelined. */
  hasMany(keys: Iterable<Key>): Promise<boolean[]> {
    return this.many(
      'hasMany',
      keys,
      (s, o, b) => this.readCommand(s, o, b),
      (r) => minOf(r) > 0,
    );
  }

  /** `remove` for every key, pipelined; each remove is atomic on its own, the batch is not. */
  removeMany(keys: Iterable<Key>): Promise<boolean[]> {
    return this.many(
      'removeMany',
      keys,
      (s, o, b) => this.removeCommand(s, o, b),
      (r) => Number(r) === 1,
    );
  }
}

function minOf(reply: unknown): number {
  const counters = reply as number[];
  let min = COUNTER_MAX;
  for (let i = 0; i < counters.length; i++) min = Math.min(min, Number(counters[i]));
  return min;
}
