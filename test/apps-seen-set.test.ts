/**
 * RedisSeenSet on a real Redis server (started here): one round trip for 500 candidates (counted
 * by the server), no seen item ever offered again, the window's false positive rate, generations
 * rotated by advancing the clock (no sleeping) with TTLs that end with the window, and the
 * per-user memory bound measured with MEMORY USAGE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisSeenSet } from '../src/redis.js';
import { keys, upper } from './support/random.js';
import {
  type NodeClient,
  type NodeCluster,
  nodeClient,
  nodeCluster,
} from './support/redis-clients.js';
import { type RedisClusterHandle, startRedisCluster } from './support/redis-cluster-server.js';
import {
  type RedisServerHandle,
  rawCommand,
  requireRedis,
  serverStats,
  startRedis,
} from './support/redis-server.js';

const DAY = 86_400_000;
const hasRedis = requireRedis();

describe.skipIf(!hasRedis)('RedisSeenSet', () => {
  let redis: RedisServerHandle;
  let client: NodeClient;
  let clock = Date.UTC(2026, 0, 1, 12);
  const now = () => clock;

  const feed = (name: string, capacity = 200) =>
    new RedisSeenSet(client, name, { capacity, fpp: 0.01, generations: 30, period: DAY, now });

  beforeAll(async () => {
    redis = await startRedis();
    client = nodeClient(redis.url);
    await client.connect();
  }, 30_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await redis?.stop();
  });

  // The window's bitmaps are fetched (MGET) and tested here when small, tested on the server by a
  // script when large (fetchLimit 0 forces that): both answer the same, in one round trip.
  const MODES = [
    { mode: 'fetch', fetchLimit: undefined, serverCommands: 1 },
    { mode: 'script', fetchLimit: 0, serverCommands: 1 + 30 }, // the script's 30 GETs count too
  ] as const;

  for (const { mode, fetchLimit, serverCommands } of MODES) {
    it(`answers 500 candidates in one round trip (${mode}); seen items are never offered again`, async () => {
      const seen = new RedisSeenSet(client, `feed-${mode}`, {
        capacity: 200,
        fpp: 0.01,
        now,
        fetchLimit,
      });
      const watched = keys('item', 300);
      expect(await seen.markSeen('alice', watched)).toBe(300);
      expect(await seen.markSeen('alice', watched.slice(0, 10))).toBe(0);
      const candidates = [...watched, ...keys('item', 200, 300)];
      await seen.unseen('alice', candidates.slice(0, 1)); // loads the script (EVAL after NOSCRIPT)
      let sent = 0;
      const counting = {
        sendCommand: (args: readonly (string | Buffer)[], options?: object) => {
          sent++;
          return client.sendCommand(args as (string | Buffer)[], options);
        },
      };
      const counted = new RedisSeenSet(counting, `feed-${mode}`, {
        capacity: 200,
        fpp: 0.01,
        now,
        fetchLimit,
      });
      await counted.unseen('alice', candidates.slice(0, 1)); // its first call checks the server
      sent = 0;
      const before = await serverStats(redis.port);
      const fresh = await counted.unseen('alice', candidates);
      const after = await serverStats(redis.port);
      // One command sent; the server ran it and the second INFO, and nothing else.
      expect(sent).toBe(1);
      expect(after.commands - before.commands).toBe(serverCommands + 1);
      expect(fresh.filter((item) => watched.includes(item))).toEqual([]);
      // Among the 200 never seen, at most a few false positives (rate <= 1%).
      expect(fresh.length).toBeGreaterThanOrEqual(200 - 10);
      expect(fresh.every((item) => candidates.indexOf(item) >= 300)).toBe(true);
      expect(await seen.unseen('bob', candidates)).toEqual(candidates);
    });
  }

  it('keeps the window false positive rate at fpp when every generation is full', async () => {
    const seen = feed('full');
    for (let day = 0; day < 30; day++) {
      clock += DAY;
      await seen.markSeen('carol', keys(`d${day}`, 200));
    }
    const onServer = new RedisSeenSet(client, 'full', {
      capacity: 200,
      fpp: 0.01,
      now,
      fetchLimit: 0,
    });
    const n = 10_000;
    let falsePositives = 0;
    for (let start = 0; start < n; start += 500) {
      const flags = await seen.seen('carol', keys('never', 500, start));
      // The script on the server and the test here answer exactly the same.
      expect(await onServer.seen('carol', keys('never', 500, start))).toEqual(flags);
      falsePositives += flags.filter(Boolean).length;
    }
    expect(falsePositives / n).toBeLessThanOrEqual(upper(0.01, n));
    // ... and every item of the window is still seen (no false negatives across generations).
    for (let day = 0; day < 30; day++) {
      expect((await seen.seen('carol', keys(`d${day}`, 200))).every(Boolean)).toBe(true);
    }
    expect(falsePositives).toBeGreaterThan(0); // the filters are as small as the rate allows
  });

  it('rotates generations with the clock: seen for 30 days, offered again on day 31', async () => {
    const seen = feed('rotate');
    const items = keys('post', 50);
    const start = clock;
    await seen.markSeen('dave', items);
    const g = seen.generation();
    // The bitmap's TTL ends when its generation leaves the window.
    const pttl = Number(await rawCommand(redis.port, ['PTTL', seen.key('dave', g)]));
    const expected = (g + 30) * DAY - start;
    expect(pttl).toBeLessThanOrEqual(expected);
    expect(pttl).toBeGreaterThan(expected - 10_000);

    clock = (g + 29) * DAY + DAY - 1; // the last ms of the window
    expect(await seen.unseen('dave', items)).toEqual([]);
    clock = (g + 30) * DAY; // the next generation: day g has left the window
    expect(await seen.unseen('dave', items)).toEqual(items);
    await seen.markSeen('dave', items.slice(0, 5));
    expect(await seen.unseen('dave', items)).toEqual(items.slice(5));
    await seen.forget('dave');
    expect(await seen.unseen('dave', items)).toEqual(items);
  });

  it('bounds memory per user, even when a user sees 5x the capacity, with one key per generation', async () => {
    const seen = feed('memory');
    const bytesPerBitmap = Math.ceil(seen.bits / 8);
    expect(seen.memoryPerUser).toBe(30 * bytesPerBitmap);
    for (let day = 0; day < 30; day++) {
      clock += DAY;
      await seen.markSeen('erin', keys(`e${day}`, 1_000)); // 5 x capacity
    }
    let total = 0;
    for (let i = 0; i < 30; i++) {
      const key = seen.key('erin', seen.generation() - i);
      expect(Number(await rawCommand(redis.port, ['STRLEN', key]))).toBeLessThanOrEqual(
        bytesPerBitmap,
      );
      total += Number(await rawCommand(redis.port, ['MEMORY', 'USAGE', key, 'SAMPLES', '0']));
    }
    // Redis adds a small overhead per key (the key name, the expiry, the allocator's rounding).
    expect(total).toBeLessThanOrEqual(seen.memoryPerUser + 30 * 128);
    expect(total).toBeGreaterThanOrEqual(seen.memoryPerUser);

    // 1,000 users who each saw 20 items today: 1,000 keys, not 20,000.
    const users = feed('users');
    const before = Number(await rawCommand(redis.port, ['DBSIZE']));
    await Promise.all(
      Array.from({ length: 1_000 }, (_, u) => users.markSeen(`user${u}`, keys('clip', 20, u))),
    );
    expect(Number(await rawCommand(redis.port, ['DBSIZE'])) - before).toBe(1_000);
  });

  it('never lets two sets or two users share a bitmap, whatever their names hold', async () => {
    // Under the first key scheme both were bk:u:{feed:alice:bob}:g: 0 of 100 new items came back.
    const a = feed('feed');
    const b = feed('feed:alice');
    const items = keys('shared', 100);
    await a.markSeen('alice:bob', items);
    expect(await b.unseen('bob', items)).toEqual(items);
    expect(await a.unseen('alice:bob', items)).toEqual([]);
    const g = a.generation();
    expect(a.key('alice:bob', g)).toBe(`bk:u2:{4:feed:alice:bob}:${g}`);
    expect(b.key('bob', g)).toBe(`bk:u2:{10:feed:alice:bob}:${g}`);
    // Braces in a user stay in that user's own keys; a user's window is still one slot.
    await a.markSeen('x}:1', items.slice(0, 10));
    expect(await a.unseen('x', items.slice(0, 10))).toEqual(items.slice(0, 10));
    expect(await a.unseen('x}:1', items.slice(0, 10))).toEqual([]);
    // A lone surrogate would reach Redis as U+FFFD, the key of another user: refused.
    await expect(a.markSeen('\ud800', items)).rejects.toThrow(
      /^user must be well-formed Unicode .*, got "\\ud800"$/,
    );
    await expect(a.unseen('\udc00x', items)).rejects.toThrow(RangeError);
    expect(await a.unseen('\ufffd', items)).toEqual(items);
  });

  for (const fetchLimit of [undefined, 0]) {
    it(`merges bitmaps of the first key scheme into an empty window (${fetchLimit ?? 'fetch'})`, async () => {
      // Bitmaps as the first scheme kept them, at bk:u:{name:user}:g, with their TTLs.
      const name = `old-${fetchLimit ?? 'fetch'}`;
      const writer = feed(`${name}-writer`);
      const g = writer.generation();
      const items = { alice: keys('a-old', 50), bob: keys('b-old', 50) };
      for (const [user, list] of Object.entries(items)) {
        clock -= 2 * DAY; // two generations ago
        await writer.markSeen(user, list);
        clock += 2 * DAY;
        const old = `bk:u:{${name}:${user}}:${g - 2}`;
        await rawCommand(redis.port, ['COPY', writer.key(user, g - 2), old]); // one server: any slot
        await rawCommand(redis.port, ['PEXPIRE', old, String(28 * DAY)]);
      }
      const opts = { capacity: 200, fpp: 0.01, generations: 30, period: DAY, now, fetchLimit };
      const seen = new RedisSeenSet(client, name, opts);
      // unseen first: the window is empty, the old bitmap is merged, then asked again.
      expect(await seen.unseen('alice', items.alice)).toEqual([]);
      const pttl = Number(await rawCommand(redis.port, ['PTTL', seen.key('alice', g - 2)]));
      expect(pttl).toBeGreaterThan(27 * DAY);
      expect(pttl).toBeLessThanOrEqual(28 * DAY);
      // markSeen first: the new items and the old ones are both in the window.
      const fresh = keys('b-new', 10);
      expect(await seen.markSeen('bob', fresh)).toBe(10);
      expect(await seen.unseen('bob', [...items.bob, ...fresh])).toEqual([]);
      // Without the merge the old items are offered again.
      const ignoring = new RedisSeenSet(client, name, { ...opts, legacyKeys: 'ignore' });
      expect(await ignoring.unseen('carol', items.alice)).toEqual(items.alice);
      expect(
        Number(
          await rawCommand(redis.port, ['EXISTS', `bk:u2:{${name.length}:${name}:alice}:tmp`]),
        ),
      ).toBe(0);
    });
  }

  it('rejects bad arguments by name', async () => {
    expect(() => new RedisSeenSet(client, 'x', { capacity: 0, fpp: 0.01 })).toThrow(
      'options.capacity must be a positive safe integer, got 0',
    );
    expect(() => new RedisSeenSet(client, 'x', { capacity: 10, fpp: 1 })).toThrow(
      'options.fpp must be in (0, 1), got 1',
    );
    expect(() => new RedisSeenSet(client, 'x{', { capacity: 10, fpp: 0.1 })).toThrow(
      /name must not/,
    );
    expect(
      () => new RedisSeenSet(client, 'x', { capacity: 10, fpp: 0.1, now: 5 as never }),
    ).toThrow('options.now must be a function, got 5');
    expect(
      () => new RedisSeenSet(client, 'x', { capacity: 10, fpp: 0.1, legacyKeys: 'y' as never }),
    ).toThrow(`options.legacyKeys must be 'migrate' or 'ignore', got "y"`);
    const seen = feed('bad');
    await expect(seen.unseen('', ['a'])).rejects.toThrow('user must be a non-empty string, got ""');
    await expect(seen.markSeen('u', [5 as never])).rejects.toThrow(TypeError);
  });
});

describe.skipIf(!hasRedis)('RedisSeenSet on a 3-master Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  let client: NodeCluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = nodeCluster(cluster.rootNodes);
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await cluster?.stop();
  });

  it("keeps each user's generations in one slot; both ways of checking work across the nodes", async () => {
    let clock = Date.UTC(2026, 0, 1);
    const now = () => clock;
    const fetched = new RedisSeenSet(client, 'cfeed', { capacity: 100, fpp: 0.01, now });
    const scripted = new RedisSeenSet(client, 'cfeed', {
      capacity: 100,
      fpp: 0.01,
      now,
      fetchLimit: 0,
    });
    const users = Array.from({ length: 40 }, (_, u) => `user${u}`);
    for (let day = 0; day < 3; day++) {
      clock += DAY;
      await Promise.all(users.map((u) => fetched.markSeen(u, keys(`${u}:d${day}`, 30))));
    }
    // The users' bitmaps are spread over every master (and each user's lie in one slot, or the
    // MGET and the script would fail with CROSSSLOT).
    for (const node of cluster.nodes) {
      expect(Number(await rawCommand(node.port, ['DBSIZE']))).toBeGreaterThan(0);
    }
    for (const u of users) {
      const candidates = [...keys(`${u}:d0`, 30), ...keys(`${u}:d2`, 30), ...keys(`${u}:new`, 40)];
      const a = await fetched.unseen(u, candidates);
      expect(await scripted.unseen(u, candidates)).toEqual(a);
      expect(a.every((item) => item.startsWith(`${u}:new`))).toBe(true);
      expect(a.length).toBeGreaterThanOrEqual(36);
    }
  }, 60_000);
});
