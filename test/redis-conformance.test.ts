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

describe.skipIf(!hasRedis)('Redis filters on a standalone server', () => {
  let server: RedisServerHandle;
  let client: NodeClient;
  let io: Redis;
  let counter = 0;

  beforeAll(async () => {
    server = await startRedis();
    client = nodeClient(server.url);
    await client.connect();
    io = new Redis(server.port, { enableOfflineQueue: false, lazyConnect: true });
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
    scale: 6_000,
  });

  runRedisConformance({
    name: 'standalone, ioredis',
    client: () => io,
    fresh: () => `conformance:${counter++}`,
    scale: 3_000,
  });
});
