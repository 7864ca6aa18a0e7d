/**
 * The stored filters over `MemoryShardStore`, without a server: the guarantees of the store layer
 * (src/sharded/store.ts) that the conformance suite does not reach: epochs (another object's
 * clear, a re-created filter), TTL expiry by the store's clock, lost shards, exports byte for byte,
 * all-or-nothing removes, a full cuckoo filter, and batches that stop on abort with a per-key
 * outcome.
 */
import { describe, expect, it } from 'vitest';
import { cuckooFalsePositiveRate } from '../src/filters/cuckoo/sizing.js';
import {
  FilterFullError,
  KEY_STATUS,
  MemoryShardStore,
  SHARD_REPLY,
  StoredBloomFilter,
  StoredCountingBloomFilter,
  StoredCuckooFilter,
  StoredFilterLostError,
  StoredFilterMismatchError,
  StoredFilterNotFoundError,
  StoredFilterStaleError,
  StoredScalableBloomFilter,
} from '../src/index.js';
import { CUCKOO_MIN_FPP, ShardedBloomFilter } from '../src/redis.js';
import { expectBytes } from './support/bytes.js';
import { keys } from './support/random.js';

const opts = { capacity: 2000, fpp: 0.01, shardBits: 4096 };

describe('stored filters over MemoryShardStore', () => {
  it('refuses the replicas option (no replicas to wait for) and bad replica options, writing nothing', async () => {
    const store = new MemoryShardStore();
    const base = { capacity: 1000, fpp: 0.01 };
    await expect(StoredBloomFilter.create(store, 'r', { ...base, replicas: 1 })).rejects.toThrow(
      /^replicas must be 0 for a .* \(it cannot wait for replicas\), got 1$/,
    );
    await expect(StoredBloomFilter.create(store, 'r', { ...base, replicas: -1 })).rejects.toThrow(
      RangeError,
    );
    await expect(StoredBloomFilter.create(store, 'r', { ...base, replicas: 1.5 })).rejects.toThrow(
      /replicas must be an integer in \[0, 1000\], got 1.5/,
    );
    await expect(
      StoredBloomFilter.create(store, 'r', { ...base, replicaTimeout: 0 }),
    ).rejects.toThrow(/replicaTimeout must be a positive number of ms below 2\^31, got 0/);
    // Nothing was written: the name is free, and replicas: 0 is the default.
    const f = await StoredBloomFilter.create(store, 'r', { ...base, replicas: 0 });
    expect(await f.add('x')).toBe(true);
  });

  it('refuses a timeout of 2^31 ms or more (a timer would fire after 1 ms), accepts Infinity', async () => {
    const store = new MemoryShardStore();
    const base = { capacity: 1000, fpp: 0.01 };
    for (const timeout of [2 ** 31, 2 ** 40, Number.NaN, -1]) {
      await expect(StoredBloomFilter.create(store, 't', { ...base, timeout })).rejects.toThrow(
        /^timeout must be a positive number of ms below 2\^31, or Infinity, got /,
      );
      await expect(StoredCountingBloomFilter.open(store, 't', { timeout })).rejects.toThrow(
        RangeError,
      );
    }
    const slow = await StoredBloomFilter.create(store, 't', { ...base, timeout: 2 ** 31 - 1 });
    expect(await slow.add('x')).toBe(true);
    const never = await StoredCuckooFilter.open(store, 't', { timeout: Infinity }).catch(
      (err: Error) => err,
    );
    expect(never).toBeInstanceOf(StoredFilterMismatchError); // a bloom filter: checked after the options
  });

  it('an add acknowledged after another object cleared the filter is kept (the epoch check)', async () => {
    const store = new MemoryShardStore();
    const a = await StoredBloomFilter.create(store, 'f', opts);
    const b = await StoredBloomFilter.open(store, 'f');
    await a.addMany(keys('old', 500));
    await b.clear();
    expect(b.generation.gen).toBe(a.generation.gen + 1);
    // `a` still plans for the old generation: its writes are refused, it re-reads and resends.
    const fresh = keys('new', 500);
    expect(await a.addMany(fresh)).toBeGreaterThan(490);
    expect(a.generation).toEqual(b.generation);
    expect((await b.hasMany(fresh)).every(Boolean)).toBe(true);
    expect((await b.hasMany(keys('old', 500))).filter(Boolean).length).toBeLessThan(50);
  });

  it('refuses an object whose filter was destroyed and created again', async () => {
    const store = new MemoryShardStore();
    const a = await StoredCountingBloomFilter.create(store, 'f', opts);
    await a.add('x');
    const b = await StoredCountingBloomFilter.open(store, 'f');
    await b.destroy();
    await expect(a.has('x')).rejects.toBeInstanceOf(StoredFilterNotFoundError);
    const c = await StoredCountingBloomFilter.create(store, 'f', opts);
    await expect(a.add('y')).rejects.toBeInstanceOf(StoredFilterStaleError);
    await expect(a.has('y')).rejects.toBeInstanceOf(StoredFilterStaleError);
    expect(await c.has('y')).toBe(false);
  });

  it('expires metadata and shards together by the store clock; no write recreates them', async () => {
    let now = 1_000_000;
    const store = new MemoryShardStore({ now: () => now });
    const f = await StoredBloomFilter.create(store, 'f', { ...opts, ttl: 2 });
    expect(f.expireAt).toBe(1_002_000);
    await f.add('a');
    now += 1999;
    expect(await f.has('a')).toBe(true);
    now += 1;
    await expect(f.add('b')).rejects.toBeInstanceOf(StoredFilterNotFoundError);
    await expect(f.has('a')).rejects.toBeInstanceOf(StoredFilterNotFoundError);
    await expect(StoredBloomFilter.open(store, 'f')).rejects.toBeInstanceOf(
      StoredFilterNotFoundError,
    );
    expect(await store.readShard(f.shardKey(0), new Uint8Array(8))).toEqual({ id: 0, gen: 0 });
  });

  it('reports a lost shard as a typed error, and clear rebuilds it', async () => {
    const store = new MemoryShardStore();
    const f = await StoredBloomFilter.create(store, 'f', opts);
    const all = keys('k', 1000);
    await f.addMany(all);
    const inZero = all.filter((k) => f.shardOf(k) === 0);
    await store.deleteShards([f.shardKey(0)]);
    await expect(f.has(inZero[0]!)).rejects.toBeInstanceOf(StoredFilterLostError);
    await expect(f.add(inZero[0]!)).rejects.toThrow(/lost shard/);
    await expect(f.toBytes()).rejects.toBeInstanceOf(StoredFilterLostError);
    await f.clear();
    expect(await f.hasMany(inZero)).toEqual(inZero.map(() => false));
  });

  it('exports the same bytes as the in-memory ShardedBloomFilter, and imports them back', async () => {
    const store = new MemoryShardStore();
    const f = await StoredBloomFilter.create(store, 'f', opts);
    const local = ShardedBloomFilter.create(opts);
    const all = keys('k', 1500);
    await f.addMany(all);
    local.addMany(all);
    const bytes = await f.toBytes();
    expect(bytes).toEqual(local.toBytes());
    expect(await f.bitCount()).toBe(local.bitCount());
    const g = await StoredBloomFilter.fromBytes(store, 'g', bytes);
    expectBytes(await g.toBytes(), bytes);
    await expect(
      StoredBloomFilter.create(store, 'g', { ...opts, capacity: 3000 }),
    ).rejects.toBeInstanceOf(StoredFilterMismatchError);
  });

  it('counting: removes all or nothing and never below a saturated counter', async () => {
    const store = new MemoryShardStore();
    const f = await StoredCountingBloomFilter.create(store, 'f', opts);
    expect(await f.remove('never')).toBe(false);
    for (let i = 0; i < 20; i++) await f.add('a');
    expect(await f.count('a')).toBe(15);
    for (let i = 0; i < 20; i++) expect(await f.remove('a')).toBe(true);
    expect(await f.has('a')).toBe(true); // saturated counters never go down
    await f.add('b');
    expect(await f.removeMany(['b', 'b'])).toEqual([true, false]);
  });

  it('cuckoo: a full filter rejects an add and keeps every key it acknowledged', async () => {
    const store = new MemoryShardStore();
    const f = await StoredCuckooFilter.create(store, 'f', {
      capacity: 10,
      fpp: 0.01,
      shardBits: 4096,
    });
    expect(f.shards * f.buckets * 4).toBe(256);
    const acked: string[] = [];
    let full: unknown;
    for (const k of keys('c', 400)) {
      try {
        await f.add(k);
        acked.push(k);
      } catch (err) {
        full = err;
        break;
      }
    }
    expect(full).toBeInstanceOf(FilterFullError);
    expect(acked.length).toBeGreaterThan(200);
    expect(await f.estimatedCount()).toBe(acked.length);
    expect((await f.hasMany(acked)).every(Boolean)).toBe(true);
  });

  it("cuckoo: its rate is the cuckoo filter's one model at its load, 16-bit fingerprints", async () => {
    const store = new MemoryShardStore();
    const f = await StoredCuckooFilter.create(store, 'm', {
      capacity: 200,
      fpp: 0.01,
      shardBits: 4096,
    });
    await f.addMany(keys('m', 150));
    const load = (await f.estimatedCount()) / (f.shards * f.buckets * 4);
    // The in-memory filter's expectedFpp(), CuckooFilter at 16 bits: one formula for both.
    expect(await f.expectedFpp()).toBe(cuckooFalsePositiveRate(load, 16));
    expect(CUCKOO_MIN_FPP).toBe(cuckooFalsePositiveRate(1, 16));
  });

  it('scalable: grows layers, each shard within its share; clear drops them', async () => {
    const store = new MemoryShardStore();
    const f = await StoredScalableBloomFilter.create(store, 'f', {
      capacity: 200,
      fpp: 0.01,
      shardBits: 2048,
    });
    const all = keys('s', 3000);
    await f.addMany(all);
    expect(f.layers.length).toBeGreaterThanOrEqual(4);
    for (const layer of await f.info()) {
      expect(layer.count).toBeLessThanOrEqual(layer.share * layer.shards);
    }
    expect((await f.hasMany(all)).every(Boolean)).toBe(true);
    await f.clear();
    expect(f.layers.length).toBe(1);
    expect((await f.hasMany(all)).filter(Boolean).length).toBe(0);
  });

  it('a batch stops on abort; its outcome says which keys were applied', async () => {
    const store = new MemoryShardStore();
    const f = await StoredBloomFilter.create(store, 'f', opts);
    const stop = new AbortController();
    const reason = new Error('enough');
    const all = keys('k', 5000);
    const err = await f
      .addMany(all, {
        signal: stop.signal,
        onProgress: (n) => n >= 1024 && stop.abort(reason),
      })
      .catch((e: unknown) => e);
    expect(err).toBe(reason);
    const batch = (err as { batch: { seen: number; applied: number; status: Uint8Array } }).batch;
    expect(batch.seen).toBeLessThan(all.length);
    const applied = all
      .slice(0, batch.seen)
      .filter((_, i) => batch.status[i] === KEY_STATUS.applied);
    expect(applied.length).toBe(batch.applied);
    expect((await f.hasMany(applied)).every(Boolean)).toBe(true);
  });

  it('refuses writes planned for another filter, a newer generation or a missing shard', async () => {
    const store = new MemoryShardStore();
    const epoch = { id: '7', gen: 2 };
    const ref = store.shardRef('bloom', 'raw', 0);
    expect(await store.setBits(ref, epoch, [1], false)).toBe(SHARD_REPLY.lost);
    await store.initShard(ref, epoch, undefined);
    expect(await store.setBits(ref, { id: '8', gen: 2 }, [1], false)).toBe(SHARD_REPLY.replaced);
    expect(await store.setBits(ref, { id: '7', gen: 1 }, [1], false)).toBe(SHARD_REPLY.cleared);
    expect(await store.setBits(ref, epoch, [1], false)).toBe(1);
    // An older generation is reset before the write (a clear under way).
    expect(await store.setBits(ref, { id: '7', gen: 3 }, [2], false)).toBe(1);
    expect(await store.readBits(ref, [1, 2])).toEqual([7, 3, 0, 1]);
  });
});
