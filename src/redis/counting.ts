/**
 * `RedisCountingBloomFilter`: a counting Bloom filter (Fan, Cao, Almeida and Broder, "Summary
 * Cache", IEEE/ACM ToN 2000) in plain Redis, so keys can be removed. RedisBloom has no counting
 * filter; this one needs no module.
 *
 * Layout: the sharded layout of layout.ts with 4-bit counters instead of bits: S shards (keys
 * `bk:c:{name:i}`) of c counters each (c·4 ≤ `shardBits`, default 2^23 bits = 2^21 counters =
 * 1 MiB), the key's shard from its hash and its k counters inside it. Counter j of a shard is the
 * 4 bits at bit offset 64 + 4j (`BITFIELD ... u4 #(16 + j)`, after the 8-byte shard header of
 * scripts.ts), most significant bit first. A counter repeated
 * among a key's k positions is counted once (as bloomkit's in-memory `CountingBloomFilter` does),
 * so add and remove stay symmetric.
 *
 * - `add`: one script (header check, then `BITFIELD key OVERFLOW SAT INCRBY u4 #j 1 …`), atomic;
 *   the key was new iff some counter went from 0 to 1 (two clients adding the same key never both
 *   see it as new).
 * - `has`: one `BITFIELD_RO key GET u32 0 GET u32 32 GET u4 #j …`; true iff every counter is
 *   above 0.
 * - `remove`: one Lua script that reads the key's counters and, only if every one is above 0,
 *   decrements them (scripts.ts COUNTING_REMOVE). Nothing else runs on the server in between, so a
 *   remove is all or nothing and never drives a counter of another key below what it needs.
 *   A batch of removes sends each key at most once and stops at the first failure; its error's
 *   `batch` says which removes were applied, so a retry never removes a key twice.
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
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { estimateCount } from '../math.js';
import { checkShardBits, DEFAULT_SHARD_BITS, shardLayout } from '../sharded/layout.js';
import type { ShardedBloomOptions, ShardedBloomShape } from '../sharded/sharded-bloom.js';
import type { RedisConnection } from './client.js';
import { createSharded, openSharded, type ShardedFilterType } from './open.js';
import { COUNTING_ADD, COUNTING_REMOVE, HEADER_BITS, type LuaScript } from './scripts.js';
import { RedisShardedFilter } from './sharded-filter.js';
import type { Meta, RedisFilterConnectionOptions, RedisStore } from './store.js';

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

/** Counters before the first cell of a shard (the 64-bit header). */
const HEADER_COUNTERS = HEADER_BITS / 4;

/**
 * The shape of a counting filter: `shardBits` is counters per shard and `maxShardBits` the limit
 * in counters (the option divided by 4); the metadata stores them as `bits` and `shardBits`.
 */
function countingShape(options: ShardedBloomOptions): ShardedBloomShape {
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

/** The distinct counters among offsets[base, base + k), header included, as strings. */
function distinctCounters(offsets: Float64Array, base: number, k: number): string[] {
  const out: string[] = [];
  outer: for (let i = 0; i < k; i++) {
    const o = offsets[base + i]!;
    for (let j = 0; j < i; j++) if (offsets[base + j] === o) continue outer;
    out.push(String(o + HEADER_COUNTERS));
  }
  return out;
}

/** The smallest counter of a read reply (header first). */
function minOf(reply: unknown[]): number {
  let min = COUNTER_MAX;
  for (let i = 2; i < reply.length; i++) min = Math.min(min, Number(reply[i]));
  return min;
}

export class RedisCountingBloomFilter<K extends Key = Key>
  extends RedisShardedFilter<K>
  implements AsyncMembershipFilter<K>
{
  private static readonly type: ShardedFilterType<RedisCountingBloomFilter, ShardedBloomOptions> = {
    label: 'RedisCountingBloomFilter',
    kind: 'counting',
    letter: 'c',
    shapeOf: countingShape,
    optionsOf: (s: ShardedBloomShape) => ({
      capacity: s.capacity,
      fpp: s.fpp,
      shardBits: s.maxShardBits * 4,
      funnel: s.funnel,
    }),
    make: (store, name, meta) => new RedisCountingBloomFilter(store, name, meta),
  };

  private constructor(store: RedisStore, name: string, meta: Meta) {
    super(store, name, meta, 'c');
  }

  /**
   * Creates the filter `name` sized for (capacity, fpp), or opens it if it exists with the same
   * parameters; `RedisFilterMismatchError` if it exists with others or is of another kind.
   */
  static create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisCountingBloomFilterOptions & { funnel?: F },
  ): Promise<RedisCountingBloomFilter<KeyOf<F>>> {
    return createSharded(RedisCountingBloomFilter.type, client, name, options) as Promise<
      RedisCountingBloomFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisCountingBloomFilter<K>> {
    return openSharded(RedisCountingBloomFilter.type, client, name, options) as Promise<
      RedisCountingBloomFilter<K>
    >;
  }

  /** Total counters. */
  get counterCount(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  protected cellArgs(offsets: Float64Array, base: number): string[] {
    return distinctCounters(offsets, base, this.shape.hashes);
  }

  protected override fastArgs(
    script: LuaScript,
    key: string,
    offsets: Float64Array,
    base: number,
  ): string[] | null {
    if (script !== COUNTING_ADD) return null;
    const args = ['BITFIELD', key, 'GET', 'u32', '0', 'GET', 'u32', '32', 'OVERFLOW', 'SAT'];
    for (const c of distinctCounters(offsets, base, this.shape.hashes)) {
      args.push('INCRBY', 'u4', `#${c}`, '1');
    }
    return args;
  }

  /** 1 if some counter went from 0 to 1 (the key was new). */
  protected override fastResult(reply: unknown[]): number {
    for (let i = 2; i < reply.length; i++) if (Number(reply[i]) === 1) return 1;
    return 0;
  }

  protected readArgs(key: string, offsets: Float64Array, base: number): string[] {
    const args = ['BITFIELD_RO', key, 'GET', 'u32', '0', 'GET', 'u32', '32'];
    for (const c of distinctCounters(offsets, base, this.shape.hashes))
      args.push('GET', 'u4', `#${c}`);
    return args;
  }

  /**
   * Records one occurrence of `key` (its counters go up by one, stopping at 15). True iff the key
   * was certainly new (some counter was 0). Adding a present key still counts it.
   */
  async add(key: K): Promise<boolean> {
    return (await this.writeOne('add', COUNTING_ADD, key)) === 1;
  }

  /** False if `key` is certainly absent; true if it is probably present. */
  async has(key: K): Promise<boolean> {
    return (await this.count(key)) > 0;
  }

  /**
   * The smallest of `key`'s counters: 0 means certainly absent; otherwise an upper estimate of how
   * many times it was added (collisions only add), where 15 means "15 or more".
   */
  async count(key: K): Promise<number> {
    return (await this.readAll('count', [key], undefined, minOf))[0]!;
  }

  /**
   * Removes one occurrence of `key`, atomically: if any of its counters is 0 nothing changes and
   * the result is false; otherwise every counter below 15 goes down by one and the result is true.
   * Only remove keys that were added (see the class comment).
   */
  async remove(key: K): Promise<boolean> {
    return (await this.writeOne('remove', COUNTING_REMOVE, key)) === 1;
  }

  /** `add` for every key, a window at a time; resolves to how many were new. */
  async addMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<number> {
    let added = 0;
    await this.writeAll('addMany', COUNTING_ADD, keys, options, (_, r) => (added += r));
    return added;
  }

  /** `has` for every key, in order, a window at a time. */
  hasMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]> {
    return this.readAll('hasMany', keys, options, (r) => minOf(r) > 0);
  }

  /**
   * `remove` for every key, a window at a time; result i says whether key i was removed. Each
   * remove is atomic on its own, the batch is not; each key is sent at most once, and on failure
   * the error's `batch` says which were applied (resend only those `notApplied`).
   */
  async removeMany(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.writeAll('removeMany', COUNTING_REMOVE, keys, options, (i, r) => (out[i] = r === 1));
    return out;
  }

  /** Estimated number of distinct keys: from the counters above 0 (as the classic filter's bits). */
  async estimatedCount(): Promise<number> {
    return this.store.op('estimatedCount', async () => {
      const replies = await this.store.all(this.shape.shards, (i) =>
        this.store.sendBinary(this.keys.get(i), ['GET', this.keys.get(i)]),
      );
      let nonZero = 0;
      for (const r of replies) {
        const b = r as Buffer | null;
        if (b === null) continue;
        for (let i = HEADER_BITS / 8; i < b.length; i++) {
          const v = b[i]!;
          if (v & 0xf0) nonZero++;
          if (v & 0x0f) nonZero++;
        }
      }
      return estimateCount(nonZero, this.counterCount, this.hashes);
    });
  }
}
