/**
 * THE conformance table: every filter type (a row of the codec table, src/formats/registry.ts)
 * × storage (plain, shared memory) × backend (memory, chunked file, the in-process shard store,
 * Redis, Redis Cluster). Each cell is either a target the shared suite (suite.ts) runs, or the
 * reason it cannot exist, shown as a visible skip. test/conformance.test.ts runs the memory,
 * chunked-file and shard-store cells (stored.ts: the stored filters over `MemoryShardStore`) and
 * checks that the table covers every codec; the Redis cells are run by
 * test/redis-conformance.test.ts and test/redis-cluster.test.ts, which check that they run every
 * Redis cell named here.
 *
 * Adding a type: one line in MEMORY_TARGETS (or a reason in REASONS), nothing else.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BinaryFuseFilter,
  BlockedBloomFilter,
  BloomFilter,
  ChunkedBloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  DcsoBloomFilter,
  FilterCascade,
  fromBytes,
  type MembershipFilter,
  type ReadonlyMembershipFilter,
  ScalableBloomFilter,
  SplitBlockBloomFilter,
} from '../../src/node.js';
import { ShardedBloomFilter } from '../../src/redis.js';
import { decodeAny } from '../support/any-filter.js';
import { STORE_TARGETS } from './stored.js';
import type { ConformanceTarget, FilterAdapter, SaturationFigure } from './suite.js';

export { STORE_TARGETS } from './stored.js';

export const STORAGES = ['plain', 'shared'] as const;
export const BACKENDS = [
  'memory',
  'chunked-file',
  'memory-store',
  'redis',
  'redis-cluster',
] as const;
export type Storage = (typeof STORAGES)[number];
export type Backend = (typeof BACKENDS)[number];

interface Growable extends MembershipFilter<string> {
  remove?(key: string): boolean;
  expectedFpp?(): number;
  saturation?(): SaturationFigure;
}

/** An in-memory growable filter seen by the suite (round trip through the codec table). */
export function adapt(f: Growable): FilterAdapter {
  const adapter: FilterAdapter = {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    clear: () => f.clear(),
    roundTrip: () => adapt(decodeAny(f.toBytes()) as Growable),
    addWrongKind: () => f.add(42 as never),
  };
  if (typeof f.remove === 'function') adapter.remove = (k) => f.remove!(k);
  if (typeof f.expectedFpp === 'function') adapter.expectedFpp = () => f.expectedFpp!();
  if (typeof f.saturation === 'function') adapter.saturation = () => f.saturation!();
  return adapter;
}

/** A build-once filter seen by the suite: `add` is not offered (the target declares it lacking). */
function readonlyAdapter<F extends ReadonlyMembershipFilter<string>>(
  f: F,
  model?: (f: F) => number,
): FilterAdapter {
  const adapter: FilterAdapter = {
    add: () => {
      throw new Error('build-once');
    },
    has: (k) => f.has(k),
    roundTrip: () => readonlyAdapter(fromBytes<string>(f.toBytes())),
    addWrongKind: () => f.has(42 as never),
  };
  if (model !== undefined) adapter.expectedFpp = () => model(f);
  return adapter;
}

type Options = { capacity: number; fpp: number };

/** The cells that run in memory, by codec name and storage. */
export const MEMORY_TARGETS: Record<string, Partial<Record<Storage, ConformanceTarget[]>>> = {
  classic: {
    plain: [
      {
        name: 'BloomFilter',
        create: (o) => adapt(BloomFilter.create(o)),
        createRaw: (o) => BloomFilter.create(o as never),
      },
      {
        name: 'BloomFilter (Guava bytes)',
        create: (o) => {
          const f = BloomFilter.create(o);
          return { ...adapt(f), roundTrip: () => adapt(BloomFilter.fromGuava(f.toGuava())) };
        },
        lacks: { createRaw: 'same factory as BloomFilter' },
      },
    ],
    shared: [
      {
        name: 'BloomFilter (shared memory)',
        create: (o) => adapt(BloomFilter.create({ ...o, shared: true })),
        lacks: { createRaw: 'same factory as BloomFilter' },
      },
    ],
  },
  blocked: {
    plain: [
      {
        name: 'BlockedBloomFilter',
        create: (o) => adapt(BlockedBloomFilter.create(o)),
        createRaw: (o) => BlockedBloomFilter.create(o as never),
        fppSlack: 1,
      },
      {
        // The batch paths as the suite's batch API (filled with one addMany, every check's keys
        // asked in one hasMany), and as its per-key calls (batches of one key, compared).
        name: 'BlockedBloomFilter (batch addMany/hasMany)',
        create: (o) => {
          const f = BlockedBloomFilter.create(o);
          return {
            ...adapt(f),
            add: (k) => f.addMany([k]) === 1,
            has: (k) => f.hasMany([k])[0] === true,
            addMany: (keys) => f.addMany(keys),
            hasMany: (keys) => f.hasMany(keys),
          };
        },
        fppSlack: 1,
        lacks: { createRaw: 'same factory as BlockedBloomFilter' },
      },
    ],
    shared: [
      {
        name: 'BlockedBloomFilter (shared memory)',
        create: (o) => adapt(BlockedBloomFilter.create({ ...o, shared: true })),
        fppSlack: 1,
        lacks: { createRaw: 'same factory as BlockedBloomFilter' },
      },
    ],
  },
  'split-block': {
    plain: [
      {
        name: 'SplitBlockBloomFilter',
        create: (o) => adapt(SplitBlockBloomFilter.create(o) as Growable),
        createRaw: (o) => SplitBlockBloomFilter.create(o as never),
        fppSlack: 1,
      },
      {
        name: 'SplitBlockBloomFilter (Parquet bytes)',
        create: (o) => {
          const f = SplitBlockBloomFilter.create(o);
          return {
            ...adapt(f as Growable),
            roundTrip: () => adapt(SplitBlockBloomFilter.fromParquet(f.toParquet()) as Growable),
          };
        },
        fppSlack: 1,
        lacks: { createRaw: 'same factory as SplitBlockBloomFilter' },
      },
    ],
    shared: [
      {
        name: 'SplitBlockBloomFilter (shared memory)',
        create: (o) => adapt(SplitBlockBloomFilter.create({ ...o, shared: true }) as Growable),
        fppSlack: 1,
        lacks: { createRaw: 'same factory as SplitBlockBloomFilter' },
      },
    ],
  },
  counting: {
    plain: [
      {
        name: 'CountingBloomFilter',
        create: (o) => adapt(CountingBloomFilter.create(o)),
        createRaw: (o) => CountingBloomFilter.create(o as never),
      },
    ],
  },
  scalable: {
    plain: [
      {
        name: 'ScalableBloomFilter',
        create: (o) => adapt(ScalableBloomFilter.create(o)),
        createRaw: (o) => ScalableBloomFilter.create(o as never),
      },
      {
        name: 'ScalableBloomFilter (grown 100x from a small first layer, s = 4, r = 0.85)',
        create: (o) =>
          adapt(
            ScalableBloomFilter.create({
              capacity: Math.max(1, Math.floor(o.capacity / 100)),
              fpp: o.fpp,
              growth: 4,
              ratio: 0.85,
            }),
          ),
        // The compound bound is P itself: no slack beyond the binomial noise.
        fppSlack: 1,
        lacks: { createRaw: 'same factory as ScalableBloomFilter' },
      },
    ],
  },
  cuckoo: {
    plain: [
      {
        name: 'CuckooFilter',
        create: (o) => adapt(CuckooFilter.create(o)),
        createRaw: (o) => CuckooFilter.create(o as never),
        // A multiset: every add stores a copy (see test/cuckoo.test.ts for its put contract).
        addReportsChange: false,
        // 1 − (1 − 1/(2^f − 1))^(2b·load) treats the fingerprints as independent.
        modelSlack: 0.1,
      },
      {
        name: 'CuckooFilter (32-bit fingerprints)',
        create: (o) => adapt(CuckooFilter.create({ ...o, fpp: 2e-9 })),
        addReportsChange: false,
        lacks: { createRaw: 'same factory as CuckooFilter' },
      },
    ],
  },
  dcso: {
    plain: [
      {
        name: 'DcsoBloomFilter',
        create: (o) => adapt(DcsoBloomFilter.create(o)),
        createRaw: (o) => DcsoBloomFilter.create(o as never),
      },
      {
        name: 'DcsoBloomFilter (DCSO bloom file bytes)',
        create: (o) => {
          const f = DcsoBloomFilter.create(o);
          return { ...adapt(f), roundTrip: () => adapt(DcsoBloomFilter.fromDcso(f.toDcso())) };
        },
        lacks: { createRaw: 'same factory as DcsoBloomFilter' },
      },
    ],
  },
  sharded: {
    plain: [
      {
        name: 'ShardedBloomFilter (RedisBloomFilter layout in memory)',
        create: (o) => adapt(ShardedBloomFilter.create({ ...o, shardBits: 8192 }) as Growable),
        createRaw: (o) => ShardedBloomFilter.create(o as never),
      },
    ],
  },
  cascade: {
    plain: [
      {
        // Exact on include and exclude; a key outside both passes layer 1 (p = r/(√2·s)) and then
        // usually stops at layer 2, so excluding s = 71·r other keys holds outsiders under 1%.
        name: 'FilterCascade (exclude = 71 x n other keys: layer 1 at p = 1%)',
        build: (_o, keys) => {
          const exclude = Array.from({ length: 71 * Math.max(keys.length, 1) }, (_, i) => `x:${i}`);
          return readonlyAdapter(FilterCascade.build({ include: keys, exclude }));
        },
        scale: 2000,
        lacks: {
          add: 'built once from its include and exclude sets',
          clear: 'built once from its include and exclude sets',
          remove: 'built once from its include and exclude sets',
          createRaw: 'build takes key sets, checked in test/cascade.test.ts',
        },
      },
    ],
  },
  'binary-fuse': {
    plain: [
      {
        name: 'BinaryFuseFilter (8-bit fingerprints for fpp >= 1/256)',
        build: (o, keys) =>
          readonlyAdapter(
            BinaryFuseFilter.build(keys, { fingerprintBits: o.fpp >= 1 / 256 ? 8 : 16 }),
            (f) => 2 ** -f.fingerprintBits,
          ),
        lacks: {
          add: 'built once from all its keys',
          clear: 'built once from all its keys',
          remove: 'built once from all its keys',
          createRaw: 'build takes keys and fingerprintBits, checked in test/binary-fuse.test.ts',
        },
      },
    ],
  },
};

/** Types that can forget a key; every other target lacks `remove`, visibly. */
const DELETABLE = new Set(['counting', 'cuckoo']);
for (const [type, byStorage] of Object.entries(MEMORY_TARGETS)) {
  if (DELETABLE.has(type)) continue;
  for (const targets of Object.values(byStorage)) {
    for (const t of targets ?? []) {
      t.lacks = {
        remove: 'a Bloom filter cannot forget one key (see the counting and cuckoo filters)',
        ...t.lacks,
      };
    }
  }
}

/** A classic filter in a chunked file: built once from the keys, then queried from disk. */
const CHUNKED_TARGET: ConformanceTarget = {
  name: 'ChunkedBloomFilter (hash routing, 4 KiB chunks)',
  async build(o: Options, keys: readonly string[]) {
    const dir = mkdtempSync(join(tmpdir(), 'bloomkit-conf-'));
    const path = join(dir, 'f.blmk');
    await ChunkedBloomFilter.build(path, keys, { ...o, chunkBytes: 4096 });
    const f = await ChunkedBloomFilter.open(path);
    return {
      add: () => {
        throw new Error('build-once');
      },
      has: (k) => f.has(k),
      dispose: async () => {
        await f.close();
        rmSync(dir, { recursive: true, force: true });
      },
      addWrongKind: () => f.has(42 as never),
    };
  },
  lacks: {
    add: 'a chunked file is written once by build',
    clear: 'a chunked file is written once by build',
    remove: 'a Bloom filter cannot remove',
    roundTrip: 'the file is its serialized form',
    createRaw: 'build takes (capacity, fpp) checked in test/chunked.test.ts',
  },
};

/** The chunked-file cells, by codec name. */
export const CHUNKED_TARGETS: Record<string, ConformanceTarget> = { classic: CHUNKED_TARGET };

/** The Redis cells, by codec name: the class the Redis runners must run. */
export const REDIS_TARGETS: Record<string, string> = {
  cuckoo: 'RedisCuckooFilter',
  sharded: 'RedisBloomFilter',
  counting: 'RedisCountingBloomFilter',
  scalable: 'RedisScalableBloomFilter',
};

/** Why a cell cannot exist (checked: every cell without a target has one). */
export function reasonFor(type: string, storage: Storage, backend: Backend): string | undefined {
  if (backend === 'memory') {
    if (MEMORY_TARGETS[type]?.[storage] !== undefined) return undefined;
    if (storage === 'shared') {
      if (type === 'scalable') {
        return 'growth allocates a new layer: concurrent writers would need a lock (one writer, or a layer per worker merged by union)';
      }
      if (type === 'cuckoo') {
        return 'an insert moves fingerprints between buckets (kicks): no lock-free multi-writer form';
      }
      if (type === 'counting') {
        return 'shared 4-bit counters (CAS loop) are in the worker-thread suite (test/shared-bits.test.ts)';
      }
      if (type === 'sharded')
        return 'the in-memory twin of Redis storage; shared memory is the classic filter';
      if (type === 'dcso') {
        return 'a format for exchange with DCSO bloom; shared memory is the classic filter';
      }
      return 'a build-once filter is immutable after build: share its bytes, nothing to synchronise';
    }
    return undefined;
  }
  if (storage === 'shared') return 'shared memory is a local storage, not a shard store';
  if (backend === 'chunked-file') {
    return CHUNKED_TARGETS[type] === undefined
      ? 'chunked files hold the classic (Guava MITZ_64) layout only'
      : undefined;
  }
  if (backend === 'memory-store') {
    if (STORE_TARGETS[type] !== undefined) return undefined;
    return type === 'classic'
      ? 'in a shard store the classic filter is split into shards: see the sharded row (StoredBloomFilter)'
      : 'no stored (shard-store) form of this type';
  }
  if (REDIS_TARGETS[type] !== undefined) return undefined;
  return type === 'classic'
    ? 'on Redis the classic filter is split into shards: see the sharded row (RedisBloomFilter)'
    : 'no Redis storage for this type';
}
