/**
 * No acknowledged add is ever answered absent unless the caller was told, with an error, that the
 * filter was lost: stale objects after another client's clear or re-create, TTL expiry, tampered
 * metadata, deleted shards, eviction, bad parameters, ambiguous names, a frozen link in the middle
 * of a batch, and batches from async iterables with progress and abort. Real redis-server
 * processes (one plain, one with allkeys-lru), started once, in parallel.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormatError, StoredFilterLostError } from '../src/index.js';
import {
  KEY_STATUS,
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisEvictionPolicyError,
  type RedisFilterError,
  RedisFilterLostError,
  RedisFilterNotFoundError,
  RedisFilterStaleError,
  RedisFilterTimeoutError,
  RedisScalableBloomFilter,
} from '../src/redis.js';
import { keys } from './support/random.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import { type RedisProxy, startProxy } from './support/redis-proxy.js';
import {
  type RedisServerHandle,
  rawCommand,
  requireRedis,
  startRedis,
} from './support/redis-server.js';

const hasRedis = requireRedis();
type Client = NodeClient;

describe.skipIf(!hasRedis)('Redis filters never lose an acknowledged add', () => {
  let server: RedisServerHandle;
  let lru: RedisServerHandle;
  let a: Client;
  let b: Client;
  let counter = 0;
  const fresh = (prefix = 'i'): string => `${prefix}:${counter++}`;
  const raw = (...args: string[]) => rawCommand(server.port, args);
  const clients: { close(): Promise<unknown> }[] = [];

  async function connect(url: string): Promise<Client> {
    const c = nodeClient(url);
    await c.connect();
    clients.push(c);
    return c;
  }

  beforeAll(async () => {
    [server, lru] = await Promise.all([
      startRedis(),
      startRedis({ extraArgs: ['--maxmemory', '4mb', '--maxmemory-policy', 'allkeys-lru'] }),
    ]);
    // One after the other: through Promise.all, tsc would compare two instantiations of the
    // client's type (seconds of type checking; see test/support/redis-clients.ts).
    a = await connect(server.url);
    b = await connect(server.url);
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await Promise.all([server?.stop(), lru?.stop()]);
  });

  describe('stale objects', () => {
    it('scalable: adds after another client cleared it land in the current layers', async () => {
      const name = fresh();
      const opts = { capacity: 50, fpp: 0.01, shardBits: 1024 };
      const first = await RedisScalableBloomFilter.create(a, name, opts);
      await first.addMany(keys('old', 700));
      expect(first.layers.length).toBe(4);
      const other = await RedisScalableBloomFilter.open(b, name);
      await other.clear();
      const late = keys('late', 50);
      expect(await first.addMany(late)).toBe(50); // first still thinks there are 4 layers
      await first.refresh();
      expect(first.layers.length).toBe(1);
      expect((await first.hasMany(late)).every(Boolean)).toBe(true);
      const reader = await RedisScalableBloomFilter.open(b, name);
      expect((await reader.hasMany(late)).every(Boolean)).toBe(true);
      expect((await reader.hasMany(keys('old', 700))).filter(Boolean).length).toBeLessThan(10);
    });

    it('bloom and counting: adds after another client cleared them are kept', async () => {
      for (const type of [RedisBloomFilter, RedisCountingBloomFilter] as const) {
        const name = fresh();
        const mine = await type.create(a, name, { capacity: 2000, fpp: 0.01, shardBits: 4096 });
        await mine.addMany(keys('old', 1000));
        await (await type.open(b, name)).clear();
        expect(await mine.addMany(keys('late', 500))).toBeGreaterThan(490);
        expect(mine.generation.gen).toBe(2);
        const reader = await type.open(b, name);
        expect((await reader.hasMany(keys('late', 500))).every(Boolean)).toBe(true);
      }
    });

    it('clear and re-create while another client writes: no add acknowledged after them is lost', async () => {
      for (const type of [RedisBloomFilter, RedisScalableBloomFilter] as const) {
        const name = fresh();
        const opts = { capacity: 2000, fpp: 0.01, shardBits: 2048 };
        const writer = await type.create(a, name, opts);
        let cleared = false;
        const after: string[] = [];
        // Writes until five batches started after the clear, however fast the writes are (a
        // fixed count could all finish before the clear lands, leaving nothing to check).
        const writing = (async () => {
          for (let r = 0, afterClear = 0; afterClear < 5; r++) {
            const batch = keys(`c${r}`, 100);
            const started = cleared;
            await writer.addMany(batch);
            if (started) {
              after.push(...batch);
              afterClear++;
            }
          }
        })();
        await sleep(30);
        await (await type.open(b, name)).clear();
        cleared = true;
        await writing;
        expect(after.length).toBeGreaterThan(0);
        const reader = await type.open(b, name);
        expect((await reader.hasMany(after)).every(Boolean)).toBe(true);
        // Re-created under the writer: its next adds fail instead of landing anywhere.
        await reader.destroy();
        const again = await type.create(b, name, opts);
        await again.addMany(keys('new', 500));
        await expect(writer.addMany(keys('gone', 100))).rejects.toBeInstanceOf(
          RedisFilterStaleError,
        );
        await expect(writer.add('gone')).rejects.toBeInstanceOf(RedisFilterStaleError);
        // The stale writer's first window may have set bits in the new filter (false positives
        // only, see scripts.ts); the new filter's own keys are all still there.
        expect((await again.hasMany(keys('new', 500))).every(Boolean)).toBe(true);
      }
    });

    it('an object of a destroyed and re-created filter refuses to touch the new one', async () => {
      const name = fresh();
      const old = await RedisBloomFilter.create(a, name, { capacity: 1000, fpp: 0.01 });
      await old.destroy();
      const now = await RedisBloomFilter.create(b, name, { capacity: 1000, fpp: 0.01 });
      await now.add('kept');
      await expect(old.add('x')).rejects.toBeInstanceOf(RedisFilterStaleError);
      await expect(old.has('kept')).rejects.toBeInstanceOf(RedisFilterStaleError);
      await expect(old.clear()).rejects.toBeInstanceOf(RedisFilterStaleError);
      expect(await now.has('kept')).toBe(true);
    });
  });

  describe('TTL', () => {
    it('after expiry an add fails (nothing is written) instead of answering true then absent', async () => {
      const make = [
        (n: string) => RedisBloomFilter.create(a, n, { capacity: 100, fpp: 0.01, ttl: 0.4 }),
        (n: string) =>
          RedisCountingBloomFilter.create(a, n, { capacity: 100, fpp: 0.01, ttl: 0.4 }),
        (n: string) =>
          RedisScalableBloomFilter.create(a, n, { capacity: 100, fpp: 0.01, ttl: 0.4 }),
      ];
      const names = make.map(() => fresh('ttl'));
      const filters = await Promise.all(make.map((m, i) => m(names[i]!)));
      await sleep(600);
      for (const [i, f] of filters.entries()) {
        await expect(f.add('x')).rejects.toBeInstanceOf(RedisFilterNotFoundError);
        await expect(f.has('x')).rejects.toBeInstanceOf(RedisFilterNotFoundError);
        expect(await raw('KEYS', `*{${names[i]}*`)).toEqual([]);
      }
    });

    it('a stale object of an expired filter cannot hurt its re-created successor', async () => {
      const name = fresh('ttl');
      const old = await RedisBloomFilter.create(a, name, { capacity: 100, fpp: 0.01, ttl: 0.3 });
      await sleep(450);
      const now = await RedisBloomFilter.create(b, name, { capacity: 100, fpp: 0.01, ttl: 60 });
      await now.add('kept');
      await expect(old.add('x')).rejects.toBeInstanceOf(RedisFilterStaleError);
      const ttl = Number(await raw('PTTL', now.shardKey(0)));
      expect(ttl).toBeGreaterThan(50_000);
      expect(await now.has('kept')).toBe(true);
    });
  });

  describe('tampering and loss', () => {
    it('open checks the shape against capacity, fpp and shardBits', async () => {
      const name = fresh();
      const f = await RedisBloomFilter.create(a, name, {
        capacity: 5000,
        fpp: 0.01,
        shardBits: 8192,
      });
      await raw('HSET', f.metaKey, 'bits', String(f.shape.shardBits - 64));
      await expect(RedisBloomFilter.open(b, name)).rejects.toThrow(
        /has bits \d+ in its metadata, but its capacity 5000, fpp 0.01 and shardBits 8192 give \d+/,
      );
      await raw('HSET', f.metaKey, 'bits', String(f.shape.shardBits), 'shards', '2');
      await expect(RedisBloomFilter.open(b, name)).rejects.toBeInstanceOf(FormatError);
      await raw('HSET', f.metaKey, 'shards', String(f.shards), 'hashes', '3');
      await expect(RedisBloomFilter.open(b, name)).rejects.toThrow(/has hashes 3/);
      const s = await RedisScalableBloomFilter.create(a, fresh(), { capacity: 100, fpp: 0.01 });
      await raw('HSET', `bk:m:{${s.name}}`, 'layer:0', '100,0.001,1,640,10,100');
      await expect(RedisScalableBloomFilter.open(b, s.name)).rejects.toThrow(/layer:0 .* give/);
    });

    it('open sees an edited funnel (or any field that decides hashing) by the metadata sum', async () => {
      const present = keys('f', 500);
      const c = await RedisCountingBloomFilter.create(a, fresh(), { capacity: 1000, fpp: 0.01 });
      await c.addMany(present);
      await raw('HSET', c.metaKey, 'funnel', 'utf16');
      // Without the check, 499 of the 500 keys answered false through the reopened filter.
      await expect(RedisCountingBloomFilter.open(b, c.name)).rejects.toThrow(
        /has metadata whose fields do not match its sum .* was changed/,
      );
      await raw('HSET', c.metaKey, 'funnel', 'string');
      expect(
        (await (await RedisCountingBloomFilter.open(b, c.name)).hasMany(present)).every(Boolean),
      ).toBe(true);
      const s = await RedisScalableBloomFilter.create(a, fresh(), { capacity: 100, fpp: 0.01 });
      await raw('HSET', `bk:m:{${s.name}}`, 'funnel', 'bytes');
      await expect(RedisScalableBloomFilter.open(b, s.name)).rejects.toBeInstanceOf(FormatError);
      const t = await RedisBloomFilter.create(a, fresh(), { capacity: 100, fpp: 0.01, ttl: 60 });
      await raw('HDEL', t.metaKey, 'ttl');
      await expect(RedisBloomFilter.open(b, t.name)).rejects.toThrow(/do not match its sum/);
    });

    it('a deleted shard is reported as lost, never answered absent; clear rebuilds it', async () => {
      const name = fresh();
      const f = await RedisBloomFilter.create(a, name, {
        capacity: 5000,
        fpp: 0.01,
        shardBits: 4096,
      });
      const present = keys('k', 5000);
      await f.addMany(present);
      await raw('DEL', f.shardKey(1));
      await expect(f.hasMany(present)).rejects.toBeInstanceOf(RedisFilterLostError);
      // Code written against any ShardStore catches it as the storage-level twin.
      await expect(f.hasMany(present)).rejects.toBeInstanceOf(StoredFilterLostError);
      const g = await RedisBloomFilter.open(b, name);
      const inLost = present.find((k) => g.shardOf(k) === 1)!;
      await expect(g.has(inLost)).rejects.toThrow(/lost shard "bk:b:\{i:\d+:1\}"/);
      await expect(g.add(inLost)).rejects.toBeInstanceOf(RedisFilterLostError);
      expect(await raw('EXISTS', f.shardKey(1))).toBe(0); // the failed add left nothing behind
      const c = await RedisCountingBloomFilter.create(a, fresh(), { capacity: 100, fpp: 0.01 });
      await raw('DEL', c.shardKey(0));
      await expect(c.remove('x')).rejects.toBeInstanceOf(RedisFilterLostError);
      await f.clear();
      expect((await f.hasMany(present)).filter(Boolean).length).toBeLessThan(100);
    });

    it('refuses a server that may evict, unless allowed; evicted shards are reported', async () => {
      const evicting = await connect(lru.url);
      await expect(
        RedisBloomFilter.create(evicting, fresh(), { capacity: 1000, fpp: 0.01 }),
      ).rejects.toThrow(RedisEvictionPolicyError);
      await rawCommand(lru.port, ['CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru']);
      await expect(
        RedisBloomFilter.create(evicting, fresh(), { capacity: 1000, fpp: 0.01, ttl: 60 }),
      ).rejects.toThrow(/maxmemory-policy is volatile-lru/);
      await RedisBloomFilter.create(evicting, fresh(), { capacity: 1000, fpp: 0.01 }); // no TTL: safe
      await rawCommand(lru.port, ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru']);
      // Allowed: fill memory past maxmemory with other keys while adding; whatever Redis evicts,
      // every acknowledged key answers true or the filter says it was lost.
      const f = await RedisBloomFilter.create(evicting, fresh(), {
        capacity: 50_000,
        fpp: 0.01,
        shardBits: 8192,
        allowEviction: true,
      });
      const acked: string[] = [];
      const junk = 'x'.repeat(64 * 1024);
      // Rounds of 1,000 adds and 640 KiB of other keys, past 4 MiB after a few rounds, until a
      // batch is refused (every later batch would meet the same lost shard or metadata) or 20.
      let told = false;
      for (let round = 0; round < 20 && !told; round++) {
        const batch = keys(`e${round}`, 1000);
        try {
          await f.addMany(batch);
          acked.push(...batch);
        } catch (err) {
          // Told: a shard or the metadata itself was evicted.
          expect([RedisFilterLostError, RedisFilterNotFoundError]).toContain(
            (err as object).constructor,
          );
          told = true;
        }
        for (let j = 0; j < 10; j++) await evicting.set(`junk:${round}:${j}`, junk);
      }
      const evicted = Number(
        /evicted_keys:(\d+)/.exec(String(await rawCommand(lru.port, ['INFO', 'stats'])))?.[1],
      );
      expect(evicted).toBeGreaterThan(0);
      try {
        const answers = await f.hasMany(acked);
        expect(answers.every(Boolean)).toBe(true);
      } catch (err) {
        expect([RedisFilterLostError, RedisFilterNotFoundError]).toContain(
          (err as object).constructor,
        );
      }
    });
  });

  describe('validation before any write', () => {
    it('fpp 1e-300 is a RangeError and writes nothing', async () => {
      const before = await raw('DBSIZE');
      const name = fresh();
      await expect(
        RedisBloomFilter.create(a, name, { capacity: 1000, fpp: 1e-300 }),
      ).rejects.toThrow(/fpp 1e-300 needs \d+ hashes per key, at most 255/);
      await expect(
        RedisCountingBloomFilter.create(a, name, { capacity: 1000, fpp: 1e-300 }),
      ).rejects.toBeInstanceOf(RangeError);
      await expect(
        RedisScalableBloomFilter.create(a, name, { capacity: 1000, fpp: 1e-300 }),
      ).rejects.toBeInstanceOf(RangeError);
      expect(await raw('DBSIZE')).toBe(before);
      await RedisBloomFilter.create(a, name, { capacity: 1000, fpp: 0.01 }); // the name is usable
    });

    it('names that differ only in lone surrogates are refused, not merged', async () => {
      for (const name of ['dup\uD800', 'dup\uDC00', '\uDC00dup']) {
        await expect(RedisBloomFilter.create(a, name, { capacity: 10, fpp: 0.1 })).rejects.toThrow(
          /name must be well-formed Unicode/,
        );
      }
      await RedisBloomFilter.create(a, 'dup\uD83D\uDE00', { capacity: 10, fpp: 0.1 }); // a pair is fine
    });
  });

  describe('time bounds and batches', () => {
    it('a frozen link mid-batch: a timeout, nothing sent after it, removes never applied twice', async () => {
      const proxy: RedisProxy = await startProxy(server.port);
      const via = await connect(proxy.url);
      const name = fresh();
      // Cut after the third window of 256 (at most four more in flight): most of the batch is
      // never sent.
      const count = 4_000;
      const all = keys('r', count);
      const direct = await RedisCountingBloomFilter.create(a, name, { capacity: count, fpp: 0.01 });
      await direct.addMany(all);
      await direct.addMany(all); // every key added twice
      const f = await RedisCountingBloomFilter.open(via, name, { timeout: 400 });
      let windows = 0;
      const failure = await f
        .removeMany(all, {
          onProgress: () => {
            if (++windows === 3) proxy.freeze();
          },
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(failure).toBeInstanceOf(RedisFilterTimeoutError);
      const outcome = (failure as RedisFilterError).batch!;
      // Commands written before the timeout may still wait in the proxy's socket (it runs in this
      // busy process): count once the count has settled. While the link is frozen no reply comes,
      // so a batch that kept going could only send more after the thaw below.
      let sentAtTimeout = proxy.received();
      for (let still = 0; still < 3; ) {
        await sleep(50);
        const now = proxy.received();
        still = now === sentAtTimeout ? still + 1 : 0;
        sentAtTimeout = now;
      }
      expect(outcome.seen).toBeLessThan(count);
      proxy.thaw(); // the windows in flight complete now; the batch must not send any more
      await sleep(500);
      expect(proxy.received()).toBe(sentAtTimeout);
      // Retry exactly the keys that were not applied; unknown ones are looked at, not resent.
      const retry = all.filter(
        (_, i) => i >= outcome.seen || outcome.status[i] === KEY_STATUS.notApplied,
      );
      expect(await direct.removeMany(retry)).toSatisfy((r: boolean[]) => r.every(Boolean));
      // Removed at most once: never absent (a key is absent exactly when one of its counters,
      // added twice, is at 0: its count is 0).
      expect((await direct.hasMany(all)).every(Boolean)).toBe(true);
      await proxy.close();
    });

    it('a client that is not connected fails at once with an error that says so', async () => {
      const s = await startRedis();
      const c = createClient({ url: s.url }); // offline queue on: commands would wait forever
      c.on('error', () => undefined);
      await c.connect();
      const f = await RedisBloomFilter.create(c, 'gone', { capacity: 100, fpp: 0.01 });
      await s.kill();
      await sleep(100);
      await expect(f.add('x')).rejects.toThrow(/not connected/);
      await c.disconnect().catch(() => undefined);
      const io = new Redis(s.port, { lazyConnect: true, maxRetriesPerRequest: 0 });
      await expect(RedisBloomFilter.create(io, 'x', { capacity: 10, fpp: 0.1 })).rejects.toThrow(
        /ioredis client is not ready/,
      );
      io.disconnect();
      await s.stop();
    });

    it('takes async iterables, reports progress in order, and stops on abort', async () => {
      const f = await RedisBloomFilter.create(a, fresh(), { capacity: 10_000, fpp: 0.01 });
      async function* source(n: number) {
        for (let i = 0; i < n; i++) {
          if (i % 1000 === 0) await sleep(1);
          yield `async:${i}`;
        }
      }
      const progress: number[] = [];
      expect(
        await f.addMany(source(2000), { onProgress: (d) => progress.push(d) }),
      ).toBeGreaterThan(1990);
      expect(progress.at(-1)).toBe(2000);
      expect(progress).toEqual([...progress].sort((x, y) => x - y));
      expect((await f.hasMany(source(2000))).every(Boolean)).toBe(true);
      const stop = new AbortController();
      const aborted = await f
        .addMany(keys('ab', 10_000), {
          signal: stop.signal,
          onProgress: (d) => d >= 1024 && stop.abort(new Error('enough')),
        })
        .catch((err: unknown) => err as Error & { batch?: { seen: number } });
      expect(aborted).toBeInstanceOf(Error);
      expect((aborted as Error).message).toBe('enough');
      expect((aborted as { batch?: { seen: number } }).batch!.seen).toBeLessThan(10_000);
    });
  });
});
