/**
 * bloomkit/redis: Bloom filters stored in plain Redis (>= 6.2, no modules) or a Redis Cluster,
 * through node-redis v5 or ioredis (the caller passes its connected client in). Node only.
 *
 * @module bloomkit/redis
 */

export * from './index.js';
export {
  RedisBloomFilter,
  type RedisBloomFilterOptions,
  type RedisImportOptions,
} from './redis/bloom.js';
export type { CommandClient, RedisConnection } from './redis/client.js';
export {
  RedisCountingBloomFilter,
  type RedisCountingBloomFilterOptions,
} from './redis/counting.js';
export {
  altBucket,
  CUCKOO_MIN_FPP,
  RedisCuckooFilter,
  type RedisCuckooFilterOptions,
} from './redis/cuckoo.js';
export type { Durability, Persistence, PersistenceMode } from './redis/durability.js';
export {
  type BatchOutcome,
  KEY_STATUS,
  RedisEvictionPolicyError,
  RedisFilterError,
  RedisFilterLostError,
  RedisFilterMismatchError,
  RedisFilterNotFoundError,
  RedisFilterReplicationError,
  RedisFilterStaleError,
  RedisFilterTimeoutError,
  RedisPersistenceError,
} from './redis/errors.js';
export {
  RedisScalableBloomFilter,
  type RedisScalableBloomFilterOptions,
} from './redis/scalable.js';
export { RedisSeenSet, type RedisSeenSetOptions } from './redis/seen-set.js';
export { DEFAULT_TIMEOUT, type RedisFilterConnectionOptions } from './redis/store.js';
export {
  DEFAULT_SHARD_BITS,
  MAX_SHARD_BITS,
  type ShardLayout,
  shardLayout,
} from './sharded/layout.js';
export {
  type RedisLayerInfo,
  type RedisLayerSpec,
  scalableLayerSpec,
} from './sharded/scalable-layers.js';
