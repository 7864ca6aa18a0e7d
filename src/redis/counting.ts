/**
 * `RedisCountingBloomFilter`: a counting Bloom filter in plain Redis, so keys can be removed:
 * `StoredCountingBloomFilter` (src/sharded/stored-counting.ts, which states its guarantee, its
 * saturation rule and its hazard) over a `RedisShardStore`. RedisBloom has no counting filter;
 * this one needs no module.
 *
 * In Redis: S shards (keys `bk:c:{name:i}`) of c counters each. Counter j of a shard is the 4 bits
 * at bit offset 64 + 4j (`BITFIELD ... u4 #(16 + j)`, after the 8-byte shard header), most
 * significant bit first. `add` is `BITFIELD key GET u32 0 GET u32 32 OVERFLOW SAT INCRBY u4 #j 1 …`
 * (or the COUNTING_ADD script), `has` one `BITFIELD_RO` of the header and the counters, `remove`
 * the COUNTING_REMOVE script (reads and decrements in one atomic step).
 */

import type { KeyOf } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import type { StoreOps } from '../sharded/ops.js';
import type { Meta } from '../sharded/store.js';
import {
  countingType,
  StoredCountingBloomFilter,
  type StoredCountingBloomFilterOptions,
} from '../sharded/stored-counting.js';
import { createStored, openStored } from '../sharded/stored-open.js';
import type { RedisConnection } from './client.js';
import type { Persistence } from './durability.js';
import { metaKey } from './keys.js';
import { redisOps } from './open.js';
import type { RedisShardStore } from './shard-store.js';
import type { RedisFilterConnectionOptions } from './store.js';

/** Options of {@link RedisCountingBloomFilter.create}. */
export interface RedisCountingBloomFilterOptions
  extends StoredCountingBloomFilterOptions,
    RedisFilterConnectionOptions {}

export class RedisCountingBloomFilter<K extends Key = Key> extends StoredCountingBloomFilter<K> {
  private static readonly redisType = countingType(
    (ops, name, meta) => new RedisCountingBloomFilter(ops, name, meta),
  );

  private constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta);
  }

  /**
   * Creates the filter `name` sized for (capacity, fpp), or opens it if it exists with the same
   * parameters; `RedisFilterMismatchError` if it exists with others or is of another kind.
   */
  static override create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisCountingBloomFilterOptions & { funnel?: F },
  ): Promise<RedisCountingBloomFilter<KeyOf<F>>> {
    const ops = redisOps('RedisCountingBloomFilter', client, name, options);
    return createStored(RedisCountingBloomFilter.redisType, ops, name, options) as Promise<
      RedisCountingBloomFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static override open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisCountingBloomFilter<K>> {
    const ops = redisOps('RedisCountingBloomFilter', client, name, options);
    return openStored(RedisCountingBloomFilter.redisType, ops, name) as Promise<
      RedisCountingBloomFilter<K>
    >;
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
