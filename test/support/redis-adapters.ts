/**
 * The shared conformance suite (test/conformance/suite.ts) for the three Redis filters, run the
 * same way on every backend: test/redis-conformance.test.ts (a standalone server) and
 * test/redis-cluster.test.ts (a 3-master cluster). Shards are kept small (8192 bits) so that every
 * filter really is split over many Redis keys (and, on a cluster, over every node).
 */
import {
  RedisBloomFilter,
  type RedisConnection,
  RedisCountingBloomFilter,
  RedisScalableBloomFilter,
} from '../../src/redis.js';
import { type FilterAdapter, runConformance } from '../conformance/suite.js';

/** Most bits per shard of the filters under test (counting filters: this many counters). */
export const SHARD_BITS = 8192;

export interface RedisBackend {
  /** Names the backend in the suite names, e.g. `RedisBloomFilter (cluster)`. */
  name: string;
  /** The connected client; called when a test runs (after `beforeAll` connected it). */
  client(): RedisConnection;
  /** A filter name not used before. */
  fresh(): string;
  /** Keys in the heavier checks of the counting and scalable suites (bloom: always 10,000). */
  scale: number;
}

/** What every Redis filter offers the suite. */
interface RedisFilterLike {
  add(key: string | number): Promise<boolean>;
  has(key: string): Promise<boolean>;
  clear(): Promise<void>;
  destroy(): Promise<void>;
}

/** A Redis filter seen by the suite; `dispose` deletes its keys. */
function adapter(f: RedisFilterLike): FilterAdapter {
  return {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    clear: () => f.clear(),
    addWrongKind: () => f.add(42),
    dispose: () => f.destroy(),
  };
}

/** A `RedisBloomFilter` seen by the suite; its round trip exports it and imports a new filter. */
function bloomAdapter(backend: RedisBackend, f: RedisBloomFilter): FilterAdapter {
  return {
    ...adapter(f),
    // Export to the native format and import into a new Redis filter.
    roundTrip: async () =>
      bloomAdapter(
        backend,
        await RedisBloomFilter.fromBytes(backend.client(), backend.fresh(), await f.toBytes()),
      ),
  };
}

/** Runs the conformance suite on the bloom, counting and scalable Redis filters of `backend`. */
export function runRedisConformance(backend: RedisBackend): void {
  const { client, fresh } = backend;

  runConformance({
    name: `RedisBloomFilter (${backend.name})`,
    create: async (o) =>
      bloomAdapter(
        backend,
        await RedisBloomFilter.create(client(), fresh(), { ...o, shardBits: SHARD_BITS }),
      ),
    createRaw: (o) => RedisBloomFilter.create(client(), fresh(), o as never),
    scale: 10_000,
    lacks: { remove: 'a Bloom filter cannot forget one key (see RedisCountingBloomFilter)' },
  });

  runConformance({
    name: `RedisCountingBloomFilter (${backend.name})`,
    create: async (o) => {
      const f = await RedisCountingBloomFilter.create(client(), fresh(), {
        ...o,
        shardBits: 4 * SHARD_BITS,
      });
      return { ...adapter(f), remove: (k) => f.remove(k) };
    },
    createRaw: (o) => RedisCountingBloomFilter.create(client(), fresh(), o as never),
    lacks: { roundTrip: 'native export/import exists for RedisBloomFilter only' },
    scale: backend.scale,
  });

  runConformance({
    name: `RedisScalableBloomFilter (${backend.name})`,
    // A small first layer, so that the suite's keys make the filter grow several layers.
    create: async (o) =>
      adapter(
        await RedisScalableBloomFilter.create(client(), fresh(), {
          ...o,
          capacity: Math.max(1, Math.floor(o.capacity / 8)),
          shardBits: SHARD_BITS,
        }),
      ),
    createRaw: (o) => RedisScalableBloomFilter.create(client(), fresh(), o as never),
    lacks: {
      roundTrip: 'native export/import exists for RedisBloomFilter only',
      remove: 'a Bloom filter cannot forget one key',
    },
    scale: backend.scale,
  });
}
