/**
 * `RedisBloomFilter`: a Bloom filter in plain Redis (>= 6.2, no modules), on one server or a Redis
 * Cluster, shared by every process that opens it by name: `StoredBloomFilter`
 * (src/sharded/stored-bloom.ts, which states its guarantee and layout) over a `RedisShardStore`.
 *
 * Guarantee: `has` is true for every key whose `add` was acknowledged, from any client, for as long
 * as the keys exist (a server without persistence forgets everything when it restarts; run it with
 * AOF `appendfsync always` to keep every acknowledged add across a crash).
 *
 * In Redis: S shards (strings of b ≤ `shardBits` bits, default 2^23 = 1 MiB, keys
 * `bk:b:{name:i}`); `add` is one `BITFIELD key GET u32 0 GET u32 32 SET u1 o₁ 1 … SET u1 o_k 1`
 * (the header read in the same atomic step) or the BLOOM_ADD script, and `has` one
 * `BITFIELD_RO key GET u32 0 GET u32 32 GET u1 o₁ … GET u1 o_k`. Cell o of a shard is bit 64 + o of
 * its string (after the 8-byte header), in Redis' bit order: bit p is the `0x80 >>> (p & 7)` bit
 * of byte `p >>> 3` (most significant first). On a cluster each node gets its own pipelined
 * stream.
 */

import type { KeyOf } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import { checkName } from '../sharded/names.js';
import type { StoreOps } from '../sharded/ops.js';
import type { Meta } from '../sharded/store.js';
import {
  bloomType,
  importBloom,
  StoredBloomFilter,
  type StoredBloomFilterOptions,
} from '../sharded/stored-bloom.js';
import { createStored, openStored } from '../sharded/stored-open.js';
import type { RedisConnection } from './client.js';
import type { Persistence } from './durability.js';
import { metaKey } from './keys.js';
import { redisOps } from './open.js';
import type { RedisShardStore } from './shard-store.js';
import type { RedisFilterConnectionOptions } from './store.js';

/** Options of {@link RedisBloomFilter.create}. */
export interface RedisBloomFilterOptions
  extends StoredBloomFilterOptions,
    RedisFilterConnectionOptions {}

/** Options of {@link RedisBloomFilter.fromBytes}. */
export interface RedisImportOptions extends RedisFilterConnectionOptions {
  /** TTL (seconds) when the import creates the filter; must match an existing filter's. */
  ttl?: number;
}

export class RedisBloomFilter<K extends Key = Key> extends StoredBloomFilter<K> {
  private static readonly redisType = bloomType(
    (ops, name, meta) => new RedisBloomFilter(ops, name, meta),
  );

  private constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta);
  }

  /**
   * Creates the filter `name` sized for (capacity, fpp), or opens it if it exists with the same
   * parameters (clients racing to create it all get the same filter). Rejects with
   * `RedisFilterMismatchError` if it exists with other parameters or is of another kind, and
   * with `RedisEvictionPolicyError` if the server may evict its keys (see `allowEviction`).
   * Every option is checked before anything is written.
   */
  static override create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisBloomFilterOptions & { funnel?: F },
  ): Promise<RedisBloomFilter<KeyOf<F>>> {
    const ops = redisOps('RedisBloomFilter', client, name, options);
    return createStored(RedisBloomFilter.redisType, ops, name, options) as Promise<
      RedisBloomFilter<KeyOf<F>>
    >;
  }

  /**
   * Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none, `FormatError`
   * if its metadata is inconsistent.
   */
  static override open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisBloomFilter<K>> {
    const ops = redisOps('RedisBloomFilter', client, name, options);
    return openStored(RedisBloomFilter.redisType, ops, name) as Promise<RedisBloomFilter<K>>;
  }

  /**
   * Loads native-format bytes of a `ShardedBloomFilter` (or of `toBytes()`) into the filter
   * `name`: creates it with the bytes' parameters if it does not exist, and ORs the bits into
   * every shard (a union: nothing already there is lost). Loading into a new filter reproduces
   * the source exactly. Each shard is merged atomically (BITOP in a Lua script), the whole is not.
   */
  static override async fromBytes(
    client: RedisConnection,
    name: string,
    bytes: Uint8Array,
    options: RedisImportOptions = {},
  ): Promise<RedisBloomFilter> {
    checkName(name);
    const ops = redisOps('RedisBloomFilter', client, name, options)();
    return importBloom(RedisBloomFilter.redisType, ops, name, bytes, options.ttl);
  }

  /** The Redis key of the metadata hash. */
  get metaKey(): string {
    return metaKey(this.name);
  }

  /** The weakest persistence of the server's masters, read by `create`/`open` (durability.ts). */
  get persistence(): Persistence | undefined {
    return (this.store as RedisShardStore).persistence;
  }
}
