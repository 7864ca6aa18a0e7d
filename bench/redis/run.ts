/**
 * `npm run bench:redis` (or `npx tsx bench/redis/run.ts`): pipelined add and has throughput of
 * `RedisBloomFilter` against a local redis-server, side by side with `redis-benchmark` sending one
 * BITFIELD per key to the same server, as a ratio of keys per second (target >= 0.8× `-P 32 -c 1`);
 * and the memory of `addMany` over 1,000,000 keys from a generator (peak RSS above the baseline).
 *
 *   npx tsx bench/redis/run.ts                  200k keys, 5 rounds, a fresh redis-server
 *   npx tsx bench/redis/run.ts --keys 1000000 --rounds 5
 *   npx tsx bench/redis/run.ts --url redis://127.0.0.1:6379   use a running server (it writes
 *                                                             keys bk:*:{bench-*} and deletes them)
 *   npx tsx bench/redis/run.ts --json           one JSON line instead of the table
 *
 * What is compared, on one server and one machine:
 * - bloomkit add: `filter.addMany(keys)` into a filter sized for the keys at fpp 0.01 (k = 7;
 *   1M keys: 2 shards of 4.8M bits): per window of WINDOW keys, one `BITFIELD key GET u32 0 GET
 *   u32 32 SET u1 o 1 ...` per shard with the k bits of each of its keys (the header check, then
 *   the bits), pipelined through one node-redis connection.
 * - bloomkit has: `filter.hasMany(keys)`, one `BITFIELD_RO key GET u32 0 GET u32 32 GET u1 o ...`
 *   per shard of each window.
 * - one key's shape without the header reads (7 bits in one 1 MiB key) for redis-benchmark.
 * - node-redis, one command per key: one key's command (header and k bits) with prebuilt
 *   arguments sent through the same client for every key (no hashing, no argument building), in
 *   bloomkit's windows (WINDOW keys, DEPTH in flight): the most a client sending a command per key
 *   gets on one connection.
 * - redis-benchmark: one key's command shape, `-P 32` (32 commands per write), with 1 connection
 *   (as bloomkit's one client) and with its default 50. Its `__rand_int__` placeholder is
 *   zero-padded to 12 digits, which Redis rejects as a bit offset, so redis-benchmark sends the
 *   offsets of one real key (fixed); the server's work per command is the same.
 * Correctness is checked before any timing (no false negatives, the false positive rate).
 * Rounds interleave all contestants; the best of the rounds (after a warm-up round) is reported. The run holds /tmp/bloomkit-bench.lock (flock) so that
 * benchmarks never overlap on a shared machine.
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { RedisBloomFilter } from '../../src/redis.js';
import { DEPTH, WINDOW } from '../../src/sharded/ops.js';
import { startRedis } from '../../test/support/redis-server.js';
import { memoryOfAddMany, prebuiltCommands } from './shared.js';

const LOCK = '/tmp/bloomkit-bench.lock';

interface Options {
  keys: number;
  rounds: number;
  url: string | undefined;
  json: boolean;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const keys = Number(value('--keys') ?? 200_000);
  const rounds = Number(value('--rounds') ?? 5);
  if (!Number.isSafeInteger(keys) || keys < 1000) throw new RangeError(`bad --keys ${keys}`);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new RangeError(`bad --rounds ${rounds}`);
  return { keys, rounds, url: value('--url'), json: argv.includes('--json') };
}

/** Re-runs this script under `flock` unless it already holds the lock (as bench/run.ts does). */
function takeLock(): void {
  if (process.env.BLOOMKIT_BENCH_LOCKED === '1') return;
  if (spawnSync('flock', ['--version']).status !== 0) return;
  const run = spawnSync(
    'flock',
    [
      LOCK,
      process.execPath,
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit', env: { ...process.env, BLOOMKIT_BENCH_LOCKED: '1' } },
  );
  process.exit(run.status ?? 1);
}

export interface RedisBenchResult {
  keys: number;
  rounds: number;
  redisVersion: string;
  cpus: number;
  load: number;
  shape: { shards: number; shardBits: number; hashes: number };
  fpr: number;
  /** addMany of 1,000,000 keys from a generator: peak RSS and heap above the baseline (bytes). */
  memory: { keys: number; peakRss: number; peakHeap: number; ms: number };
  /** Operations per second, best round. */
  bloomkit: { add: number; has: number };
  nodeRedisCeiling: { add: number; has: number };
  redisBenchmark: { c1: { add: number; has: number }; c50: { add: number; has: number } };
}

function redisBenchmark(port: number, n: number, clients: number, args: string[]): number {
  const r = spawnSync(
    'redis-benchmark',
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-n',
      String(n),
      '-P',
      '32',
      '-c',
      String(clients),
      '--csv',
      ...args,
    ],
    { encoding: 'utf8', timeout: 300_000 },
  );
  if (r.status !== 0)
    throw new Error(`redis-benchmark failed (${r.status}): ${r.stderr || r.error}`);
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  const rps = Number(JSON.parse(`[${line}]`)[1]);
  if (!(rps > 0)) throw new Error(`cannot read redis-benchmark's output: ${r.stdout}`);
  return rps;
}

export async function runRedisBench(o: Options): Promise<RedisBenchResult> {
  const server = o.url === undefined ? await startRedis() : undefined;
  const url = o.url ?? server!.url;
  const port = Number(new URL(url).port || 6379);
  const client = createClient({ url, disableOfflineQueue: true });
  client.on('error', () => undefined);
  await client.connect();
  const name = `bench-${process.pid}`;
  const opts = { capacity: o.keys, fpp: 0.01 };
  try {
    const info = String(await client.sendCommand(['INFO', 'server']));
    const redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
    const keys = Array.from({ length: o.keys }, (_, i) => `https://example.com/item/${i}`);
    const absent = Array.from({ length: o.keys }, (_, i) => `https://example.com/other/${i}`);

    // Correctness first.
    let filter = await RedisBloomFilter.create(client, name, opts);
    await filter.addMany(keys);
    if (!(await filter.hasMany(keys)).every(Boolean)) throw new Error('false negative');
    const memory = await memoryOfAddMany(client, `${name}-mem`);
    const fpr = (await filter.hasMany(absent)).filter(Boolean).length / absent.length;
    if (fpr > 0.015) throw new Error(`false positive rate ${fpr} is far above 0.01`);

    // The same shapes with fixed arguments: a real key's shard and offsets.
    const { cells, setArgs, getArgs } = prebuiltCommands(filter, opts, keys[0]!);
    const other = `bk:b:{redis-benchmark-${process.pid}:0}`;
    // redis-benchmark: 7 bits in one 1 MiB key, without the header reads.
    await client.sendCommand(['SETRANGE', other, String(2 ** 20 - 1), '\0']);
    const rbSet = ['BITFIELD', other, ...cells.flatMap((x) => ['SET', 'u1', x, '1'])];
    const rbGet = ['BITFIELD_RO', other, ...cells.flatMap((x) => ['GET', 'u1', x])];

    const rate = async (run: () => Promise<unknown>) => {
      const t = performance.now();
      await run();
      return (o.keys / (performance.now() - t)) * 1000;
    };
    const ceiling = async (args: string[]) => {
      const inFlight: Promise<unknown>[] = [];
      for (let start = 0; start < o.keys; start += WINDOW) {
        const batch: Promise<unknown>[] = [];
        for (let i = start; i < Math.min(o.keys, start + WINDOW); i++)
          batch.push(client.sendCommand(args));
        inFlight.push(Promise.all(batch));
        if (inFlight.length >= DEPTH) await inFlight.shift();
      }
      await Promise.all(inFlight);
    };
    const freshFilter = async () => {
      await filter.destroy();
      filter = await RedisBloomFilter.create(client, name, opts);
    };

    // Rounds interleave every contestant, so that a busy moment on a shared machine hits them
    // all alike; round 0 is a warm-up (JIT, first allocations) and is not counted.
    const top = {
      add: 0,
      has: 0,
      ceilingAdd: 0,
      ceilingHas: 0,
      c1Add: 0,
      c1Has: 0,
      c50Add: 0,
      c50Has: 0,
    };
    const keep = (field: keyof typeof top, value: number, round: number) => {
      if (round > 0) top[field] = Math.max(top[field], value);
    };
    for (let round = 0; round <= o.rounds; round++) {
      await freshFilter();
      keep('add', await rate(() => filter.addMany(keys)), round);
      keep('has', await rate(() => filter.hasMany(keys)), round);
      keep('ceilingAdd', await rate(() => ceiling(setArgs)), round);
      keep('ceilingHas', await rate(() => ceiling(getArgs)), round);
      keep('c1Add', redisBenchmark(port, o.keys, 1, rbSet), round);
      keep('c1Has', redisBenchmark(port, o.keys, 1, rbGet), round);
      keep('c50Add', redisBenchmark(port, o.keys, 50, rbSet), round);
      keep('c50Has', redisBenchmark(port, o.keys, 50, rbGet), round);
    }
    const add = top.add;
    const has = top.has;
    const nodeRedisCeiling = { add: top.ceilingAdd, has: top.ceilingHas };
    const redisBenchmarkResult = {
      c1: { add: top.c1Add, has: top.c1Has },
      c50: { add: top.c50Add, has: top.c50Has },
    };
    await client.sendCommand(['DEL', other]);
    await filter.destroy();
    return {
      keys: o.keys,
      rounds: o.rounds,
      redisVersion,
      cpus: cpus().length,
      load: loadavg()[0]!,
      shape: { shards: filter.shards, shardBits: filter.shape.shardBits, hashes: filter.hashes },
      fpr,
      memory,
      bloomkit: { add, has },
      nodeRedisCeiling,
      redisBenchmark: redisBenchmarkResult,
    };
  } finally {
    await client.close();
    await server?.stop();
  }
}

function render(r: RedisBenchResult): string {
  const k = (x: number) => `${(x / 1000).toFixed(0)}k/s`;
  const mb = (x: number) => `${(x / 2 ** 20).toFixed(1)} MiB`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const rows = [
    ['bloomkit RedisBloomFilter (addMany / hasMany)', r.bloomkit.add, r.bloomkit.has],
    ['node-redis, one prebuilt command per key', r.nodeRedisCeiling.add, r.nodeRedisCeiling.has],
    ['redis-benchmark -P 32 -c 1', r.redisBenchmark.c1.add, r.redisBenchmark.c1.has],
    ['redis-benchmark -P 32 -c 50', r.redisBenchmark.c50.add, r.redisBenchmark.c50.has],
  ] as const;
  return [
    `Redis ${r.redisVersion}, ${r.cpus} CPUs (load ${r.load.toFixed(1)}), ${r.keys} keys, best of ${r.rounds}; ` +
      `filter capacity ${r.keys} fpp 0.01: ${r.shape.shards} shards of ${r.shape.shardBits} bits, k = ${r.shape.hashes}; ` +
      `measured fpr ${(r.fpr * 100).toFixed(3)}%`,
    '',
    '| client | add, keys/s | has, keys/s |',
    '|---|---|---|',
    ...rows.map(([label, a, h]) => `| ${label} | ${k(a)} | ${k(h)} |`),
    '',
    `addMany of ${r.memory.keys} keys from a generator: peak RSS ${mb(r.memory.peakRss)} above the baseline (heap ${mb(r.memory.peakHeap)}) in ${(r.memory.ms / 1000).toFixed(1)} s`,
    `bloomkit / redis-benchmark -c 1 (target >= 0.8×): add ${ratio(r.bloomkit.add, r.redisBenchmark.c1.add)}, has ${ratio(r.bloomkit.has, r.redisBenchmark.c1.has)}`,
    `bloomkit / redis-benchmark -c 50: add ${ratio(r.bloomkit.add, r.redisBenchmark.c50.add)}, has ${ratio(r.bloomkit.has, r.redisBenchmark.c50.has)}`,
    `bloomkit / node-redis, a command per key: add ${ratio(r.bloomkit.add, r.nodeRedisCeiling.add)}, has ${ratio(r.bloomkit.has, r.nodeRedisCeiling.has)}`,
  ].join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  takeLock();
  const o = parseArgs(process.argv.slice(2));
  const result = await runRedisBench(o);
  console.log(o.json ? JSON.stringify(result) : render(result));
}
