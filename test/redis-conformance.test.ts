/**
 * The shared conformance suite against the Redis-backed filters on a real standalone redis-server
 * (started by the test, on a free loopback port), through node-redis and through ioredis
 * (test/support/redis-adapters.ts).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import { runRedisConformance } from './support/redis-adapters.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';

const hasRedis = requireRedis();

/**
 * The ioredis client, not connected yet. `io` has the type this infers: declared `Redis`, tsc
 * compares two instantiations of ioredis' class to assign it (seconds of type checking).
 */
const ioClient = (port: number) =>
  new Redis(port, { enableOfflineQueue: false, lazyConnect: true });

/**
 * Keys in the suite's heavier checks on a Redis backend. The rates' statistical power is in the
 * shard-store cells of test/conformance.test.ts (the same stored-filter code over
 * MemoryShardStore, at the suite's full scale), and test/shard-stores.test.ts shows that Redis
 * holds the same bytes as that store for the same operations; here the suite proves each client
 * library and server through every path, with a 4-sigma band that still catches a broken rate.
 */
const REDIS_SCALE = 2_000;

/**
 * The second client's run: what it adds to the first is its own paths (sending, reply parsing),
 * over the same bytes. 500 keys with quarter-size shards give each filter as many shards and
 * layers as 2,000 keys with 8192-bit ones (3 per filter, 1, 1, 2 and 4 per scalable layer; the
 * cuckoo filter's at least 4,096 bits: 3 shards); a client that misread replies would show false
 * negatives (checked for every key) or a rate far off (the suite probes at least 4,000 keys:
 * the rate must stay under 2.1%, and within about ±0.7% of the model's where the type has one).
 */
const SECOND_CLIENT = { scale: 500, shardBits: 2048 };

describe.skipIf(!hasRedis)('Redis filters on a standalone server', () => {
  let server: RedisServerHandle;
  let client: NodeClient;
  let io: ReturnType<typeof ioClient>;
  let counter = 0;

  beforeAll(async () => {
    server = await startRedis();
    client = nodeClient(server.url);
    await client.connect();
    io = ioClient(server.port);
    io.on('error', () => undefined);
    await io.connect();
  });

  afterAll(async () => {
    await client?.close();
    io?.disconnect();
    await server?.stop();
  });

  runRedisConformance({
    name: 'standalone',
    client: () => client,
    fresh: () => `conformance:${counter++}`,
    scale: REDIS_SCALE,
  });

  runRedisConformance({
    name: 'standalone, ioredis',
    client: () => io,
    fresh: () => `conformance:${counter++}`,
    ...SECOND_CLIENT,
  });
});
