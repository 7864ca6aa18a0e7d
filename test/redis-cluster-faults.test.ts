/**
 * The Redis filters on a real 3-master Redis Cluster under faults the failover test does not
 * cover (test/redis-failover.test.ts kills a master): slots migrated (CLUSTER SETSLOT MIGRATING /
 * IMPORTING, MIGRATE one key at a time, clients redirected with ASK, then MOVED) while batches
 * of adds and removes are written, and a master frozen (SIGSTOP) mid-batch. Through node-redis'
 * and ioredis' cluster clients. Every key a call acknowledged (or a failed batch reported
 * `applied`) must answer true afterwards, and every failure must be a RedisFilterError: nothing
 * lost silently, nothing hung past the filter's timeout. And the persistence check asks every
 * master. (What this found: node-redis passes TRYAGAIN on, which a scalable shard's script meets
 * while its bitmap and count hash sit on two nodes mid-migration: the adds failed; the store now
 * resends such calls, as ioredis does.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster as IoCluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layerShardKey } from '../src/redis/keys.js';
import {
  KEY_STATUS,
  RedisBloomFilter,
  RedisCountingBloomFilter,
  RedisFilterError,
  RedisFilterTimeoutError,
  RedisScalableBloomFilter,
} from '../src/redis.js';
import { keys } from './support/random.js';
import { type NodeCluster, nodeCluster } from './support/redis-clients.js';
import { type RedisClusterHandle, startRedisCluster } from './support/redis-cluster-server.js';
import { rawCommand, requireRedis } from './support/redis-server.js';

const hasRedis = requireRedis();

function ioCluster(nodes: readonly { host: string; port: number }[]) {
  const io = new IoCluster([...nodes], { redisOptions: { maxRetriesPerRequest: 2 } });
  io.on('error', () => undefined);
  return io;
}

type AnyFilter = {
  addMany(keys: string[]): Promise<number>;
  hasMany(keys: string[]): Promise<boolean[]>;
};

/**
 * Writes batches of `size` keys `prefix:i` until stopped; `acked` holds every key a batch
 * acknowledged or a failed batch reported applied, `failed` the errors.
 */
class BatchWriter {
  readonly acked: string[] = [];
  readonly failed: unknown[] = [];
  #stopped = false;
  #next = 0;
  readonly done: Promise<void>;

  constructor(f: AnyFilter, prefix: string, size = 64) {
    this.done = (async () => {
      while (!this.#stopped) {
        const batch = Array.from({ length: size }, () => `${prefix}:${this.#next++}`);
        try {
          await f.addMany(batch);
          this.acked.push(...batch);
          await sleep(20); // paced: the migration's commands get their turn on this 2-core machine
        } catch (err) {
          this.failed.push(err);
          const status = (err as RedisFilterError).batch?.status;
          batch.forEach((k, i) => {
            if (status?.[i] === KEY_STATUS.applied) this.acked.push(k);
          });
          await sleep(10);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.done;
  }
}

describe.skipIf(!hasRedis)('Redis filters on a cluster under faults', () => {
  let cluster: RedisClusterHandle;
  let node: NodeCluster;
  let io: ReturnType<typeof ioCluster>;
  let counter = 0;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    node = nodeCluster(cluster.rootNodes, 50);
    await node.connect();
    io = ioCluster(cluster.nodes);
  }, 60_000);

  afterAll(async () => {
    await node?.close().catch(() => undefined);
    io?.disconnect();
    await cluster?.stop();
  });

  /** The master (index) that owns `slot` now, from CLUSTER SLOTS. */
  async function owner(slot: number): Promise<number> {
    const ranges = (await rawCommand(cluster.servers[0]!.port, ['CLUSTER', 'SLOTS'])) as [
      number,
      number,
      [string, number, string],
    ][];
    const range = ranges.find(([from, to]) => from <= slot && slot <= to)!;
    return cluster.ids.indexOf(range[2][2]);
  }

  /** Moves `slot` to the next master, one key at a time with pauses (writes keep coming). */
  async function migrate(slot: number): Promise<void> {
    const from = await owner(slot);
    const to = (from + 1) % 3;
    const [src, dst] = [cluster.servers[from]!, cluster.servers[to]!];
    const s = String(slot);
    await rawCommand(dst.port, ['CLUSTER', 'SETSLOT', s, 'IMPORTING', cluster.ids[from]!]);
    await rawCommand(src.port, ['CLUSTER', 'SETSLOT', s, 'MIGRATING', cluster.ids[to]!]);
    for (let i = 0; i < 100; i++) {
      const left = (await rawCommand(src.port, ['CLUSTER', 'GETKEYSINSLOT', s, '1'])) as string[];
      if (left.length === 0) break;
      await rawCommand(src.port, [
        'MIGRATE',
        '127.0.0.1',
        String(dst.port),
        '',
        '0',
        '5000',
        'KEYS',
        ...left,
      ]);
      await sleep(60); // a scalable shard's bitmap and count hash on two nodes meanwhile
    }
    for (const i of [to, from, 3 - from - to]) {
      await rawCommand(cluster.servers[i]!.port, [
        'CLUSTER',
        'SETSLOT',
        s,
        'NODE',
        cluster.ids[to]!,
      ]);
    }
  }

  const typed = (failed: unknown[]) =>
    failed.filter((err) => !(err instanceof RedisFilterError)).map(String);

  for (const via of ['node-redis', 'ioredis'] as const) {
    it(`${via}: slots migrated under batches of adds and removes: nothing acknowledged lost`, async () => {
      const client = via === 'node-redis' ? node : io;
      const opts = { capacity: 4_000, fpp: 0.01, shardBits: 4096, timeout: 3_000 };
      const name = (t: string) => `mig:${via}:${t}:${counter++}`;
      const filters = [
        await RedisBloomFilter.create(client, name('b'), opts),
        await RedisCountingBloomFilter.create(client, name('c'), opts),
        await RedisScalableBloomFilter.create(client, name('s'), opts),
      ];
      // Counting removes during the move: keys added twice, removed once, must stay present.
      const counting = filters[1] as RedisCountingBloomFilter<string>;
      const twice = keys(`twice-${via}`, 300);
      await counting.addMany(twice);
      await counting.addMany(twice);
      const writers = filters.map((f, i) => new BatchWriter(f as AnyFilter, `w${i}`));
      // Removes in paced batches all through the move; each key removed once.
      let moving = true;
      const removeFailures: unknown[] = [];
      const removing = (async () => {
        for (let i = 0; i < twice.length; i += 20) {
          await counting
            .removeMany(twice.slice(i, i + 20))
            .catch((e: unknown) => removeFailures.push(e));
          if (moving) await sleep(20);
        }
      })();
      const slots = new Set<number>();
      for (const f of filters.slice(0, 2) as RedisBloomFilter[]) {
        for (let i = 0; i < 2; i++) {
          slots.add(
            Number(
              await rawCommand(cluster.servers[0]!.port, ['CLUSTER', 'KEYSLOT', f.shardKey(i)]),
            ),
          );
        }
      }
      const scalable = filters[2] as RedisScalableBloomFilter;
      for (const [l, layer] of (await scalable.info()).entries()) {
        for (let i = 0; i < Math.min(2, layer.shards); i++) {
          const key = layerShardKey(scalable.name, l, i);
          slots.add(
            Number(await rawCommand(cluster.servers[0]!.port, ['CLUSTER', 'KEYSLOT', key])),
          );
        }
      }
      // Every writer under way (bounded) before the first slot moves.
      for (let i = 0; i < 500 && writers.some((w) => w.acked.length === 0); i++) await sleep(20);
      const t0 = performance.now();
      for (const slot of slots) await migrate(slot);
      const moved = performance.now() - t0;
      moving = false;
      await Promise.all(writers.map((w) => w.stop()));
      console.log(
        `${via}: ${slots.size} slots moved in ${moved.toFixed(0)} ms; ${removeFailures.length} remove batches failed; acked ${writers.map((w) => w.acked.length)}, failed ${writers.map((w) => w.failed.length)} (${[...new Set(writers.flatMap((w) => w.failed.map((e) => String(e).slice(0, 160))))].slice(0, 4).join(' | ')})`,
      );
      await removing;
      for (const [i, w] of writers.entries()) {
        expect(w.acked.length, `filter ${i}`).toBeGreaterThanOrEqual(128); // two batches at least
        // node-redis passes TRYAGAIN on (a script's keys on two nodes): the store resends it.
        expect(w.failed.map(String)).toEqual([]);
        const answers = await filters[i]!.hasMany(w.acked as never[]);
        expect(
          w.acked.filter((_, j) => !answers[j]),
          `filter ${i}`,
        ).toEqual([]);
      }
      expect(typed(removeFailures)).toEqual([]);
      expect((await counting.hasMany(twice)).every(Boolean)).toBe(true);
    }, 60_000);
  }

  it("reads every master's persistence (CONFIG GET per node): one weak master is refused", async () => {
    const weak = cluster.servers[2]!;
    await rawCommand(weak.port, ['CONFIG', 'SET', 'appendfsync', 'everysec']);
    try {
      for (const client of [node, io]) {
        await expect(
          RedisBloomFilter.create(client, `weak:${counter++}`, { capacity: 100, fpp: 0.01 }),
        ).rejects.toThrow(
          /: a master of 3 has appendonly yes, appendfsync everysec: a crash loses up to about the last second/,
        );
        const f = await RedisBloomFilter.create(client, `weak:${counter++}`, {
          capacity: 100,
          fpp: 0.01,
          durability: 'best-effort',
        });
        expect(f.persistence?.mode).toBe('aof-everysec');
      }
    } finally {
      await rawCommand(weak.port, ['CONFIG', 'SET', 'appendfsync', 'always']);
    }
    const f = await RedisBloomFilter.create(io, `strong:${counter++}`, {
      capacity: 100,
      fpp: 0.01,
    });
    expect(f.persistence?.mode).toBe('aof-always');
  });

  it('a master frozen (SIGSTOP) mid-batch: a timeout within the bound; nothing acknowledged lost', async () => {
    const name = `frozen:${counter++}`;
    // `patient` (the default 10 s) before and after the freeze; `f` bounds the frozen batch.
    const patient = await RedisBloomFilter.create(node, name, {
      capacity: 20_000,
      fpp: 0.01,
      shardBits: 8192,
    });
    const f = await RedisBloomFilter.open(node, name, { timeout: 400 });
    const before = keys('before', 2_000);
    await patient.addMany(before);
    const frozen = cluster.servers[1]!;
    process.kill(frozen.pid, 'SIGSTOP');
    let failure: unknown;
    const t0 = performance.now();
    const during = keys('during', 4_000);
    try {
      failure = await f.addMany(during).then(
        () => undefined,
        (err: unknown) => err,
      );
    } finally {
      setTimeout(() => process.kill(frozen.pid, 'SIGCONT'), 300);
    }
    const took = performance.now() - t0;
    expect(failure).toBeInstanceOf(RedisFilterTimeoutError);
    expect(took).toBeLessThan(5_000); // 400 ms, and a loaded 2-core machine's delays
    // A window is answered when all its shards are: the frozen master's hold every window, so
    // the batch stops after the first windows in flight, their keys unknown (none applied yet).
    const outcome = (failure as RedisFilterError).batch!;
    expect(outcome.seen).toBeLessThan(during.length);
    const applied = during.filter((_, i) => outcome.status[i] === KEY_STATUS.applied);
    await sleep(400); // thawed (well within cluster-node-timeout: no failover)
    const acked = [...before, ...applied];
    const answers = await patient.hasMany(acked);
    expect(acked.filter((_, i) => !answers[i])).toEqual([]);
    expect(await patient.addMany(keys('after', 500))).toBeGreaterThan(490);
  }, 30_000);
});
