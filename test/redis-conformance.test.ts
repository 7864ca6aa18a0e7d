/**
 * The shared conformance suite against the Redis-backed filters on a real standalone redis-server
 * (started by the test, on a free loopback port). Shards are kept small (8192 bits) so that every
 * filter here really is split over many Redis keys.
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe } from 'vitest';
import {
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisScalableBloomFilter,
} from '../src/redis.js';
import { type FilterAdapter, runConformance } from './conformance/suite.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';

const hasRedis = requireRedis();
const SHARD_BITS = 8192;

describe.skipIf(!hasRedis)('Redis filters on a standalone server', () => {
  let server: RedisServerHandle;
  let client: ReturnType<typeof createClient>;
  let counter = 0;
  const fresh = (): string => `conformance:${counter++}`;

  beforeAll(async () => {
    server = await startRedis();
    client = createClient({ url: server.url, disableOfflineQueue: true });
    client.on('error', () => undefined); // failures reach the callers as rejected commands
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  function bloom(f: RedisBloomFilter): FilterAdapter {
    return {
      add: (k) => f.add(k),
      has: (k) => f.has(k),
      clear: () => f.clear(),
      // Export to the native format and import into a new Redis filter.
      roundTrip: async () =>
        bloom(await RedisBloomFilter.fromBytes(client, fresh(), await f.toBytes())),
      addWrongKind: () => f.add(42),
      dispose: () => f.destroy(),
    };
  }

  runConformance({
    name: 'RedisBloomFilter (standalone)',
    create: async (o) =>
      bloom(await RedisBloomFilter.create(client, fresh(), { ...o, shardBits: SHARD_BITS })),
    createRaw: (o) => RedisBloomFilter.create(client, fresh(), o as never),
    scale: 10_000,
  });

  runConformance({
    name: 'RedisCountingBloomFilter (standalone)',
    create: async (o) => {
      const f = await RedisCountingBloomFilter.create(client, fresh(), {
        ...o,
        shardBits: 4 * SHARD_BITS,
      });
      return {
        add: (k) => f.add(k),
        has: (k) => f.has(k),
        remove: (k) => f.remove(k),
        clear: () => f.clear(),
        addWrongKind: () => f.add(42),
        dispose: () => f.destroy(),
      };
    },
    createRaw: (o) => RedisCountingBloomFilter.create(client, fresh(), o as never),
    scale: 10_000,
  });

  runConformance({
    name: 'RedisScalableBloomFilter (standalone)',
    // A small first layer, so that the suite's keys make the filter grow several layers.
    create: async (o) => {
      const f = await RedisScalableBloomFilter.create(client, fresh(), {
        ...o,
        capacity: Math.max(1, Math.floor(o.capacity / 8)),
        shardBits: SHARD_BITS,
      });
      return {
        add: (k) => f.add(k),
        has: (k) => f.has(k),
        clear: () => f.clear(),
        addWrongKind: () => f.add(42),
        dispose: () => f.destroy(),
      };
    },
    createRaw: (o) => RedisScalableBloomFilter.create(client, fresh(), o as never),
    scale: 10_000,
  });
});
