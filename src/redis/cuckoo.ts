/**
 * `RedisCuckooFilter`: a cuckoo filter in plain Redis, with deletes (what RedisBloom's `CF.*`
 * commands give, without the module), on one server or a Redis Cluster: `StoredCuckooFilter`
 * (src/sharded/stored-cuckoo.ts, which states its layout, rate and sizing) over a
 * `RedisShardStore`.
 *
 * In Redis: S shards (keys `bk:k:{name:i}`, the 8-byte header first), each nb buckets of 4 slots
 * of 16-bit fingerprints; slot s of bucket b is `u16 #(4 + 4b + s)`. `add` and `remove` are the
 * CUCKOO_ADD and CUCKOO_REMOVE scripts (scripts.ts), `has` one `BITFIELD_RO` of the header and the
 * key's 8 slots.
 */

import type { KeyOf } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import type { StoreOps } from '../sharded/ops.js';
import type { Meta } from '../sharded/store.js';
import {
  cuckooType,
  StoredCuckooFilter,
  type StoredCuckooFilterOptions,
} from '../sharded/stored-cuckoo.js';
import { createStored, openStored } from '../sharded/stored-open.js';
import type { RedisConnection } from './client.js';
import type { Persistence } from './durability.js';
import { metaKey } from './keys.js';
import { redisOps } from './open.js';
import type { RedisShardStore } from './shard-store.js';
import type { RedisFilterConnectionOptions } from './store.js';

export { altBucket, CUCKOO_MIN_FPP } from '../sharded/stored-cuckoo.js';

/** Options of {@link RedisCuckooFilter.create}. */
export interface RedisCuckooFilterOptions
  extends StoredCuckooFilterOptions,
    RedisFilterConnectionOptions {}

export class RedisCuckooFilter<K extends Key = Key> extends StoredCuckooFilter<K> {
  private static readonly redisType = cuckooType(
    (ops, name, meta) => new RedisCuckooFilter(ops, name, meta),
  );

  private constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta);
  }

  /**
   * Creates the filter `name` for `capacity` keys, or opens it if it exists with the same
   * parameters; `RedisFilterMismatchError` if it exists with others or is of another kind.
   */
  static override create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisCuckooFilterOptions & { funnel?: F },
  ): Promise<RedisCuckooFilter<KeyOf<F>>> {
    const ops = redisOps('RedisCuckooFilter', client, name, options);
    return createStored(RedisCuckooFilter.redisType, ops, name, options) as Promise<
      RedisCuckooFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static override open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisCuckooFilter<K>> {
    const ops = redisOps('RedisCuckooFilter', client, name, options);
    return openStored(RedisCuckooFilter.redisType, ops, name) as Promise<RedisCuckooFilter<K>>;
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
