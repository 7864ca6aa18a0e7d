/**
 * RedisBloomFilter through failovers on a real cluster with a replica (3 masters, one replica of
 * master 0, cluster-node-timeout 0.5 s), through node-redis' cluster client, adding keys all along
 * (a filter of 24 shards, several of them on master 0):
 *
 * - A manual failover (CLUSTER FAILOVER on the replica: the master stops taking writes, the
 *   replica catches up with it, then takes over): no acknowledged add is lost, and every add that
 *   failed failed with a RedisFilterError.
 * - A master killed (SIGKILL) and its replica promoted by the cluster. Redis replicates
 *   asynchronously, so writes the master acknowledged but had not yet sent to the replica are
 *   gone, and neither Redis nor the filter can tell: those keys are answered absent afterwards,
 *   with no error (the limit stated in the README). The test makes that window certain (the
 *   replica stopped with SIGSTOP and its link dropped before the kill) and checks that every add
 *   is acknowledged or rejected with a RedisFilterError (none hangs), that every add acknowledged
 *   before the replica had caught up stays present, and that only adds of the window are lost.
 *   node-redis moves the dead master's slots to the new master only on a MOVED reply: until the
 *   killed node is back (as a replica, answering MOVED) adds to those shards fail.
 * - The same kill with `replicas: 1` (WAIT), adding in batches of 16 (the kill lands mid-batch):
 *   every add acknowledged, or reported applied by a failed batch, survives; those the replica
 *   could not confirm were refused (RedisFilterReplicationError).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardKey } from '../src/redis/keys.js';
import {
  KEY_STATUS,
  RedisBloomFilter,
  RedisFilterError,
  RedisFilterReplicationError,
} from '../src/redis.js';
import { type NodeCluster, nodeCluster } from './support/redis-clients.js';
import { type RedisClusterHandle, startRedisCluster } from './support/redis-cluster-server.js';
import { type RedisServerHandle, rawCommand, requireRedis } from './support/redis-server.js';

const hasRedis = requireRedis();

/**
 * Adds `prefix:0`, `prefix:1`, ... with `lanes` adds in flight until stopped. Four by default:
 * adds are in flight through every switch; more lanes only add adds (and CPU) while the cluster
 * takes its time to switch (seconds, after a kill).
 */
class Writer {
  readonly acked: string[] = [];
  readonly failed: { key: string; err: unknown }[] = [];
  #next = 0;
  #stopped = false;
  readonly done: Promise<void>;

  constructor(f: RedisBloomFilter, prefix: string, lanes = 4, batch = 1) {
    const lane = async (): Promise<void> => {
      while (!this.#stopped) {
        if (batch > 1) {
          // A batch (addMany): acknowledged when it resolves; when it fails, the keys its error
          // reports applied count as acknowledged too (a retry would skip them).
          const keys = Array.from({ length: batch }, () => `${prefix}:${this.#next++}`);
          try {
            await f.addMany(keys);
            this.acked.push(...keys);
          } catch (err) {
            const status = (err as RedisFilterError).batch?.status;
            keys.forEach((key, i) => {
              if (status?.[i] === KEY_STATUS.applied) this.acked.push(key);
              else this.failed.push({ key, err });
            });
            await sleep(10);
          }
          continue;
        }
        const key = `${prefix}:${this.#next++}`;
        try {
          await f.add(key);
          this.acked.push(key);
        } catch (err) {
          this.failed.push({ key, err });
          await sleep(10); // a dead node fails at once: do not spin
        }
      }
    };
    this.done = Promise.all(Array.from({ length: lanes }, lane)).then(() => undefined);
  }

  /** Resolves once at least `n` more adds were acknowledged. */
  async more(n: number, timeoutMs = 5_000): Promise<void> {
    const target = this.acked.length + n;
    const deadline = Date.now() + timeoutMs;
    while (this.acked.length < target) {
      if (Date.now() > deadline)
        throw new Error(`no ${n} more acknowledged adds in ${timeoutMs} ms`);
      await sleep(5);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.done;
  }
}

/** `fn()`, retried every 50 ms while it rejects, for at most `timeoutMs`. */
async function retry<T>(fn: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}

function infoField(info: unknown, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(String(info))?.[1]?.trim();
}

async function replication(s: RedisServerHandle): Promise<unknown> {
  return rawCommand(s.port, ['INFO', 'replication']);
}

/** Polls until `s` reports role `role` (and, for a replica, its master link up). */
async function waitRole(s: RedisServerHandle, role: 'master' | 'slave', timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await replication(s).catch(() => '');
    if (
      infoField(info, 'role') === role &&
      (role === 'master' || infoField(info, 'master_link_status') === 'up')
    ) {
      return;
    }
    if (Date.now() > deadline) throw new Error(`${s.port} is not ${role} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Waits until replica `r` has received everything its master `m` had when this was called. */
async function caughtUp(m: RedisServerHandle, r: RedisServerHandle): Promise<void> {
  const target = Number(infoField(await replication(m), 'master_repl_offset'));
  const deadline = Date.now() + 5_000;
  for (;;) {
    const at = Number(infoField(await replication(r), 'slave_repl_offset'));
    if (at >= target) return;
    if (Date.now() > deadline) throw new Error(`replica at offset ${at}, master at ${target}`);
    await sleep(5);
  }
}

describe.skipIf(!hasRedis)('RedisBloomFilter through a cluster failover', () => {
  let cluster: RedisClusterHandle;
  let client: NodeCluster;
  let f: RedisBloomFilter;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: [1], nodeTimeoutMs: 500 });
    client = nodeCluster(cluster.rootNodes, 50);
    await client.connect();
    f = await RedisBloomFilter.create(client, 'failover', {
      capacity: 20_000,
      fpp: 0.01,
      shardBits: 8192,
      timeout: 2_000,
    });
  });

  afterAll(async () => {
    client?.destroy();
    await cluster?.stop();
  });

  const typed = (w: Writer) =>
    w.failed.filter(({ err }) => !(err instanceof RedisFilterError)).map(({ err }) => String(err));

  it('manual failover: no acknowledged add lost, every failure a RedisFilterError', async () => {
    const [m0, r0] = [cluster.servers[0]!, cluster.servers[3]!];
    const slots = await Promise.all(
      Array.from({ length: f.shards }, (_, i) =>
        rawCommand(m0.port, ['CLUSTER', 'KEYSLOT', f.shardKey(i)]),
      ),
    );
    expect(slots.filter((slot) => Number(slot) < 16_384 / 3).length).toBeGreaterThan(3);
    const w = new Writer(f, 'manual');
    await w.more(500);
    const t0 = performance.now();
    expect(await rawCommand(r0.port, ['CLUSTER', 'FAILOVER'])).toBe('OK');
    await waitRole(r0, 'master');
    const switched = performance.now() - t0;
    const before = w.acked.length;
    await w.more(500); // the client follows the new master (MOVED)
    await w.stop();
    await waitRole(m0, 'slave');
    console.log(
      `manual failover in ${switched.toFixed(0)} ms: ${w.acked.length} adds acknowledged (${before} by the switch), ${w.failed.length} failed`,
    );
    expect(typed(w)).toEqual([]);
    const answers = await f.hasMany(w.acked);
    expect(w.acked.filter((_, i) => !answers[i])).toEqual([]);
  });

  it('master killed: acknowledged adds the replica had are kept, later ones may be lost silently', async () => {
    const [a, b] = [cluster.servers[0]!, cluster.servers[3]!];
    const [m, r] = infoField(await replication(a), 'role') === 'master' ? [a, b] : [b, a];
    const w = new Writer(f, 'kill');
    await w.more(500);
    const replicated = w.acked.length;
    await caughtUp(m, r);
    // The replica stops, and the master drops its link: acknowledged writes are not sent on.
    process.kill(r.pid, 'SIGSTOP');
    try {
      expect(await rawCommand(m.port, ['CLIENT', 'KILL', 'TYPE', 'replica'])).toBe(1);
      await w.more(500);
      await m.kill();
    } finally {
      process.kill(r.pid, 'SIGCONT');
    }
    const failedAtKill = w.failed.length;
    const t0 = performance.now();
    await waitRole(r, 'master');
    const promoted = performance.now() - t0;
    const lagging = w.acked.length; // every reply of the dead master has been read by now
    // node-redis moves a slot to its new master only on a MOVED reply: until then the adds to the
    // dead master's shards fail (RedisFilterError), none is acknowledged and lost.
    await w.more(200);
    expect(w.failed.length).toBeGreaterThan(failedAtKill);
    // The killed node comes back as a replica of the promoted one and answers MOVED.
    await m.restart();
    await waitRole(m, 'slave');
    const recovered = w.failed.length;
    const t1 = performance.now();
    await w.more(300);
    await w.stop();
    // A caller retries what failed: once node-redis has been redirected, every shard answers.
    const answers = await retry(() => f.hasMany(w.acked));
    const back = performance.now() - t1;
    const missing = new Set(w.acked.flatMap((_, i) => (answers[i] ? [] : [i])));
    console.log(
      `kill -9: promoted after ${promoted.toFixed(0)} ms; ${w.acked.length} adds acknowledged, ${recovered} failed (${w.failed.length - recovered} after the restart, all shards answering ${back.toFixed(0)} ms after it); ${missing.size} acknowledged adds answered absent, all acknowledged between the replica's last catch-up and the promotion (${replicated}..${lagging})`,
    );
    expect(typed(w)).toEqual([]);
    // Lost: only adds acknowledged after the replica had caught up, before the kill; some were.
    for (const i of missing) expect(i >= replicated && i < lagging, `add ${i}`).toBe(true);
    expect(missing.size).toBeGreaterThan(0);
  });

  it('master killed, with replicas: 1: every acknowledged add survives; the unreplicated ones were refused', async () => {
    const [a, b] = [cluster.servers[0]!, cluster.servers[3]!];
    const [m, r] = infoField(await replication(a), 'role') === 'master' ? [a, b] : [b, a];
    await waitRole(r, 'slave');
    // A one-shard filter on the master with the replica (slots 0-5460), which must confirm
    // every window of adds within 300 ms.
    let g: RedisBloomFilter | undefined;
    for (let i = 0; g === undefined; i++) {
      const name = `replicated-${i}`;
      const probe = shardKey('b', name, 0);
      if (Number(await rawCommand(m.port, ['CLUSTER', 'KEYSLOT', probe])) >= 16_384 / 3) continue;
      g = await retry(() =>
        RedisBloomFilter.create(client, name, {
          capacity: 5_000,
          fpp: 0.01,
          shardBits: 2 ** 16,
          timeout: 2_000,
          replicas: 1,
          replicaTimeout: 300,
        }),
      );
    }
    expect(g.shards).toBe(1);
    const w = new Writer(g, 'safe', 4, 16); // batches of 16: the kill lands mid-batch
    await w.more(300);
    const confirmed = w.acked.length;
    process.kill(r.pid, 'SIGSTOP');
    try {
      expect(await rawCommand(m.port, ['CLIENT', 'KILL', 'TYPE', 'replica'])).toBe(1);
      // The replica is gone: every add is applied by the master and refused for want of a replica.
      const failedBefore = w.failed.length;
      const deadline = Date.now() + 5_000;
      while (w.failed.length < failedBefore + 8 && Date.now() < deadline) await sleep(20);
      await m.kill();
    } finally {
      process.kill(r.pid, 'SIGCONT');
    }
    await waitRole(r, 'master');
    await m.restart();
    await waitRole(m, 'slave');
    await w.more(100);
    await w.stop();
    const refused = w.failed.filter(({ err }) => err instanceof RedisFilterReplicationError);
    console.log(
      `kill -9 with replicas: 1: ${w.acked.length} adds acknowledged (${confirmed} before the replica stopped), ${refused.length} refused as unreplicated, ${w.failed.length - refused.length} failed otherwise`,
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(typed(w)).toEqual([]);
    const answers = await retry(() => g.hasMany(w.acked));
    expect(w.acked.filter((_, i) => !answers[i])).toEqual([]);
  });
});
