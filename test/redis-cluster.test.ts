/**
 * The Redis filters on a real 3-master Redis Cluster (test/support/redis-cluster-server.ts): the
 * shared conformance suite through node-redis and ioredis,
 * shards spread over every node,
 * batches pipelined per node (server counters), and the Lua scripts (TTL, remove, growth) running
 * where their keys live.
 */
import { Cluster as IoCluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBloomFilter, RedisCountingBloomFilter, RedisCuckooFilter } from '../src/redis.js';
import { keys } from './support/random.js';
import { runRedisConformance } from './support/redis-adapters.js';
import { type NodeCluster, nodeCluster } from './support/redis-clients.js';
import { type RedisClusterHandle, startRedisCluster } from './support/redis-cluster-server.js';
import {
  commandCalls,
  rawCommand,
  rawCommands,
  requireRedis,
  serverStats,
} from './support/redis-server.js';
import { groupedCommands } from './support/windows.js';

const hasRedis = requireRedis();
type Cluster = NodeCluster;

/**
 * The ioredis cluster client. `io` has the type this infers: declared `IoCluster`, tsc compares
 * two instantiations of ioredis' class to assign it (seconds of type checking).
 */
const ioCluster = (nodes: { host: string; port: number }[]) =>
  new IoCluster(nodes, { enableOfflineQueue: false, enableAutoPipelining: true });

describe.skipIf(!hasRedis)('Redis filters on a 3-master cluster', () => {
  let cluster: RedisClusterHandle;
  let client: Cluster;
  let io: ReturnType<typeof ioCluster>;
  let counter = 0;
  const fresh = (): string => `cluster:${counter++}`;

  const connect = async (rootNodes: { url: string }[]): Promise<Cluster> => {
    const c = nodeCluster(rootNodes);
    await c.connect();
    return c;
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = await connect([...cluster.rootNodes]);
    // Auto-pipelined, as node-redis always is: the commands of one tick go to each node in one
    // write, instead of one write (and one server read) per command. Binary replies (GETRANGE of
    // an export) go through ioredis's per-command Buffer methods: its `callBuffer` loses the
    // command name in an auto-pipeline ("ERR unknown command 'bk:b:{...}'"), which this
    // configuration would show.
    io = ioCluster(cluster.nodes);
    await new Promise<void>((resolve, reject) => {
      io.once('ready', resolve);
      io.once('error', reject);
    });
    io.on('error', () => undefined);
  });

  afterAll(async () => {
    await client?.close();
    io?.disconnect();
    await cluster?.stop();
  });

  // What a cluster adds to the standalone runs (test/redis-conformance.test.ts) is
  // routing: each shard's commands reach the node of its slot. The rates are those of the same
  // bytes (a command sent to the wrong node fails, or finds no shard: errors and false negatives,
  // checked for every key), so both clients' runs take 500 keys with quarter-size shards, as the
  // standalone second client does: as many shards (and layers) per filter as at 2,000 keys with
  // 8192-bit ones (the cuckoo filter's 4,096-bit shards, its smallest: 3), spread over the nodes,
  // and the suite's 4,000 absent probes.
  const atScale = { fresh, scale: 500, shardBits: 2048 };
  runRedisConformance({ name: 'cluster', client: () => client, ...atScale });
  runRedisConformance({ name: 'cluster, ioredis', client: () => io, ...atScale });

  it('ioredis and node-redis clients share one filter; a clear by one is seen by the other', async () => {
    const name = fresh();
    const viaIo = await RedisBloomFilter.create(io, name, {
      capacity: 20_000,
      fpp: 0.01,
      shardBits: 8192,
    });
    const viaNode = await RedisBloomFilter.open(client, name);
    // 2,000 keys reach every one of the 24 shards (about 80 each).
    await viaIo.addMany(keys('io', 2000));
    expect((await viaNode.hasMany(keys('io', 2000))).every(Boolean)).toBe(true);
    await viaNode.clear();
    expect(await viaIo.addMany(keys('late', 1000))).toBeGreaterThan(995);
    // A clear that node-redis' object did not reach would leave all 2,000 answering true; at 5%
    // of its capacity the filter's rate is far below the 4% allowed.
    expect((await viaNode.hasMany(keys('late', 1000))).every(Boolean)).toBe(true);
    expect((await viaNode.hasMany(keys('io', 2000))).filter(Boolean).length).toBeLessThan(80);
  });

  it('spreads the shards over every node and slot, and any client finds the metadata', async () => {
    const name = fresh();
    const f = await RedisBloomFilter.create(client, name, {
      capacity: 25_000,
      fpp: 0.01,
      shardBits: 4096,
    });
    expect(f.shards).toBe(59);
    // Every shard exists from create on; 2,000 keys reach every one of them (about 34 each).
    await f.addMany(keys('k', 2_000));
    const slots = new Set(
      (await rawCommands(
        cluster.nodes[0]!.port,
        Array.from({ length: f.shards }, (_, i) => ['CLUSTER', 'KEYSLOT', f.shardKey(i)]),
      )) as number[],
    );
    expect(slots.size).toBeGreaterThan(55); // 59 tags, nearly all in different slots
    const perNode = await Promise.all(
      cluster.nodes.map(
        async (n) => ((await rawCommand(n.port, ['KEYS', `bk:b:{${name}:*`])) as string[]).length,
      ),
    );
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(59);
    for (const count of perNode) expect(count).toBeGreaterThan(5);
    // A second cluster client that only knows one (other) node opens it and sees the same keys.
    const lone = await connect([cluster.rootNodes[2]!]);
    try {
      const g = await RedisBloomFilter.open(lone, name);
      expect(g.shape).toEqual(f.shape);
      expect((await g.hasMany(keys('k', 2_000))).every(Boolean)).toBe(true);
    } finally {
      await lone.close();
    }
  });

  it('batches a window into one command per shard, pipelined per node: far fewer socket reads than commands', async () => {
    const f = await RedisBloomFilter.create(client, fresh(), {
      capacity: 30_000,
      fpp: 0.01,
      shardBits: 8192,
    });
    const stats = () => Promise.all(cluster.nodes.map((n) => serverStats(n.port)));
    const batch = keys('p', 30_000);
    const before = await stats();
    const t = performance.now();
    await f.hasMany(batch);
    const ms = performance.now() - t;
    const after = await stats();
    const rows = after.map((a, i) => ({
      commands: a.commands - before[i]!.commands - 1,
      reads: a.reads - before[i]!.reads - 1,
    }));
    console.log(
      `cluster hasMany(30000) in ${ms.toFixed(0)} ms: ` +
        rows.map((r, i) => `node ${i}: ${r.commands} commands in ${r.reads} reads`).join('; '),
    );
    // One BITFIELD_RO per shard of each window, sent to the node that holds the shard.
    const { total, perShard } = groupedCommands(f, batch);
    expect(rows.reduce((s, r) => s + r.commands, 0)).toBe(total);
    expect(total).toBeLessThan(30_000 / 5);
    const slots = (await rawCommands(
      cluster.nodes[0]!.port,
      Array.from({ length: f.shards }, (_, i) => ['CLUSTER', 'KEYSLOT', f.shardKey(i)]),
    )) as number[];
    const ownerOf = await slotOwners();
    const byNode = cluster.nodes.map(() => 0);
    for (const [i, slot] of slots.entries()) {
      byNode[cluster.nodes.findIndex((n) => n.port === ownerOf(slot))]! += perShard[i]!;
    }
    expect(rows.map((r) => r.commands)).toEqual(byNode);
    for (const r of rows) {
      expect(r.commands).toBeGreaterThan(500);
      expect(r.reads).toBeLessThan(r.commands / 5);
    }
  });

  it('runs the Lua scripts where their keys live (TTL adds, counting removes)', async () => {
    const f = await RedisBloomFilter.create(client, fresh(), {
      capacity: 20_000,
      fpp: 0.01,
      shardBits: 8192,
      ttl: 60,
    });
    await f.addMany(keys('k', 2_000)); // adds to a filter with a TTL, on all 24 shards
    const slots = (await rawCommands(
      cluster.nodes[0]!.port,
      Array.from({ length: f.shards }, (_, i) => ['CLUSTER', 'KEYSLOT', f.shardKey(i)]),
    )) as number[];
    // Each shard's PTTL asked of the node that owns its slot, one connection per node.
    const ownerOf = await slotOwners();
    const byOwner = new Map<number, string[]>();
    for (const [i, slot] of slots.entries()) {
      const port = ownerOf(slot);
      byOwner.set(port, [...(byOwner.get(port) ?? []), f.shardKey(i)]);
    }
    let asked = 0;
    for (const [port, shardKeys] of byOwner) {
      const pttls = (await rawCommands(
        port,
        shardKeys.map((k) => ['PTTL', k]),
      )) as number[];
      for (const pttl of pttls) expect(pttl).toBeGreaterThan(50_000);
      asked += pttls.length;
    }
    expect(asked).toBe(f.shards);
    // Removes are scripts: on the nodes of 12 shards of 4,096 counters.
    const c = await RedisCountingBloomFilter.create(client, fresh(), {
      capacity: 5000,
      fpp: 0.01,
      shardBits: 4 * 4096,
    });
    expect(c.shards).toBe(12);
    await c.addMany(keys('k', 2000));
    expect((await c.removeMany(keys('k', 1000))).every(Boolean)).toBe(true);
    expect((await c.hasMany(keys('k', 1000, 1000))).every(Boolean)).toBe(true);
  });

  it('after every master lost its scripts, a window sends each of them the script body once', async () => {
    const c = await RedisCountingBloomFilter.create(client, fresh(), {
      capacity: 5000,
      fpp: 0.01,
      shardBits: 4 * 4096,
    });
    const batch = keys('flushed', 2000);
    await c.addMany(batch);
    const masters = cluster.nodes.filter((_, i) => cluster.replicaOf[i] === undefined);
    const evals = async () => {
      let n = 0;
      for (const { port } of masters) n += await commandCalls(port, 'eval');
      return n;
    };
    for (const { port } of masters) expect(await rawCommand(port, ['SCRIPT', 'FLUSH'])).toBe('OK');
    const before = await evals();
    // A window of removals, one script call each, over shards on every master: each master gets
    // one EVAL (the calls for the others wait for it, then meet NOSCRIPT once more, and so on).
    expect((await c.removeMany(batch.slice(0, 1000))).every(Boolean)).toBe(true);
    const sent = (await evals()) - before;
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThanOrEqual(masters.length);
    expect((await c.hasMany(batch.slice(1000))).every(Boolean)).toBe(true);
  });

  it('RedisCuckooFilter: scripts run on every node, no false negative, deletes', async () => {
    const f = await RedisCuckooFilter.create(io, fresh(), {
      capacity: 3000,
      fpp: 0.001,
      shardBits: 4096,
    });
    expect(f.shards).toBeGreaterThan(10);
    // 1,000 keys, each added and removed by its own script call: about 60 on each of 16 shards.
    await f.addMany(keys('k', 1000));
    const g = await RedisCuckooFilter.open(client, f.name);
    expect((await g.hasMany(keys('k', 1000))).every(Boolean)).toBe(true);
    expect((await g.removeMany(keys('k', 500))).every(Boolean)).toBe(true);
    expect((await f.hasMany(keys('k', 500, 500))).every(Boolean)).toBe(true);
    expect(await f.estimatedCount()).toBe(500);
  });

  /** The port of the node that owns a slot, from one CLUSTER SLOTS. */
  async function slotOwners(): Promise<(slot: number) => number> {
    const shards = (await rawCommand(cluster.nodes[0]!.port, ['CLUSTER', 'SLOTS'])) as [
      number,
      number,
      [string, number],
    ][];
    return (slot) => {
      for (const [from, to, [, port]] of shards) if (slot >= from && slot <= to) return port;
      throw new Error(`no node owns slot ${slot}`);
    };
  }
});
