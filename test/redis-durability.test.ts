/**
 * The server's persistence, read at create and open (src/redis/durability.ts): a configuration in
 * which a crash loses acknowledged writes (no persistence, RDB snapshots only, AOF without
 * `appendfsync always`), or one that cannot be read (CONFIG renamed away, as managed services
 * do), is refused with `RedisPersistenceError` naming what was found and the opt-in, before
 * anything is written; `durability: 'best-effort'` accepts it and reports it. The seen set checks
 * on its first call. Each server here is a real redis-server started with that configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisPersistenceError,
  RedisScalableBloomFilter,
  RedisSeenSet,
} from '../src/redis.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import {
  type RedisServerHandle,
  rawCommand,
  requireRedis,
  type StartRedisOptions,
  startRedis,
} from './support/redis-server.js';

const hasRedis = requireRedis();

const CASES: [label: string, options: StartRedisOptions, mode: string, message: RegExp][] = [
  [
    'no persistence',
    { appendonly: false },
    'none',
    /has appendonly no, save "": a crash loses every acknowledged add/,
  ],
  [
    'RDB snapshots only',
    { appendonly: false, extraArgs: ['--save', '3600 1'] },
    'rdb',
    /has appendonly no, save "3600 1": a crash loses every add acknowledged since the last snapshot/,
  ],
  [
    'AOF, fsync every second',
    { appendfsync: 'everysec' },
    'aof-everysec',
    /has appendonly yes, appendfsync everysec: a crash loses up to about the last second/,
  ],
  [
    'CONFIG renamed away',
    { appendonly: false, extraArgs: ['--rename-command', 'CONFIG', ''] },
    'unknown',
    /could not verify the persistence of the server \(CONFIG GET failed: .*unknown command/,
  ],
];

describe.skipIf(!hasRedis)('Redis filters check the server persistence', () => {
  const servers: RedisServerHandle[] = [];
  const clients: NodeClient[] = [];

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
  });

  const started = new Map<string, Promise<{ server: RedisServerHandle; client: NodeClient }>>();
  beforeAll(() => {
    for (const [label, options] of CASES) {
      started.set(
        label,
        startRedis(options).then(async (server) => {
          servers.push(server);
          const client = nodeClient(server.url);
          await client.connect();
          clients.push(client);
          return { server, client };
        }),
      );
    }
  });

  for (const [label, , mode, message] of CASES) {
    it(`${label}: refused unless durability: 'best-effort' (then reported as ${mode})`, async () => {
      const { server, client } = (await started.get(label))!;
      const opts = { capacity: 1000, fpp: 0.01 };
      const refused = await RedisBloomFilter.create(client, 'p', opts).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RedisPersistenceError);
      expect((refused as Error).message).toMatch(message);
      expect((refused as Error).message).toMatch(
        /Configure appendonly yes and appendfsync always, or pass durability: 'best-effort' to accept it$/,
      );
      await expect(RedisScalableBloomFilter.create(client, 's', opts)).rejects.toBeInstanceOf(
        RedisPersistenceError,
      );
      expect(Number(await rawCommand(server.port, ['DBSIZE']))).toBe(0); // nothing written
      const f = await RedisCountingBloomFilter.create(client, 'p', {
        ...opts,
        durability: 'best-effort',
      });
      expect(f.persistence?.mode).toBe(mode);
      await f.add('x');
      await expect(RedisCountingBloomFilter.open(client, 'p')).rejects.toBeInstanceOf(
        RedisPersistenceError,
      );
      const g = await RedisCountingBloomFilter.open(client, 'p', { durability: 'best-effort' });
      expect(await g.has('x')).toBe(true);

      const seen = new RedisSeenSet(client, 'feed', { capacity: 100, fpp: 0.01 });
      await expect(seen.markSeen('u', ['a'])).rejects.toBeInstanceOf(RedisPersistenceError);
      await expect(seen.unseen('u', ['a'])).rejects.toBeInstanceOf(RedisPersistenceError);
      const lax = new RedisSeenSet(client, 'feed', {
        capacity: 100,
        fpp: 0.01,
        durability: 'best-effort',
      });
      await lax.markSeen('u', ['a']);
      expect(lax.persistence?.mode).toBe(mode);
      expect(await lax.unseen('u', ['a', 'b'])).toEqual(['b']);
    });
  }

  it('AOF with fsync always is accepted by default; a bad durability option is a RangeError', async () => {
    const server = await startRedis();
    servers.push(server);
    const client = nodeClient(server.url);
    await client.connect();
    clients.push(client);
    const f = await RedisBloomFilter.create(client, 'ok', { capacity: 100, fpp: 0.01 });
    expect(f.persistence).toEqual({
      mode: 'aof-always',
      detail: 'appendonly yes, appendfsync always',
    });
    await expect(
      RedisBloomFilter.open(client, 'ok', { durability: 'fsync' as never }),
    ).rejects.toThrow(/^durability must be 'strict' or 'best-effort', got "fsync"$/);
  });
});
