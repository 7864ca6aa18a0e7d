/**
 * The Redis cells of the conformance table (test/conformance/table.ts, REDIS_TARGETS): the shared
 * suite (test/conformance/suite.ts) for the four Redis filters, run the same way on every backend
 * and client: test/redis-conformance.test.ts (a standalone server) and test/redis-cluster.test.ts
 * (a 3-master cluster), each through node-redis and ioredis. Shards are kept small (8192 bits) so
 * that every filter really is split over many Redis keys (and, on a cluster, over every node).
 */
import { expect, it } from 'vitest';
import {
  RedisBloomFilter,
  type RedisConnection,
  RedisCountingBloomFilter,
  RedisCuckooFilter,
  RedisScalableBloomFilter,
} from '../../src/redis.js';
import {
  type ConformanceTarget,
  type FilterAdapter,
  runConformance,
} from '../conformance/suite.js';
import { REDIS_TARGETS } from '../conformance/table.js';

/** Most bits per shard of the filters under test (counting filters: this many counters). */
export const SHARD_BITS = 8192;

/** The smallest shard a cuckoo filter takes (64 buckets). */
const CUCKOO_MIN_BITS = 4096;

/**
 * Keys of each check that `has` also answers key by key, beside `hasMany` for all of them (see
 * `ConformanceTarget.perKey`; the false positive check also asks every key the batch answered
 * true). A `has` is a window of one key through the batch's code, so what the key-by-key calls
 * add is their own path: 64 calls in flight at once (within the suite's window of 256), which
 * reach every shard of the filters under test (1 to 5 per layer: 64 keys miss one of 5 with odds
 * below 10^-5), each answer compared with the batch's.
 */
const PER_KEY = 64;

export interface RedisBackend {
  /** Names the backend in the suite names, e.g. `RedisBloomFilter (cluster, ioredis)`. */
  name: string;
  /** The connected client; called when a test runs (after `beforeAll` connected it). */
  client(): RedisConnection;
  /** A filter name not used before. */
  fresh(): string;
  /** Keys in the suite's heavier checks (see `ConformanceTarget.scale`). */
  scale: number;
  /**
   * Most bits per shard (counting filters: 4 x this many bits; cuckoo filters: at least 4,096,
   * their smallest shard); default {@link SHARD_BITS}.
   */
  shardBits?: number;
}

/** What every Redis filter offers the suite. */
interface RedisFilterLike {
  add(key: string | number): Promise<boolean>;
  has(key: string): Promise<boolean>;
  hasMany(keys: Iterable<string>): Promise<boolean[]>;
  addMany(keys: Iterable<string>): Promise<number>;
  clear(): Promise<void>;
  destroy(): Promise<void>;
}

/** A Redis filter seen by the suite; `dispose` deletes its keys. */
function adapter(f: RedisFilterLike): FilterAdapter {
  return {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    // The suite's 4n absent probes in windows of 256 keys instead of one call per key.
    hasMany: (keys) => f.hasMany(keys),
    // The suite's filters filled in one batch (add is checked key by key on its own).
    addMany: (keys) => f.addMany(keys),
    clear: () => f.clear(),
    addWrongKind: () => f.add(42),
    dispose: () => f.destroy(),
  };
}

/** A `RedisBloomFilter` seen by the suite; its round trip exports it and imports a new filter. */
function bloomAdapter(backend: RedisBackend, f: RedisBloomFilter<string>): FilterAdapter {
  return {
    ...adapter(f as RedisFilterLike),
    saturation: () => f.saturation(),
    // Export to the native format and import into a new Redis filter.
    roundTrip: async () =>
      bloomAdapter(
        backend,
        (await RedisBloomFilter.fromBytes(
          backend.client(),
          backend.fresh(),
          await f.toBytes(),
        )) as RedisBloomFilter<string>,
      ),
  };
}

/** The Redis targets of `backend`, by the class name REDIS_TARGETS gives each codec. */
function targets(backend: RedisBackend): Record<string, ConformanceTarget> {
  const { client, fresh } = backend;
  const shardBits = backend.shardBits ?? SHARD_BITS;
  return {
    RedisBloomFilter: {
      name: `RedisBloomFilter (${backend.name})`,
      create: async (o) =>
        bloomAdapter(
          backend,
          await RedisBloomFilter.create(client(), fresh(), { ...o, shardBits }),
        ),
      createRaw: (o) => RedisBloomFilter.create(client(), fresh(), o as never),
      lacks: { remove: 'a Bloom filter cannot delete (RedisCountingBloomFilter can)' },
    },
    RedisCountingBloomFilter: {
      name: `RedisCountingBloomFilter (${backend.name})`,
      create: async (o) => {
        const f = await RedisCountingBloomFilter.create(client(), fresh(), {
          ...o,
          shardBits: 4 * shardBits,
        });
        return { ...adapter(f as RedisFilterLike), remove: (k) => f.remove(k) };
      },
      createRaw: (o) => RedisCountingBloomFilter.create(client(), fresh(), o as never),
      lacks: { roundTrip: 'Redis counters have no native export yet' },
    },
    RedisCuckooFilter: {
      name: `RedisCuckooFilter (${backend.name})`,
      create: async (o) => {
        const f = await RedisCuckooFilter.create(client(), fresh(), {
          ...o,
          shardBits: Math.max(CUCKOO_MIN_BITS, shardBits),
        });
        return {
          ...adapter(f as RedisFilterLike),
          remove: (k) => f.remove(k),
          expectedFpp: () => f.expectedFpp(),
        };
      },
      createRaw: (o) => RedisCuckooFilter.create(client(), fresh(), o as never),
      lacks: { roundTrip: 'Redis cuckoo buckets have no native export yet' },
      // A multiset: every add stores a copy (as CF.ADD and the in-memory CuckooFilter).
      addReportsChange: false,
      modelSlack: 0.1,
    },
    RedisScalableBloomFilter: {
      name: `RedisScalableBloomFilter (${backend.name})`,
      // A small first layer, so that the suite's keys make the filter grow several layers.
      create: async (o) =>
        adapter(
          (await RedisScalableBloomFilter.create(client(), fresh(), {
            ...o,
            capacity: Math.max(1, Math.floor(o.capacity / 8)),
            shardBits,
          })) as RedisFilterLike,
        ),
      createRaw: (o) => RedisScalableBloomFilter.create(client(), fresh(), o as never),
      lacks: {
        roundTrip: 'Redis layers have no native export yet',
        remove: 'a Bloom filter cannot delete',
      },
    },
  };
}

/**
 * Runs the conformance suite on every Redis cell of the table on `backend` (and on the Redis
 * targets the table does not list yet), after checking that no cell of the table lacks a target.
 */
export function runRedisConformance(backend: RedisBackend): void {
  const all = targets(backend);
  it(`has a target for every Redis cell of the conformance table (${backend.name})`, () => {
    for (const cls of Object.values(REDIS_TARGETS)) expect(Object.keys(all)).toContain(cls);
  });
  for (const target of Object.values(all)) {
    runConformance({ ...target, scale: backend.scale, perKey: PER_KEY });
  }
}
