/**
 * A remove whose reply is lost when the link is cut: ioredis sends it again after it reconnects
 * (`autoResendUnfulfilledCommands`, on by default), node-redis rejects it. Either way it must be
 * applied at most once (src/redis/once.ts): a key added twice and removed once still answers
 * true. A proxy swallows the server's replies, then cuts every connection; the removes reached
 * the server and were applied before the cut. And a batch cut short by its timeout while it waits
 * for replicas (`replicas: n`) reports its keys unknown, never applied (a failover could lose
 * them).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONCE_LATE, ONCE_WINDOW, once } from '../src/redis/once.js';
import { COUNTING_REMOVE } from '../src/redis/scripts.js';
import {
  KEY_STATUS,
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisCuckooFilter,
  type RedisFilterError,
  RedisFilterTimeoutError,
} from '../src/redis.js';
import { keys } from './support/random.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import { type RedisProxy, startProxy } from './support/redis-proxy.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';

const hasRedis = requireRedis();

const TYPES = [
  ['counting', RedisCountingBloomFilter],
  ['cuckoo', RedisCuckooFilter],
] as const;

describe.skipIf(!hasRedis)('replies that never come: resent removes, waits cut short', () => {
  let server: RedisServerHandle;
  let direct: NodeClient;
  let counter = 0;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedis();
    direct = nodeClient(server.url);
    await direct.connect();
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await direct?.close().catch(() => undefined);
    await server?.stop();
  });

  async function through(proxy: RedisProxy, client: 'ioredis' | 'node-redis') {
    if (client === 'ioredis') {
      const io = new Redis(proxy.port, '127.0.0.1', { retryStrategy: () => 20 });
      io.on('error', () => undefined);
      closers.push(async () => io.disconnect());
      await new Promise((resolve) => io.once('ready', resolve));
      return io;
    }
    const c = nodeClient(proxy.url);
    await c.connect();
    closers.push(() => c.close());
    return c;
  }

  /** Waits (bounded) until the proxy has forwarded `n` more commands than `from`, then a little. */
  async function forwarded(proxy: RedisProxy, from: number, n: number): Promise<void> {
    for (let i = 0; i < 200 && proxy.received() < from + n; i++) await sleep(10);
    expect(proxy.received()).toBeGreaterThanOrEqual(from + n);
    await sleep(100); // the server runs them (a few ms)
  }

  it('the wrapper answers a resend from its marker, refuses one past its deadline, and keeps markers about 30 s', async () => {
    const io = new Redis(server.port, '127.0.0.1');
    closers.push(async () => io.disconnect());
    await new Promise((resolve) => io.once('ready', resolve));
    const name = `resend:${counter++}`;
    const writer = await RedisCountingBloomFilter.create(direct, name, {
      capacity: 100,
      fpp: 0.01,
    });
    await writer.addMany(['a', 'a', 'b', 'b']);
    const f = await RedisCountingBloomFilter.open(io, name);
    expect(await f.remove('a')).toBe(true);
    const markers = (await direct.sendCommand([
      'KEYS',
      `${f.shardKey(0).slice(0, -1)}*:o:*`,
    ])) as string[];
    expect(markers.length).toBe(1);
    const pttl = Number(await direct.sendCommand(['PTTL', markers[0]!]));
    expect(pttl).toBeGreaterThan(ONCE_WINDOW - 5_000);
    expect(pttl).toBeLessThanOrEqual(ONCE_WINDOW + 1_000);
    // The same call sent by hand: a marker that exists answers 1 again, changing nothing.
    const wrapped = once(COUNTING_REMOVE);
    const epoch = f.generation;
    const cells = ['1', '2'];
    const run = (marker: string, deadline: number) =>
      direct.sendCommand([
        'EVAL',
        wrapped.source,
        '2',
        f.shardKey(0),
        marker,
        epoch.id,
        String(epoch.gen),
        ...cells,
        String(deadline),
      ]);
    await direct.sendCommand(['SET', `${f.shardKey(0)}:o:t`, '1', 'PX', '10000']);
    const before = await writer.count('b');
    expect(await run(`${f.shardKey(0)}:o:t`, Date.now() + 10_000)).toBe(1);
    expect(await run(`${f.shardKey(0)}:o:late`, Date.now() - 1_000)).toBe(ONCE_LATE);
    expect(await writer.count('b')).toBe(before);
    expect(await direct.sendCommand(['EXISTS', `${f.shardKey(0)}:o:late`])).toBe(0);
    // An ioredis client that does not resend sends plain removes: no marker.
    const plain = new Redis(server.port, '127.0.0.1', { autoResendUnfulfilledCommands: false });
    closers.push(async () => plain.disconnect());
    await new Promise((resolve) => plain.once('ready', resolve));
    expect(await (await RedisCountingBloomFilter.open(plain, name)).remove('b')).toBe(true);
    const after = (await direct.sendCommand([
      'KEYS',
      `${f.shardKey(0).slice(0, -1)}*:o:*`,
    ])) as string[];
    expect(after.filter((k) => !k.endsWith(':o:t'))).toEqual(markers);
  });

  it('a batch that times out while waiting for replicas calls none of its keys applied', async () => {
    // No replica: WAIT 1 waits its 3 s; the batch's 300 ms timeout fires first. The adds were
    // applied by the primary, but a failover could lose them: not acknowledged.
    const f = await RedisBloomFilter.create(direct, `wait:${counter++}`, {
      capacity: 1000,
      fpp: 0.01,
      replicas: 1,
      replicaTimeout: 3000,
      timeout: 300,
    });
    const err = (await f.addMany(keys('w', 100)).catch((e: unknown) => e)) as RedisFilterError;
    expect(err).toBeInstanceOf(RedisFilterTimeoutError);
    expect(err.batch!.applied).toBe(0); // before: 100 applied, none of them on a replica
    expect([...err.batch!.status].every((s) => s === KEY_STATUS.unknown)).toBe(true);
  });

  for (const client of ['ioredis', 'node-redis'] as const) {
    for (const [type, Filter] of TYPES) {
      it(`${client}, ${type}: single and batch removes, replies lost and the link cut`, async () => {
        const proxy = await startProxy(server.port);
        closers.push(() => proxy.close());
        const name = `resend:${counter++}`;
        const present = keys(`${type}`, 300);
        const writer = await Filter.create(direct, name, { capacity: 2000, fpp: 0.001 });
        await writer.addMany(['x', ...present]);
        await writer.addMany(['x', ...present]); // every key added twice
        const f = await Filter.open(await through(proxy, client), name, { timeout: 5000 });
        // The remove script is cached on the server first: a lost NOSCRIPT reply would prove nothing.
        expect(await f.remove('never added')).toBe(false);

        proxy.swallowReplies();
        let before = proxy.received();
        const one = f.remove('x').then(
          (r) => r,
          (err: unknown) => err,
        );
        await forwarded(proxy, before, 1);
        proxy.cut();
        const single = await one;
        // ioredis resent it and got the first run's reply; node-redis says the link closed.
        if (client === 'ioredis') expect(single).toBe(true);
        else expect(single).toBeInstanceOf(Error);
        expect(await writer.has('x')).toBe(true); // removed once of twice: still present

        await sleep(100); // the client reconnects
        proxy.swallowReplies();
        before = proxy.received();
        const many = f.removeMany(present).then(
          (r) => r,
          (err: unknown) => err,
        );
        await forwarded(proxy, before, present.length);
        proxy.cut();
        const batch = await many;
        if (client === 'ioredis') expect(batch).toEqual(present.map(() => true));
        else expect(batch).toBeInstanceOf(Error);
        // Before once.ts, ioredis resent every remove: 1,024 (counting) and 884 (cuckoo) keys of
        // a larger batch answered false.
        const answers = await writer.hasMany(present);
        expect(answers.filter((a) => !a).length).toBe(0);
      }, 20_000);
    }
  }
});
