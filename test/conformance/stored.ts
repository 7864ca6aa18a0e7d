/**
 * The shard-store cells of the conformance table (table.ts, STORE_TARGETS): the stored filters
 * (src/sharded/stored-*.ts) over `MemoryShardStore`, the in-process store, so the suite runs on the
 * store layer without a server. The Redis store's cells are in test/support/redis-adapters.ts.
 * Shards are kept small (8192 bits) so that every filter really is split over many shards.
 */
import {
  MemoryShardStore,
  StoredBloomFilter,
  StoredCountingBloomFilter,
  StoredCuckooFilter,
  StoredScalableBloomFilter,
} from '../../src/index.js';
import type { ConformanceTarget, FilterAdapter } from './suite.js';

const SHARD_BITS = 8192;

/** One store for every cell (each filter under a name of its own, destroyed after its test). */
const store = new MemoryShardStore();
let counter = 0;
const fresh = (): string => `conformance:${counter++}`;

/** What every stored filter offers the suite. */
interface StoredLike {
  add(key: string | number): Promise<boolean>;
  has(key: string): Promise<boolean>;
  hasMany(keys: Iterable<string>): Promise<boolean[]>;
  addMany(keys: Iterable<string>): Promise<number>;
  clear(): Promise<void>;
  destroy(): Promise<void>;
}

function adapter(f: StoredLike): FilterAdapter {
  return {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    // The batch path, as on Redis: the suite asks all its keys through it, has() on 1,000.
    hasMany: (keys) => f.hasMany(keys),
    addMany: (keys) => f.addMany(keys),
    clear: () => f.clear(),
    addWrongKind: () => f.add(42),
    dispose: () => f.destroy(),
  };
}

/** A `StoredBloomFilter` seen by the suite; its round trip exports it and imports a new filter. */
function bloomAdapter(f: StoredBloomFilter<string>): FilterAdapter {
  return {
    ...adapter(f as StoredLike),
    expectedFpp: () => f.expectedFpp(),
    saturation: () => f.saturation(),
    roundTrip: async () =>
      bloomAdapter(
        (await StoredBloomFilter.fromBytes(
          store,
          fresh(),
          await f.toBytes(),
        )) as StoredBloomFilter<string>,
      ),
  };
}

/** The shard-store cells, by codec name. */
export const STORE_TARGETS: Record<string, ConformanceTarget> = {
  sharded: {
    name: 'StoredBloomFilter (MemoryShardStore)',
    create: async (o) =>
      bloomAdapter(await StoredBloomFilter.create(store, fresh(), { ...o, shardBits: SHARD_BITS })),
    createRaw: (o) => StoredBloomFilter.create(store, fresh(), o as never),
    lacks: { remove: 'a Bloom filter cannot delete (StoredCountingBloomFilter can)' },
  },
  counting: {
    name: 'StoredCountingBloomFilter (MemoryShardStore)',
    create: async (o) => {
      const f = await StoredCountingBloomFilter.create(store, fresh(), {
        ...o,
        shardBits: 4 * SHARD_BITS,
      });
      return { ...adapter(f as StoredLike), remove: (k) => f.remove(k) };
    },
    createRaw: (o) => StoredCountingBloomFilter.create(store, fresh(), o as never),
    lacks: { roundTrip: 'stored counters have no native export yet' },
  },
  cuckoo: {
    name: 'StoredCuckooFilter (MemoryShardStore)',
    create: async (o) => {
      const f = await StoredCuckooFilter.create(store, fresh(), { ...o, shardBits: SHARD_BITS });
      return {
        ...adapter(f as StoredLike),
        remove: (k) => f.remove(k),
        expectedFpp: () => f.expectedFpp(),
      };
    },
    createRaw: (o) => StoredCuckooFilter.create(store, fresh(), o as never),
    lacks: { roundTrip: 'stored cuckoo buckets have no native export yet' },
    // A multiset: every add stores a copy (as CF.ADD and the in-memory CuckooFilter).
    addReportsChange: false,
    modelSlack: 0.1,
  },
  scalable: {
    name: 'StoredScalableBloomFilter (MemoryShardStore, first layer capacity/8)',
    // A small first layer, so that the suite's keys make the filter grow several layers.
    create: async (o) =>
      adapter(
        (await StoredScalableBloomFilter.create(store, fresh(), {
          ...o,
          capacity: Math.max(1, Math.floor(o.capacity / 8)),
          shardBits: SHARD_BITS,
        })) as StoredLike,
      ),
    createRaw: (o) => StoredScalableBloomFilter.create(store, fresh(), o as never),
    lacks: {
      roundTrip: 'stored layers have no native export yet',
      remove: 'a Bloom filter cannot delete',
    },
  },
};
