/**
 * The codec descriptor of the sharded Bloom filter (`ShardedBloomFilter`, the in-memory twin of
 * `RedisBloomFilter`): native type `shardedBloom`, hash scheme MURMUR128_MITZ_64 applied within
 * the key's shard. The byte layout is documented in sharded-codec.ts. Browser-safe.
 */

import type { FilterCodec } from '../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../formats/native.js';
import { formatInt, wordDensity } from '../formats/view.js';
import { ShardedBloomFilter } from './sharded-bloom.js';
import { shardedParts, shardedSink } from './sharded-codec.js';

export const shardedBloomCodec: FilterCodec<ShardedBloomFilter> = {
  name: 'sharded',
  typeId: FILTER_TYPES.shardedBloom,
  hashSchemes: [HASH_SCHEMES.murmur128Mitz64],
  filterClass: ShardedBloomFilter,
  parts: shardedParts,
  decode: (bytes, options) => ShardedBloomFilter.fromBytes(bytes, options),
  sink: (header, params) => shardedSink(header, params, ShardedBloomFilter),
  view: (filter) => ({
    title: 'Sharded Bloom filter (as stored in Redis)',
    shape: [
      ['shards', formatInt(filter.shards)],
      ['bits per shard', formatInt(filter.shardBits)],
      ['hashes (k)', formatInt(filter.hashes)],
      ['key encoding', filter.funnel],
    ],
    fill: filter.bitCount() / filter.bitSize,
    density: wordDensity(filter.bytes),
  }),
  describe(filter) {
    const { capacity, fpp, maxShardBits, shardBits, shards, hashes, funnel } = filter.shape;
    return {
      type: 'sharded',
      funnel,
      capacity,
      fpp,
      shards,
      shardBits,
      maxShardBits,
      hashes,
      bits: filter.bitSize,
      bitsSet: filter.bitCount(),
      estimatedCount: filter.estimatedCount(),
      expectedFpp: filter.expectedFpp(),
    };
  },
};
