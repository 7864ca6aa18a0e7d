import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilterFullError } from '../src/index.js';
import { altBucket, CUCKOO_MIN_FPP, RedisCuckooFilter } from '../src/redis.js';
import { murmur3BigInt } from './support/murmur3-bigint.js';
import { keys } from './support/random.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import {
  type RedisServerHandle,
  rawCommand,
  requireRedis,
  startRedis,
} from './support/redis-server.js';

const hasRedis = requireRedis();

describe.skipIf(!hasRedis)('RedisCuckooFilter', () => {
  let server: RedisServerHandle;
  let client: NodeClient;
  let counter = 0;
  const fresh = (): string => `cuckoo:${counter++}`;

  beforeAll(async () => {
    server = await startRedis();
    client = nodeClient(server.url);
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  // Its conformance cells (node-redis and ioredis, standalone and cluster) run through
  // test/support/redis-adapters.ts.

  it('stores fingerprint f of a key in bucket i1 or i2 = i1 XOR (f·0x5bd1e995 mod 2^32 mod nb)', async () => {
    const f = await RedisCuckooFilter.create(client, fresh(), { capacity: 1000, fpp: 0.001 });
    expect(f.shards).toBe(1);
    expect(f.buckets).toBe(512); // ⌈(1000 + 4·√1000) / 3.8⌉ = 297 buckets, to a power of two
    for (const key of ['a', 'b', 'hello']) {
      await f.add(key);
      const [h1, h2] = murmur3BigInt(new TextEncoder().encode(key));
      const fp = Number((h2 & 0xffffffffn) % 65535n) + 1;
      const i1 = Number(h1 & 0xffffffffn) % 512;
      const i2 = altBucket(i1, fp, 512);
      expect(altBucket(i2, fp, 512)).toBe(i1);
      const args = [i1, i2].flatMap((b) =>
        [0, 1, 2, 3].flatMap((s) => ['GET', 'u16', `#${4 + 4 * b + s}`]),
      );
      const slots = (await rawCommand(server.port, [
        'BITFIELD',
        f.shardKey(0),
        ...args,
      ])) as number[];
      expect(slots.filter((v) => v === fp).length).toBe(1);
    }
    await expect(
      RedisCuckooFilter.create(client, fresh(), { capacity: 10, fpp: CUCKOO_MIN_FPP / 2 }),
    ).rejects.toThrow(/fpp must be at least 0.000122/);
  });

  it('when full, rejects the add and loses nothing: every move of the kick chain is undone', async () => {
    const f = await RedisCuckooFilter.create(client, fresh(), { capacity: 100, fpp: 0.01 });
    const slots = f.shards * f.buckets * 4;
    expect(slots).toBe(256); // one shard of 64 buckets (the least)
    const acked: string[] = [];
    let full = 0;
    // Until 20 adds were refused (each one undoes a full kick chain in the script).
    for (const key of keys('fill', 2 * slots)) {
      if (full === 20) break;
      try {
        await f.add(key);
        acked.push(key);
      } catch (err) {
        expect(err).toBeInstanceOf(FilterFullError);
        full++;
      }
    }
    console.log(
      `cuckoo: ${acked.length} of 256 slots filled before the first of ${full} full adds`,
    );
    expect(full).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(0.9 * 256);
    expect(await f.estimatedCount()).toBe(acked.length); // one slot per acknowledged add
    expect((await f.hasMany(acked)).every(Boolean)).toBe(true);
    // Deletes free room again.
    expect((await f.removeMany(acked.slice(0, 50))).every(Boolean)).toBe(true);
    expect(await f.estimatedCount()).toBe(acked.length - 50);
    expect((await f.hasMany(acked.slice(50))).every(Boolean)).toBe(true);
    expect(await f.add('room again')).toBe(true);
  });

  it('counts duplicates: a key added twice is removed twice, then absent', async () => {
    const f = await RedisCuckooFilter.create(client, fresh(), { capacity: 1000, fpp: 0.01 });
    expect(await f.add('dup')).toBe(true);
    expect(await f.add('dup')).toBe(false);
    expect(await f.remove('dup')).toBe(true);
    expect(await f.has('dup')).toBe(true);
    expect(await f.remove('dup')).toBe(true);
    expect(await f.has('dup')).toBe(false);
    expect(await f.remove('dup')).toBe(false);
  });
});
