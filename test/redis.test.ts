/**
 * RedisBloomFilter, RedisCountingBloomFilter and RedisScalableBloomFilter on a real standalone
 * redis-server: metadata and races, Redis' bit order (checked with Redis' own GETBIT), TTL on every
 * key, export/import against the in-memory twin, counting removes and saturation, scalable growth
 * seen from clients with stale views, NOSCRIPT recovery, RESP3, and pipelining (server counters).
 * Inspection goes through raw RESP (test/support/redis-server.ts), not through node-redis.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, createClientPool } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BloomFilter, IncompatibleFiltersError } from '../src/index.js';
import {
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisFilterMismatchError,
  RedisFilterNotFoundError,
  RedisFilterReplicationError,
  RedisScalableBloomFilter,
  ShardedBloomFilter,
} from '../src/redis.js';
import { expectSameArray } from './support/bytes.js';
import { keys } from './support/random.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import {
  commandCalls,
  type RedisServerHandle,
  rawCommand,
  rawCommands,
  requireRedis,
  serverStats,
  startRedis,
} from './support/redis-server.js';
import { groupedCommands } from './support/windows.js';

const hasRedis = requireRedis();
type Client = NodeClient;

describe.skipIf(!hasRedis)('Redis filters (standalone server)', () => {
  let server: RedisServerHandle;
  let client: Client;
  let other: Client;
  let counter = 0;
  const fresh = (prefix = 'f'): string => `${prefix}:${counter++}`;
  const raw = (...args: string[]) => rawCommand(server.port, args);

  beforeAll(async () => {
    server = await startRedis();
    client = nodeClient(server.url);
    other = nodeClient(server.url);
    for (const c of [client, other]) {
      c.on('error', () => undefined);
      await c.connect();
    }
  });

  afterAll(async () => {
    await client?.close();
    await other?.close();
    await server?.stop();
  });

  describe('metadata', () => {
    it('creates once: racing creates from two clients get the same filter', async () => {
      const name = fresh();
      const opts = { capacity: 50_000, fpp: 0.01, shardBits: 65536 };
      const filters = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          RedisBloomFilter.create(i % 2 ? client : other, name, opts),
        ),
      );
      for (const f of filters) expect(f.shape).toEqual(filters[0]!.shape);
      expect(filters[0]!.shape).toMatchObject({ shards: 8, shardBits: 59968, hashes: 7 });
      await filters[0]!.add('x');
      for (const f of filters) expect(await f.has('x')).toBe(true);
      const flat = (await raw('HGETALL', `bk:m:{${name}}`)) as string[];
      const meta = Object.fromEntries(
        Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]),
      );
      expect(meta).toEqual({
        v: '2',
        id: String(filters[0]!.generation.id),
        gen: '1',
        ready: '1',
        kind: 'bloom',
        funnel: 'string',
        capacity: '50000',
        fpp: '0.01',
        shardBits: '65536',
        shards: '8',
        bits: '59968',
        hashes: '7',
        sum: '0dff23a8', // CRC-32C of the fields that decide hashing (docs/FORMAT.md)
      });
    });

    it('racing creates with different parameters: one wins, the others get a typed error', async () => {
      const name = fresh();
      const results = await Promise.allSettled(
        [1000, 2000, 3000, 4000].map((capacity) =>
          RedisBloomFilter.create(capacity % 2000 ? client : other, name, { capacity, fpp: 0.01 }),
        ),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(RedisFilterMismatchError);
          expect(r.reason).toBeInstanceOf(IncompatibleFiltersError);
        }
      }
    });

    it('names both values when parameters differ, and opens what exists', async () => {
      const name = fresh();
      const f = await RedisBloomFilter.create(client, name, { capacity: 1000, fpp: 0.01 });
      await expect(
        RedisBloomFilter.create(client, name, { capacity: 2000, fpp: 0.01 }),
      ).rejects.toThrow(`Redis filter "${name}" exists with capacity 1000, requested 2000`);
      await expect(
        RedisBloomFilter.create(client, name, { capacity: 1000, fpp: 0.02 }),
      ).rejects.toThrow(/fpp 0.01, requested 0.02/);
      await expect(
        RedisBloomFilter.create(client, name, { capacity: 1000, fpp: 0.01, funnel: 'bytes' }),
      ).rejects.toThrow(/funnel string, requested bytes/);
      await expect(
        RedisBloomFilter.create(client, name, { capacity: 1000, fpp: 0.01, ttl: 60 }),
      ).rejects.toThrow(/ttl \(none\), requested 60000/);
      await expect(
        RedisCountingBloomFilter.create(client, name, { capacity: 1000, fpp: 0.01 }),
      ).rejects.toThrow(/kind bloom, requested counting/);
      await expect(RedisScalableBloomFilter.open(client, name)).rejects.toBeInstanceOf(
        RedisFilterMismatchError,
      );
      const g = await RedisBloomFilter.open(other, name);
      expect(g.shape).toEqual(f.shape);
      await expect(RedisBloomFilter.open(client, fresh())).rejects.toBeInstanceOf(
        RedisFilterNotFoundError,
      );
    });

    it('rejects bad input before touching Redis', async () => {
      const before = await raw('DBSIZE');
      await expect(
        RedisBloomFilter.create(client, 'a}b', { capacity: 10, fpp: 0.1 }),
      ).rejects.toThrow(/name must not contain '\{' or '\}'/);
      await expect(RedisBloomFilter.create(client, '', { capacity: 10, fpp: 0.1 })).rejects.toThrow(
        RangeError,
      );
      await expect(
        RedisBloomFilter.create(client, 42 as never, { capacity: 10, fpp: 0.1 }),
      ).rejects.toThrow(TypeError);
      await expect(
        RedisBloomFilter.create(client, fresh(), { capacity: 10, fpp: 0.1, shardBits: 1000 }),
      ).rejects.toThrow(/shardBits must be a multiple of 64, got 1000/);
      await expect(
        RedisBloomFilter.create(client, fresh(), { capacity: 10, fpp: 0.1, ttl: -1 }),
      ).rejects.toThrow(/ttl must be a positive number of seconds/);
      await expect(
        RedisBloomFilter.create(client, fresh(), { capacity: 10, fpp: 0.1, timeout: 0 }),
      ).rejects.toThrow(/timeout must be a positive number of ms below 2\^31, or Infinity, got 0/);
      await expect(
        RedisCountingBloomFilter.create(client, fresh(), { capacity: 10, fpp: 0.1, shardBits: 64 }),
      ).rejects.toThrow(/multiple of 256/);
      await expect(
        RedisScalableBloomFilter.create(client, fresh(), {
          capacity: 10,
          fpp: 0.1,
          growth: 3 as never,
        }),
      ).rejects.toThrow(/growth must be 2 or 4, got 3/);
      await expect(
        RedisScalableBloomFilter.create(client, fresh(), { capacity: 10, fpp: 0.1, ratio: 1 }),
      ).rejects.toThrow(/ratio must be in \(0, 1\), got 1/);
      await expect(
        RedisBloomFilter.create({} as never, fresh(), { capacity: 10, fpp: 0.1 }),
      ).rejects.toThrow(/client must be a connected node-redis client or cluster/);
      const f = await RedisBloomFilter.create(client, fresh(), { capacity: 100, fpp: 0.01 });
      const dbsize = await raw('DBSIZE');
      const bitsBefore = await raw('BITCOUNT', f.shardKey(0));
      // A bad key anywhere in a window: nothing of the window is sent.
      await expect(f.addMany(['a', 'b', 3 as never, 'd'])).rejects.toBeInstanceOf(TypeError);
      expect(await raw('DBSIZE')).toBe(dbsize);
      expect(await raw('BITCOUNT', f.shardKey(0))).toBe(bitsBefore);
      expect(Number(dbsize)).toBe(Number(before) + 2); // the metadata and the one shard
    });
  });

  describe('RedisBloomFilter', () => {
    it("uses Redis' bit order: GETBIT sees every offset, byte o>>3 holds mask 0x80>>(o&7)", async () => {
      const name = fresh();
      const f = await RedisBloomFilter.create(client, name, { capacity: 1000, fpp: 0.01 });
      expect(await f.add('a')).toBe(true);
      const offsets = [6793, 6883, 8765, 1047, 2929, 4811, 4901]; // Guava's positions of "a"
      const key = `bk:b:{${name}:0}`;
      expect(f.shardKey(0)).toBe(key);
      // Cell o is bit 64 + o of the string, after the 8-byte header (id, generation).
      const bits = await rawCommands(
        server.port,
        offsets.map((o) => ['GETBIT', key, String(64 + o)]),
      );
      expect(bits).toEqual(offsets.map(() => 1));
      expect(await raw('BITCOUNT', key, '8', '-1')).toBe(7);
      expect(await raw('BITFIELD', key, 'GET', 'u32', '0', 'GET', 'u32', '32')).toEqual([
        Number(f.generation.id),
        1,
      ]);
      // The exported bytes are Redis' bytes, and a one-shard filter is Guava's filter.
      const local = await f.toLocal();
      const classic = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
      classic.add('a');
      expect(local.toBloomFilter().equals(classic)).toBe(true);
    });

    it('answers exactly as the in-memory twin, and serves a filter built offline', async () => {
      // Full to capacity: 5,000 keys over 6 shards, probed with 10,000 others (about 100 of them
      // false positives, which must be the twin's too).
      const opts = { capacity: 5_000, fpp: 0.01, shardBits: 8192 };
      const offline = ShardedBloomFilter.create(opts);
      const present = keys('present', 5_000);
      offline.addMany(present);
      const f = await RedisBloomFilter.fromBytes(client, fresh(), offline.toBytes());
      expect(f.shape).toEqual(offline.shape);
      expect(f.shards).toBe(6);
      const probes = [...present, ...keys('absent', 10_000)];
      expectSameArray(
        await f.hasMany(probes),
        probes.map((k) => offline.has(k)),
      );
      // Back up from Redis: the same bytes.
      expect(Buffer.from(await f.toBytes()).equals(Buffer.from(offline.toBytes()))).toBe(true);
      // The other way: built in Redis, answered locally.
      const g = await RedisBloomFilter.create(client, fresh(), opts);
      await g.addMany(present);
      const local = await g.toLocal();
      expect(local.equals(offline)).toBe(true);
      expect(await g.estimatedCount()).toBe(offline.estimatedCount());
    });

    it('imports as a union into an existing filter and refuses other shapes', async () => {
      const opts = { capacity: 5000, fpp: 0.01, shardBits: 8192 };
      const name = fresh();
      const f = await RedisBloomFilter.create(client, name, opts);
      await f.addMany(keys('mine', 2000));
      const offline = ShardedBloomFilter.create(opts);
      offline.addMany(keys('theirs', 2000));
      await RedisBloomFilter.fromBytes(client, name, offline.toBytes());
      expect(
        (await f.hasMany([...keys('mine', 2000), ...keys('theirs', 2000)])).every(Boolean),
      ).toBe(true);
      const wrong = ShardedBloomFilter.create({ ...opts, capacity: 6000 }).toBytes();
      await expect(RedisBloomFilter.fromBytes(client, name, wrong)).rejects.toThrow(
        /capacity 5000, requested 6000/,
      );
      // No scratch keys are left behind.
      expect(await raw('KEYS', '*tmp*')).toEqual([]);
    });

    it('add is new exactly once per key, also across clients, also within one batch', async () => {
      const name = fresh();
      // 5,000 keys over 36 shards, from three batches racing on two clients.
      const a = await RedisBloomFilter.create(client, name, {
        capacity: 10_000,
        fpp: 0.001,
        shardBits: 4096,
      });
      const b = await RedisBloomFilter.open(other, name);
      const batch = keys('k', 5_000);
      const [ra, rb, rc] = await Promise.all([
        a.addEach(batch),
        b.addEach(batch),
        a.addEach([...batch].reverse()),
      ]);
      let twice = 0;
      for (let i = 0; i < batch.length; i++) {
        const n = Number(ra[i]) + Number(rb[i]) + Number(rc[batch.length - 1 - i]);
        if (n > 1) twice++;
      }
      expect(twice).toBe(0);
      expect(await a.addEach(['dup', 'dup', 'dup'])).toEqual([true, false, false]);
      expect(await a.addMany(['dup', 'dup2', 'dup2'])).toBe(1);
    });

    it('clear empties every shard (header kept, new generation); destroy deletes the keys', async () => {
      const name = fresh();
      const f = await RedisBloomFilter.create(client, name, {
        capacity: 5_000,
        fpp: 0.01,
        shardBits: 4096,
      });
      await f.addMany(keys('k', 5_000));
      expect(Number(await raw('EXISTS', f.shardKey(0), f.shardKey(f.shards - 1)))).toBe(2);
      await f.clear();
      expect(await raw('STRLEN', f.shardKey(0))).toBe(8);
      expect(await raw('STRLEN', f.shardKey(f.shards - 1))).toBe(8);
      expect(f.generation.gen).toBe(2);
      expect(await raw('EXISTS', f.metaKey)).toBe(1);
      expect((await f.hasMany(keys('k', 5_000))).filter(Boolean).length).toBe(0);
      await f.destroy();
      expect(await raw('EXISTS', f.metaKey, f.shardKey(0), f.shardKey(f.shards - 1))).toBe(0);
    });

    it('TTL: metadata and every shard expire together', async () => {
      const name = fresh('ttl');
      const f = await RedisBloomFilter.create(client, name, {
        capacity: 5000,
        fpp: 0.01,
        shardBits: 4096,
        ttl: 1.5,
      });
      expect(f.ttlMs).toBe(1500);
      await f.add('first');
      await sleep(300);
      await f.addMany(keys('later', 5000));
      const shardKeys = Array.from({ length: f.shards }, (_, i) => f.shardKey(i));
      const pttls = (await rawCommands(
        server.port,
        [f.metaKey, ...shardKeys].map((k) => ['PTTL', k]),
      )) as number[];
      // Every key has an expiry (no -1) and all point at the same instant, expireAt.
      const now = Date.now();
      for (const t of pttls) {
        expect(t).toBeGreaterThan(0);
        expect(Math.abs(now + t - f.expireAt!)).toBeLessThan(250);
      }
      expect(Math.max(...pttls) - Math.min(...pttls)).toBeLessThan(100);
      await sleep(Math.max(0, f.expireAt! - Date.now()) + 200);
      expect(await raw('EXISTS', f.metaKey, ...shardKeys)).toBe(0);
      await expect(RedisBloomFilter.open(client, name)).rejects.toBeInstanceOf(
        RedisFilterNotFoundError,
      );
    });

    it('recovers from NOSCRIPT (scripts flushed) and works over RESP3', async () => {
      const f = await RedisBloomFilter.create(client, fresh(), {
        capacity: 100,
        fpp: 0.01,
        ttl: 60,
      });
      await f.add('a');
      expect(await raw('SCRIPT', 'FLUSH')).toBe('OK');
      expect(await f.add('b')).toBe(true);
      const c = await RedisCountingBloomFilter.create(client, fresh(), {
        capacity: 100,
        fpp: 0.01,
      });
      await c.add('a');
      await raw('SCRIPT', 'FLUSH');
      expect(await c.remove('a')).toBe(true);
      const resp3 = createClient({ url: server.url, RESP: 3 });
      await resp3.connect();
      try {
        const g = await RedisBloomFilter.open(resp3, (f as RedisBloomFilter).name);
        expect(await g.hasMany(['a', 'b', 'c'])).toEqual([true, true, false]);
        const s = await RedisScalableBloomFilter.create(resp3, fresh(), {
          capacity: 10,
          fpp: 0.01,
        });
        await s.addMany(keys('k', 100));
        expect((await s.hasMany(keys('k', 100))).every(Boolean)).toBe(true);
      } finally {
        await resp3.close();
      }
    });

    it('after a script flush, a window of script calls sends the script body once, not once per key', async () => {
      const c = await RedisCountingBloomFilter.create(client, fresh(), {
        capacity: 5000,
        fpp: 0.01,
      });
      const batch = keys('flushed', 1000);
      await c.addMany(batch);
      await raw('SCRIPT', 'FLUSH');
      const evals = () => commandCalls(server.port, 'eval');
      const before = await evals();
      // Every removal is one script call, a window of them in flight at once: all meet NOSCRIPT
      // (and the windows after it find the script loaded).
      expect((await c.removeMany(batch.slice(0, 500))).every(Boolean)).toBe(true);
      expect((await evals()) - before).toBe(1);
      expect((await c.hasMany(batch.slice(500))).every(Boolean)).toBe(true);
      expect(await c.has(batch[0]!)).toBe(false);
    });

    it('batches a window into one command per shard, pipelined: far fewer socket reads than commands', async () => {
      const f = await RedisBloomFilter.create(client, fresh(), {
        capacity: 20_000,
        fpp: 0.01,
        shardBits: 8192,
      });
      const batch = keys('p', 10_000);
      const before = await serverStats(server.port);
      await f.hasMany(batch);
      const after = await serverStats(server.port);
      const commands = after.commands - before.commands - 1; // minus our own INFO
      const reads = after.reads - before.reads - 1;
      console.log(`hasMany(10000): ${commands} commands in ${reads} socket reads on the server`);
      // One BITFIELD_RO per shard of each window (24 shards, windows of 256 keys): about 950.
      expect(commands).toBe(groupedCommands(f, batch).total);
      expect(commands).toBeLessThan(10_000 / 5);
      expect(reads).toBeLessThan(commands / 5);
    });
  });

  it('replicas: a server without replicas confirms no write, so none is acknowledged', async () => {
    const f = await RedisBloomFilter.create(client, 'no-replica', {
      capacity: 1000,
      fpp: 0.01,
      replicas: 1,
      replicaTimeout: 50,
    });
    await expect(f.add('x')).rejects.toThrow(RedisFilterReplicationError);
    const err = await f.addMany(['a', 'b', 'c']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisFilterReplicationError);
    expect((err as RedisFilterReplicationError).message).toMatch(
      /only 0 of 1 replicas confirmed within 50 ms: not acknowledged/,
    );
    // Applied by the master but unconfirmed: unknown, not applied.
    expect([...(err as RedisFilterReplicationError).batch!.status]).toEqual([2, 2, 2]);
    // The same filter opened without the option reads what the master holds.
    const plain = await RedisBloomFilter.open(client, 'no-replica');
    expect(await plain.hasMany(['x', 'a', 'b', 'c'])).toEqual([true, true, true, true]);
    await plain.destroy();
  });

  it('replicas: refused on a client pool, whose WAIT would not see the writes of other connections', async () => {
    const pool = createClientPool({ url: server.url });
    await pool.connect();
    try {
      await expect(
        RedisBloomFilter.create(pool, 'pooled', { capacity: 100, fpp: 0.01, replicas: 1 }),
      ).rejects.toThrow(/^replicas must be 0 for a Redis filter of this client/);
      expect(await raw('EXISTS', 'bk:m:{pooled}')).toBe(0);
    } finally {
      pool.destroy();
    }
  });

  it('replicas: an unconfirmed remove is reported as applied on the master, not to be resent', async () => {
    const plain = await RedisCountingBloomFilter.create(client, 'no-replica-counting', {
      capacity: 1000,
      fpp: 0.01,
    });
    await plain.addMany(['a', 'b']);
    const f = await RedisCountingBloomFilter.open(client, 'no-replica-counting', {
      replicas: 1,
      replicaTimeout: 50,
    });
    const err = await f.removeMany(['a']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisFilterReplicationError);
    expect((err as Error).message).toMatch(/removing 1 key .* do not send the removes again/);
    expect([...(err as RedisFilterReplicationError).batch!.status]).toEqual([2]);
    expect(await plain.hasMany(['a', 'b'])).toEqual([false, true]);
    await plain.destroy();
  });

  describe('RedisCountingBloomFilter', () => {
    it('removes all or nothing: with one counter at 0 nothing is decremented', async () => {
      const opts = { capacity: 1000, fpp: 0.01, shardBits: 4 * 4096 };
      const f = await RedisCountingBloomFilter.create(client, fresh(), opts);
      // The counting layout places keys as the twin does with one cell per counter.
      const twin = ShardedBloomFilter.create({ ...opts, shardBits: opts.shardBits / 4 });
      const { shard, offsets } = twin.positionsOf('k');
      const key = f.shardKey(shard);
      const counters = () =>
        rawCommand(server.port, [
          'BITFIELD',
          key,
          ...offsets.flatMap((o) => ['GET', 'u4', `#${16 + o}`]),
        ]);
      expect(await f.add('k')).toBe(true);
      expect(await f.add('k')).toBe(false);
      expect(await counters()).toEqual(offsets.map(() => 2));
      await raw('BITFIELD', key, 'SET', 'u4', `#${16 + offsets[3]!}`, '0');
      expect(await f.has('k')).toBe(false);
      expect(await f.remove('k')).toBe(false);
      expect(await counters()).toEqual(offsets.map((_, i) => (i === 3 ? 0 : 2)));
      await raw('BITFIELD', key, 'SET', 'u4', `#${16 + offsets[3]!}`, '2');
      expect(await f.remove('k')).toBe(true);
      expect(await counters()).toEqual(offsets.map(() => 1));
      expect(await f.count('k')).toBe(1);
    });

    it('saturates at 15 and never decrements a saturated counter', async () => {
      const f = await RedisCountingBloomFilter.create(client, fresh(), {
        capacity: 1000,
        fpp: 0.01,
      });
      for (let i = 0; i < 20; i++) await f.add('hot');
      expect(await f.count('hot')).toBe(15);
      for (let i = 0; i < 20; i++) expect(await f.remove('hot')).toBe(true);
      // Its counters stay at 15: the true count is unknown, so lowering them could hide others.
      expect(await f.count('hot')).toBe(15);
      expect(await f.has('hot')).toBe(true);
    });

    it('concurrent removes of a key added once: exactly one succeeds', async () => {
      const name = fresh();
      const a = await RedisCountingBloomFilter.create(client, name, { capacity: 1000, fpp: 0.01 });
      const b = await RedisCountingBloomFilter.open(other, name);
      await a.addMany(keys('k', 100));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).removeMany(keys('k', 100))),
      );
      for (let j = 0; j < 100; j++) {
        expect(results.filter((r) => r[j]).length).toBe(1);
      }
      expect((await a.hasMany(keys('k', 100))).filter(Boolean).length).toBeLessThan(5);
    });

    it('gives its shards the TTL', async () => {
      const f = await RedisCountingBloomFilter.create(client, fresh('ttl'), {
        capacity: 2000,
        fpp: 0.01,
        shardBits: 4096,
        ttl: 30,
      });
      await f.addMany(keys('k', 2000));
      const ttls = (await rawCommands(
        server.port,
        Array.from({ length: f.shards }, (_, i) => ['PTTL', f.shardKey(i)]),
      )) as number[];
      for (const t of ttls) expect(t).toBeGreaterThan(25_000);
    });
  });

  describe('RedisScalableBloomFilter', () => {
    it('grows layers with tightened rates, each shard within its share', async () => {
      const name = fresh();
      const f = await RedisScalableBloomFilter.create(client, name, {
        capacity: 250,
        fpp: 0.01,
        shardBits: 2048,
      });
      const present = keys('k', 2_500);
      const added = await f.addMany(present);
      expect(added).toBeGreaterThan(2_475);
      const info = await f.info();
      // Each new key was counted once, in the layer that took it.
      expect(info.reduce((sum, layer) => sum + layer.count, 0)).toBe(added);
      // 250 + 500 + 1000 < 2500 ≤ 250 + 500 + 1000 + 2000. A layer is sealed when its first
      // shard takes its share, so sealed layers are nearly, not exactly, full.
      expect(info.length).toBe(4);
      expect(info[0]!.shards).toBeGreaterThan(1);
      info.forEach((layer, i) => {
        expect(layer.capacity).toBe(250 * 2 ** i);
        expect(layer.fpp).toBeCloseTo(0.01 * 0.1 * 0.9 ** i, 15);
        expect(layer.count).toBeLessThanOrEqual(layer.share * layer.shards);
        expect(layer.sealed).toBe(i < info.length - 1);
        if (layer.sealed) expect(layer.count).toBeGreaterThan(0.85 * layer.capacity);
      });
      const meta = (await raw('HGETALL', `bk:m:{${name}}`)) as string[];
      expect(meta).toContain('layer:3');
      expect(meta[meta.indexOf('layers') + 1]).toBe('4');
      expect((await f.hasMany(present)).every(Boolean)).toBe(true);
      // The rate is at most 0.01 · (1 − 0.9^4) = 0.0034: ~14 of 4,000 probes, 0.01 (40) is 7
      // sigma off.
      let fp = 0;
      for (const hit of await f.hasMany(keys('absent', 4_000))) if (hit) fp++;
      expect(fp / 4_000).toBeLessThan(0.01);
    });

    it('TTL: every layer, its shards and their key counts expire with the metadata', async () => {
      const name = fresh('ttl');
      const f = await RedisScalableBloomFilter.create(client, name, {
        capacity: 300,
        fpp: 0.01,
        shardBits: 4096,
        ttl: 60,
      });
      await f.addMany(keys('k', 2_000));
      const bk = (await raw('KEYS', `bk:*{${name}*`)) as string[];
      expect(bk.filter((k) => k.endsWith(':n')).length).toBeGreaterThan(f.layers.length);
      const pttls = (await rawCommands(
        server.port,
        bk.map((k) => ['PTTL', k]),
      )) as number[];
      for (const t of pttls) {
        expect(t).toBeGreaterThan(55_000);
        expect(t).toBeLessThanOrEqual(60_000);
      }
    });

    it('a client with a stale view of the layers never misses a newer layer', async () => {
      const name = fresh();
      const opts = { capacity: 200, fpp: 0.01, shardBits: 4096 };
      const stale = await RedisScalableBloomFilter.create(client, name, opts);
      // Handles that each see only the first layer, one per key checked below.
      const views = await Promise.all(
        Array.from({ length: 20 }, () => RedisScalableBloomFilter.open(client, name)),
      );
      const busy = await RedisScalableBloomFilter.open(other, name);
      await busy.addMany(keys('old', 200));
      // 200 + 400 + 800 < 1,700 keys: four layers.
      await busy.addMany(keys('new', 1500));
      expect(stale.layers.length).toBe(1);
      expect(busy.layers.length).toBeGreaterThan(3);
      // One key at a time, each through a handle that has not refreshed yet ...
      const late = keys('new', 1500).slice(-20);
      for (let i = 0; i < late.length; i++) {
        const view = views[i]!;
        expect(view.layers.length).toBe(1);
        if (i % 2) expect(await view.has(late[i]!)).toBe(true);
        else expect(await view.add(late[i]!)).toBe(false);
        expect(view.layers.length).toBe(busy.layers.length);
      }
      // ... and in a batch.
      expect((await stale.hasMany(keys('new', 1500))).every(Boolean)).toBe(true);
      expect(stale.layers.length).toBe(busy.layers.length);
    });

    it('two clients growing it at once: one layer per step, no key new twice, no false negative', async () => {
      const name = fresh();
      const opts = { capacity: 50, fpp: 0.01, shardBits: 2048 };
      const a = await RedisScalableBloomFilter.create(client, name, opts);
      const b = await RedisScalableBloomFilter.create(other, name, opts);
      const batch = keys('k', 2000);
      const chunks = (list: string[]) =>
        Array.from({ length: 20 }, (_, i) => list.slice(i * 100, i * 100 + 100));
      const run = async (f: RedisScalableBloomFilter, list: string[]) => {
        const out: boolean[] = [];
        for (const chunk of chunks(list)) out.push(...(await f.addEach(chunk)));
        return out;
      };
      const [ra, rb] = await Promise.all([run(a, batch), run(b, batch)]);
      expect(batch.filter((_, i) => ra[i] && rb[i])).toEqual([]);
      const info = await a.info();
      // 50 + … + 800 < 2000 ≤ 50 + … + 1600: six layers, exactly one per growth step.
      expect(info.map((l) => l.capacity)).toEqual([50, 100, 200, 400, 800, 1600]);
      expect(info.map((l) => l.sealed)).toEqual([true, true, true, true, true, false]);
      expect((await b.hasMany(batch)).every(Boolean)).toBe(true);
      expect((await a.hasMany(batch)).every(Boolean)).toBe(true);
    });

    it('clear drops the layers and the keys', async () => {
      const f = await RedisScalableBloomFilter.create(client, fresh(), {
        capacity: 100,
        fpp: 0.01,
      });
      await f.addMany(keys('k', 1000));
      expect(f.layers.length).toBeGreaterThan(1);
      await f.clear();
      expect(f.layers.length).toBe(1);
      expect((await f.info())[0]!.count).toBe(0);
      expect((await f.hasMany(keys('k', 1000))).filter(Boolean).length).toBe(0);
    });
  });
});
