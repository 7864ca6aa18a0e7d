/**
 * `RedisScalableBloomFilter`: a scalable Bloom filter in plain Redis, for when the number of keys
 * is not known in advance: `StoredScalableBloomFilter` (src/sharded/stored-scalable.ts, which
 * states the algorithm, its bound and its growth protocol) over a `RedisShardStore`.
 *
 * In Redis: shard i of layer l is the string `bk:s:{name:l:i}` (the 8-byte header, cells from bit
 * 64) with its key count `n` and `sealed` flag in the hash `bk:s:{name:l:i}:n` (same hash tag, so
 * one Lua script, SCALABLE_ADD, sets the bits and counts the key atomically); the layers are
 * `layers` and `layer:i` in the metadata, appended by a compare-and-set script (SCALABLE_GROW).
 */

import type { KeyOf } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import type { StoreOps } from '../sharded/ops.js';
import type { Meta } from '../sharded/store.js';
import {
  createScalable,
  openScalable,
  StoredScalableBloomFilter,
  type StoredScalableBloomFilterOptions,
} from '../sharded/stored-scalable.js';
import type { RedisConnection } from './client.js';
import type { Persistence } from './durability.js';
import { metaKey } from './keys.js';
import { redisOps } from './open.js';
import type { RedisShardStore } from './shard-store.js';
import type { RedisFilterConnectionOptions } from './store.js';

/** Options of {@link RedisScalableBloomFilter.create}. */
export interface RedisScalableBloomFilterOptions
  extends StoredScalableBloomFilterOptions,
    RedisFilterConnectionOptions {}

export class RedisScalableBloomFilter<K extends Key = Key> extends StoredScalableBloomFilter<K> {
  private constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta);
  }

  /**
   * Creates the filter `name`, or opens it if it exists with the same parameters;
   * `RedisFilterMismatchError` if it exists with others or is of another kind. Every option is
   * checked before anything is written.
   */
  static override create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisScalableBloomFilterOptions & { funnel?: F },
  ): Promise<RedisScalableBloomFilter<KeyOf<F>>> {
    const ops = redisOps('RedisScalableBloomFilter', client, name, options);
    const make = (o: StoreOps, n: string, m: Meta) =>
      new RedisScalableBloomFilter<KeyOf<F>>(o, n, m);
    return createScalable(make, ops, name, options);
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static override open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisScalableBloomFilter<K>> {
    const ops = redisOps('RedisScalableBloomFilter', client, name, options);
    const make = (o: StoreOps, n: string, m: Meta) => new RedisScalableBloomFilter<K>(o, n, m);
    return openScalable(make, ops, name);
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
