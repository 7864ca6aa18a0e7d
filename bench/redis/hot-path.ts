/**
 * `npx tsx --expose-gc bench/redis/hot-path.ts`: the client's cost per key of the Redis batch path,
 * measured in CPU time (process.cpuUsage, user + system of this process: far less sensitive to
 * the load of a shared machine than wall time), against a fresh redis-server on a free port.
 *
 * - CPU µs per key of `RedisBloomFilter.addMany` / `hasMany` over `--keys` (default 200,000) URL
 *   keys, best of `--rounds` (default 5) after a warm-up; and the same for node-redis sending one
 *   key's BITFIELD, prebuilt, for every key (the floor of a client that sends a command per key;
 *   bloomkit sends one per shard of each window).
 * - The same batches through a client that answers every BITFIELD in process (shared.ts
 *   `answeredInProcess`): bloomkit's own work per key, without a client library or a socket.
 * - Peak RSS and heap above the baseline during `addMany` of 1,000,000 keys from a generator
 *   (sampled every 10 ms), as in bench/redis/run.ts. Run with `--expose-gc` for a clean baseline.
 *
 *   npx tsx --expose-gc bench/redis/hot-path.ts [--keys 200000] [--rounds 5] [--json] [--no-memory]
 *                                               [--no-cpu]
 *
 * Run it under `flock` on a shared machine, as every benchmark.
 */
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { RedisBloomFilter } from '../../src/redis.js';
import { DEPTH, WINDOW } from '../../src/sharded/ops.js';
import { startRedis } from '../../test/support/redis-server.js';
import { answeredInProcess, memoryOfAddMany, prebuiltCommands } from './shared.js';

interface Result {
  keys: number;
  cpuUsPerKey: {
    add: number;
    has: number;
    ceilingAdd: number;
    ceilingHas: number;
    ownAdd: number;
    ownHas: number;
  };
  memory?: { keys: number; peakRss: number; peakHeap: number; ms: number };
}

/** The node-redis client, typed as the factory infers (see bench/redis/shared.ts). */
const connect = (url: string) => createClient({ url, disableOfflineQueue: true });
type Client = ReturnType<typeof connect>;

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** CPU µs (user + system) that `run` takes, per key. */
async function cpuPerKey(keys: number, run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / keys;
}

export async function run(argv: string[]): Promise<Result> {
  const n = Number(arg(argv, '--keys') ?? 200_000);
  const rounds = Number(arg(argv, '--rounds') ?? 5);
  const server = await startRedis();
  const client: Client = connect(server.url);
  client.on('error', () => undefined);
  await client.connect();
  const name = `hot-${process.pid}`;
  const opts = { capacity: n, fpp: 0.01 };
  try {
    const memory = argv.includes('--no-memory')
      ? undefined
      : await memoryOfAddMany(client, `${name}-mem`);
    if (argv.includes('--no-cpu')) {
      const none = {
        add: Number.NaN,
        has: Number.NaN,
        ceilingAdd: Number.NaN,
        ceilingHas: Number.NaN,
        ownAdd: Number.NaN,
        ownHas: Number.NaN,
      };
      return { keys: n, cpuUsPerKey: none, memory };
    }
    const keys = Array.from({ length: n }, (_, i) => `https://example.com/item/${i}`);
    let filter = await RedisBloomFilter.create(client, name, opts);
    const { setArgs, getArgs } = prebuiltCommands(filter, opts, keys[0]!);
    const ceiling = async (args: string[]) => {
      const inFlight: Promise<unknown>[] = [];
      for (let start = 0; start < n; start += WINDOW) {
        const batch: Promise<unknown>[] = [];
        for (let i = start; i < Math.min(n, start + WINDOW); i++)
          batch.push(client.sendCommand(args));
        inFlight.push(Promise.all(batch));
        if (inFlight.length >= DEPTH) await inFlight.shift();
      }
      await Promise.all(inFlight);
    };
    const best = {
      add: Infinity,
      has: Infinity,
      ceilingAdd: Infinity,
      ceilingHas: Infinity,
      ownAdd: Infinity,
      ownHas: Infinity,
    };
    const keep = (field: keyof typeof best, v: number, round: number) => {
      if (round > 0) best[field] = Math.min(best[field], v);
    };
    for (let round = 0; round <= rounds; round++) {
      await filter.destroy();
      filter = await RedisBloomFilter.create(client, name, opts);
      globalThis.gc?.();
      keep('add', await cpuPerKey(n, () => filter.addMany(keys)), round);
      globalThis.gc?.();
      keep('has', await cpuPerKey(n, () => filter.hasMany(keys)), round);
      globalThis.gc?.();
      keep('ceilingAdd', await cpuPerKey(n, () => ceiling(setArgs)), round);
      globalThis.gc?.();
      keep('ceilingHas', await cpuPerKey(n, () => ceiling(getArgs)), round);
      const id = Number(await client.sendCommand(['HGET', filter.metaKey, 'id']));
      const own = await RedisBloomFilter.open(
        answeredInProcess(client, () => id),
        name,
      );
      globalThis.gc?.();
      keep('ownAdd', await cpuPerKey(n, () => own.addMany(keys)), round);
      globalThis.gc?.();
      keep('ownHas', await cpuPerKey(n, () => own.hasMany(keys)), round);
    }
    const check = await filter.hasMany(keys);
    if (!check.every(Boolean)) throw new Error('false negative');
    await filter.destroy();
    return { keys: n, cpuUsPerKey: best, memory };
  } finally {
    await client.close();
    await server.stop();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const r = await run(argv);
  if (argv.includes('--json')) console.log(JSON.stringify(r));
  else {
    const c = r.cpuUsPerKey;
    const f = (x: number) => x.toFixed(2);
    console.log(
      `CPU µs/key (${r.keys} keys, best round): add ${f(c.add)}, has ${f(c.has)}; node-redis, one prebuilt command per key: add ${f(c.ceilingAdd)}, has ${f(c.ceilingHas)}; bloomkit's own work (BITFIELDs answered in process): add ${f(c.ownAdd)}, has ${f(c.ownHas)}`,
    );
    if (r.memory !== undefined) {
      const mb = (x: number) => `${(x / 2 ** 20).toFixed(1)} MiB`;
      console.log(
        `addMany of ${r.memory.keys} keys: peak RSS ${mb(r.memory.peakRss)} above baseline, heap ${mb(r.memory.peakHeap)}, ${(r.memory.ms / 1000).toFixed(1)} s`,
      );
    }
  }
}
