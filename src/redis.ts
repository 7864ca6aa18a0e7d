/**
 * bloomkit/redis: Bloom filters stored in plain Redis (>= 6.2, no modules) or a Redis Cluster,
 * through the official `redis` client (node-redis v5). Node only.
 */

export * from './index.js';
export {
  RedisBloomFilter,
  type RedisBloomFilterOptions,
  type RedisImportOptions,
} from './redis/bloom.js';
export {
  RedisCountingBloomFilter,
  type RedisCountingBloomFilterOptions,
} from './redis/counting.js';
export {
  RedisFilterError,
  RedisFilterMismatchError,
  RedisFilterNotFoundError,
  RedisFilterTimeoutError,
} from './redis/errors.js';
export {
  DEFAULT_SHARD_BITS,
  MAX_SHARD_BITS,
  type ShardLayout,
  shardLayout,
} from './sharded/layout.js';
export {
  RedisScalableBloomFilter,
  type RedisScalableBloomFilterOptions,
} from './redis/scalable.js';
export {
  type RedisLayerInfo,
  type RedisLayerSpec,
  scalableLayerSpec,
} from './sharded/scalable-layers.js';
export {
  ShardedBloomFilter,
  type ShardedBloomOptions,
  type ShardedBloomShape,
} from './sharded/sharded-bloom.js';
export type {
  RedisClientLike,
  RedisClusterLike,
  RedisConnection,
  RedisFilterConnectionOptions,
} from './redis/store.js';
