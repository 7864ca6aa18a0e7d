/**
 * `npm run bench:redis` (or `npx tsx bench/redis/run.ts`): pipelined add and has throughput of
 * `RedisBloomFilter` against a local redis-server, through node-redis and through ioredis, side by
 * side with `redis-cli --pipe` sending the very same commands (recorded, byte for byte, from a
 * bloomkit batch) to the same server: the server's own rate for them, the most any client can get
 * from one connection. Target: bloomkit >= 0.8× of it. Also the memory of `addMany` over
 * 1,000,000 keys from a generator (peak RSS above the baseline).
 *
 *   npx tsx bench/redis/run.ts                  200k keys, 3 rounds, a fresh redis-server
 *   npx tsx bench/redis/run.ts --keys 1000000 --rounds 1   the size the target is stated for
 *   npx tsx bench/redis/run.ts --url redis://127.0.0.1:6379   use a running server (it writes
 *                                                             keys bk:*:{bench-*} and deletes them)
 *   npx tsx bench/redis/run.ts --json           one JSON line instead of the table
 *   npx tsx bench/redis/run.ts --filter counting   the counting filter instead
 *   npx tsx bench/redis/run.ts --fsync everysec    the server's appendfsync (default always, as the
 *     filters' default durability needs; everysec: durability 'best-effort', adds not disk-bound)
 *
 * What is compared, on one server and one machine:
 * - bloomkit add: `filter.addMany(keys)` into a filter sized for the keys at fpp 0.01 (k = 7;
 *   1M keys: 2 shards of 4.8M bits): per window of keys, one `BITFIELD key GET u32 0 GET u32 32
 *   SET u1 o 1 ...` per shard with the k bits of each of its keys (the header check, then the
 *   bits), pipelined through one connection. has: `filter.hasMany(keys)`, one `BITFIELD_RO key
 *   GET u32 0 GET u32 32 GET u1 o ...` per shard of each window.
 * - `redis-cli --pipe`: those commands, recorded in RESP from a bloomkit batch over the same keys,
 *   sent from a file into a fresh filter of the same name (the whole process timed: it writes as
 *   fast as the server reads, so it measures the server).
 * - node-redis and ioredis sending those commands prebuilt (the first 256 recorded, in turn, in the
 *   filter's windows and depth): no hashing, no argument building, what the client library alone
 *   costs for them; and node-redis again with every argument copied into a new string before it
 *   is sent (as a filter's arguments are new), which costs it more than reused strings.
 * - The other command shape (packed-lua.ts; bloom only): every recorded BITFIELD as one EVALSHA
 *   whose offsets are one packed binary argument, sent prebuilt through each client and through
 *   `redis-cli --pipe` (its server rate, also as a ratio to the BITFIELDs' pipe rate).
 * - The client's CPU per key (user + system of this process) beside each rate.
 * Correctness is checked before any timing (no false negatives, the false positive rate).
 * Rounds interleave all contestants; the best of the rounds (after a warm-up round) is reported.
 * The run holds /tmp/bloomkit-bench.lock (flock) so that benchmarks never overlap on a shared
 * machine.
 */
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisBloomFilter, RedisCountingBloomFilter } from '../../src/redis.js';
import { DEPTH, WINDOW } from '../../src/sharded/ops.js';
import { startRedis } from '../../test/support/redis-server.js';
import { PACKED, packedRecorder, packedReplyOk } from './packed-lua.js';
import { memoryOfAddMany, pipe, recording, replay, takeLock } from './shared.js';

/**
 * The filter types the benchmark runs: those whose batches are plain BITFIELDs (bitfield.ts),
 * which carry no filter id and so can be replayed into a new filter of the same name. (The
 * cuckoo and scalable filters write through scripts that check the id of the filter they were
 * planned for: a replay into a new filter would write nothing.)
 */
const FILTERS = {
  bloom: RedisBloomFilter,
  counting: RedisCountingBloomFilter,
} as const;

/** What the benchmark uses of a filter, whatever its type. */
interface Bench {
  addMany(keys: string[]): Promise<unknown>;
  hasMany(keys: string[]): Promise<boolean[]>;
  destroy(): Promise<void>;
  readonly name: string;
  readonly shards: number;
  readonly shape: { shardBits: number; hashes: number };
}

interface Options {
  filter: keyof typeof FILTERS;
  keys: number;
  rounds: number;
  url: string | undefined;
  json: boolean;
  fsync: 'always' | 'everysec';
}

function parseArgs(argv: string[]): Options {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const keys = Number(value('--keys') ?? 200_000);
  const rounds = Number(value('--rounds') ?? 3);
  if (!Number.isSafeInteger(keys) || keys < 1000) throw new RangeError(`bad --keys ${keys}`);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new RangeError(`bad --rounds ${rounds}`);
  const filter = value('--filter') ?? 'bloom';
  if (!(filter in FILTERS)) throw new RangeError(`bad --filter ${filter}`);
  const f = filter as keyof typeof FILTERS;
  const fsync = value('--fsync') ?? 'always';
  if (fsync !== 'always' && fsync !== 'everysec') throw new RangeError(`bad --fsync ${fsync}`);
  return { filter: f, keys, rounds, url: value('--url'), json: argv.includes('--json'), fsync };
}

/** Keys per second of add and has, and the client's CPU µs per key for each. */
interface Rates {
  add: number;
  has: number;
  addCpu: number;
  hasCpu: number;
}

export interface RedisBenchResult {
  filter: string;
  keys: number;
  rounds: number;
  /** The fresh server's appendfsync (unknown with --url). */
  fsync: string;
  redisVersion: string;
  cpus: number;
  load: number;
  shape: { shards: number; shardBits: number; hashes: number };
  fpr: number;
  /** The commands of one add batch and one has batch, as recorded for redis-cli --pipe. */
  commands: { add: number; has: number };
  /**
   * addMany of 1,000,000 keys from a generator into a bloom filter: peak RSS and heap above the
   * baseline (bytes); measured with `--filter bloom` only.
   */
  memory?: { keys: number; peakRss: number; peakHeap: number; ms: number };
  /** Best round of each. */
  nodeRedis: Rates;
  ioredis: Rates;
  /** The recorded commands, prebuilt, sent through each client library in the filter's windows. */
  prebuilt: { nodeRedis: Rates; ioredis: Rates; nodeRedisNewStrings: Rates };
  redisCliPipe: { add: number; has: number };
  /**
   * The same keys in the other command shape (packed-lua.ts: one EVALSHA with the offsets packed
   * in one binary argument per recorded BITFIELD), all of a batch's commands sent prebuilt through
   * each client and through redis-cli --pipe; bloom only.
   */
  packedLua?: { nodeRedis: Rates; ioredis: Rates; redisCliPipe: { add: number; has: number } };
}

export async function runRedisBench(o: Options): Promise<RedisBenchResult> {
  const server = o.url === undefined ? await startRedis({ appendfsync: o.fsync }) : undefined;
  const url = o.url ?? server!.url;
  const port = Number(new URL(url).port || 6379);
  const client = createClient({ url, disableOfflineQueue: true });
  client.on('error', () => undefined);
  await client.connect();
  const io = new Redis(url, { lazyConnect: true });
  io.on('error', () => undefined);
  await io.connect();
  const dir = mkdtempSync(join(tmpdir(), 'bloomkit-redis-bench-'));
  const name = `bench-${process.pid}`;
  const durability = o.fsync === 'always' ? ('strict' as const) : ('best-effort' as const);
  const opts = { capacity: o.keys, fpp: 0.01, durability };
  type Client = Parameters<typeof RedisBloomFilter.create>[0];
  const Type = FILTERS[o.filter] as unknown as {
    create(client: Client, name: string, options: typeof opts): Promise<Bench>;
    open(client: Client, name: string, options: { durability: typeof durability }): Promise<Bench>;
  };
  try {
    const info = String(await client.sendCommand(['INFO', 'server']));
    const redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
    const keys = Array.from({ length: o.keys }, (_, i) => `https://example.com/item/${i}`);
    const absent = Array.from({ length: o.keys }, (_, i) => `https://example.com/other/${i}`);

    // Correctness first, recording the commands of one add and one has batch.
    const files = { add: join(dir, 'add.resp'), has: join(dir, 'has.resp') };
    const packedFiles = { add: join(dir, 'add-lua.resp'), has: join(dir, 'has-lua.resp') };
    const commands = { add: 0, has: 0 };
    const kept: Record<'add' | 'has', string[][]> = { add: [], has: [] };
    const packed: Record<'add' | 'has', (string | Buffer)[][]> = { add: [], has: [] };
    const lua = o.filter === 'bloom';
    const k = Math.round(-Math.log2(0.01)); // the filter's k at fpp 0.01 (checked below)
    for (const op of ['add', 'has'] as const) {
      const fd = openSync(files[op], 'w');
      const luaFd = openSync(packedFiles[op], 'w');
      try {
        const pack = lua ? packedRecorder(luaFd, k) : undefined;
        const rec = recording(client, fd, pack?.record);
        packed[op] = pack?.kept ?? [];
        const f = await Type.create(rec, name, opts);
        rec.active = true;
        if (op === 'add') await f.addMany(keys);
        else if (!(await f.hasMany(keys)).every(Boolean)) throw new Error('false negative');
        rec.active = false;
        commands[op] = rec.commands();
        kept[op] = rec.kept;
      } finally {
        closeSync(fd);
        closeSync(luaFd);
      }
    }
    let filter = await Type.open(client, name, { durability });
    const fpr = (await filter.hasMany(absent)).filter(Boolean).length / absent.length;
    if (fpr > 0.015) throw new Error(`false positive rate ${fpr} is far above 0.01`);
    if (lua && filter.shape.hashes !== k) throw new Error(`k is ${filter.shape.hashes}, not ${k}`);
    for (const s of Object.values(PACKED)) await client.sendCommand(['SCRIPT', 'LOAD', s.source]);
    const memory =
      o.filter === 'bloom' ? await memoryOfAddMany(client, `${name}-mem`, durability) : undefined;

    const timed = async (run: () => Promise<unknown>) => {
      const cpu = process.cpuUsage();
      const t = performance.now();
      await run();
      const used = process.cpuUsage(cpu);
      return {
        rate: (o.keys / (performance.now() - t)) * 1000,
        cpu: (used.user + used.system) / o.keys,
      };
    };
    const fresh = async (via: Client) => {
      await filter.destroy();
      filter = await Type.create(via, name, opts);
      return filter;
    };

    // Rounds interleave every contestant, so that a busy moment on a shared machine hits them
    // all alike; round 0 is a warm-up (JIT, first allocations) and is not counted.
    const none = () => ({ add: 0, has: 0, addCpu: Infinity, hasCpu: Infinity });
    const best = {
      nodeRedis: none(),
      ioredis: none(),
      prebuiltNodeRedis: none(),
      prebuiltIoredis: none(),
      prebuiltNewStrings: none(),
      pipe: { add: 0, has: 0 },
      packedNodeRedis: none(),
      packedIoredis: none(),
      packedPipe: { add: 0, has: 0 },
    };
    const windows = Math.ceil(o.keys / WINDOW);
    const sends = {
      prebuiltNodeRedis: (args: string[]) => client.sendCommand(args),
      prebuiltIoredis: (args: string[]) => io.call(args[0]!, ...args.slice(1)),
      // The same arguments as new strings (a copy of each), as a filter makes them.
      prebuiltNewStrings: (args: string[]) => client.sendCommand(args.map((a) => ` ${a}`.slice(1))),
    };
    const keep = (into: Rates, op: 'add' | 'has', r: { rate: number; cpu: number }) => {
      into[op] = Math.max(into[op], r.rate);
      const cpu = op === 'add' ? 'addCpu' : 'hasCpu';
      into[cpu] = Math.min(into[cpu], r.cpu);
    };
    for (let round = 0; round <= o.rounds; round++) {
      const counted = round > 0;
      for (const [label, via] of [
        ['nodeRedis', client],
        ['ioredis', io],
      ] as const) {
        const f = await fresh(via);
        const add = await timed(() => f.addMany(keys));
        const has = await timed(() => f.hasMany(keys));
        if (counted) keep(best[label], 'add', add);
        if (counted) keep(best[label], 'has', has);
      }
      for (const label of ['prebuiltNodeRedis', 'prebuiltIoredis', 'prebuiltNewStrings'] as const) {
        await fresh(client);
        for (const op of ['add', 'has'] as const) {
          const perWindow = Math.max(1, Math.round(commands[op] / windows));
          const r = await timed(() =>
            replay(sends[label], kept[op], commands[op], perWindow, DEPTH),
          );
          if (counted) keep(best[label], op, r);
        }
      }
      if (lua) {
        // The packed shape: every command of the batch once, each reply checked.
        const checked =
          (send: (args: (string | Buffer)[]) => Promise<unknown>, write: boolean) =>
          async (args: (string | Buffer)[]) => {
            if (!packedReplyOk(await send(args), write)) throw new Error('packed: bad reply');
          };
        for (const [label, send] of [
          ['packedNodeRedis', (args: (string | Buffer)[]) => client.sendCommand(args)],
          [
            'packedIoredis',
            (args: (string | Buffer)[]) => io.call(args[0] as string, ...args.slice(1)),
          ],
        ] as const) {
          await fresh(client);
          for (const op of ['add', 'has'] as const) {
            const perWindow = Math.max(1, Math.round(commands[op] / windows));
            const go = checked(send, op === 'add');
            const r = await timed(() => replay(go, packed[op], commands[op], perWindow, DEPTH));
            if (counted) keep(best[label], op, r);
          }
          if (!(await filter.hasMany(keys)).every(Boolean))
            throw new Error('packed: false negative');
        }
        await fresh(client);
        const add = (o.keys / pipe(port, packedFiles.add, commands.add)) * 1000;
        const has = (o.keys / pipe(port, packedFiles.has, commands.has)) * 1000;
        const p = best.packedPipe;
        if (counted) best.packedPipe = { add: Math.max(p.add, add), has: Math.max(p.has, has) };
      }
      await fresh(client);
      const add = (o.keys / pipe(port, files.add, commands.add)) * 1000;
      const has = (o.keys / pipe(port, files.has, commands.has)) * 1000;
      if (counted)
        best.pipe = { add: Math.max(best.pipe.add, add), has: Math.max(best.pipe.has, has) };
    }
    if (!(await filter.hasMany(keys)).every(Boolean)) throw new Error('false negative after pipe');
    await filter.destroy();
    return {
      filter: o.filter,
      keys: o.keys,
      rounds: o.rounds,
      fsync: o.url === undefined ? o.fsync : 'unknown',
      redisVersion,
      cpus: cpus().length,
      load: loadavg()[0]!,
      shape: {
        shards: filter.shards,
        shardBits: filter.shape.shardBits,
        hashes: filter.shape.hashes,
      },
      fpr,
      commands,
      memory,
      nodeRedis: best.nodeRedis,
      ioredis: best.ioredis,
      prebuilt: {
        nodeRedis: best.prebuiltNodeRedis,
        ioredis: best.prebuiltIoredis,
        nodeRedisNewStrings: best.prebuiltNewStrings,
      },
      redisCliPipe: best.pipe,
      packedLua: lua
        ? {
            nodeRedis: best.packedNodeRedis,
            ioredis: best.packedIoredis,
            redisCliPipe: best.packedPipe,
          }
        : undefined,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    io.disconnect();
    await client.close();
    await server?.stop();
  }
}

function render(r: RedisBenchResult): string {
  const k = (x: number) => `${(x / 1000).toFixed(0)}k/s`;
  const us = (x: number) => `${x.toFixed(2)} µs`;
  const mb = (x: number) => `${(x / 2 ** 20).toFixed(1)} MiB`;
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const p = r.redisCliPipe;
  // Each row's ratio is to the pipe of its own commands (the BITFIELDs, or the packed Lua).
  const row = (label: string, x: Rates, to = p) =>
    `| ${label} | ${k(x.add)} (${ratio(x.add, to.add)}) | ${k(x.has)} (${ratio(x.has, to.has)}) | ${us(x.addCpu)} / ${us(x.hasCpu)} |`;
  return [
    `Redis ${r.redisVersion} (appendfsync ${r.fsync}), ${r.cpus} CPUs (load ${r.load.toFixed(1)}), ${r.keys} keys, best of ${r.rounds}; ` +
      `filter capacity ${r.keys} fpp 0.01: ${r.shape.shards} shards of ${r.shape.shardBits} bits, k = ${r.shape.hashes}; ` +
      `measured fpr ${(r.fpr * 100).toFixed(3)}%; ${r.commands.add} add and ${r.commands.has} has commands per batch`,
    '',
    '| client | add, keys/s (× pipe) | has, keys/s (× pipe) | client CPU per key, add / has |',
    '|---|---|---|---|',
    row(`bloomkit ${FILTERS[r.filter as keyof typeof FILTERS].name}, node-redis`, r.nodeRedis),
    row(`bloomkit ${FILTERS[r.filter as keyof typeof FILTERS].name}, ioredis`, r.ioredis),
    row('node-redis, the same commands prebuilt', r.prebuilt.nodeRedis),
    row('ioredis, the same commands prebuilt', r.prebuilt.ioredis),
    row('node-redis, prebuilt, every argument a new string', r.prebuilt.nodeRedisNewStrings),
    `| redis-cli --pipe, the same commands | ${k(p.add)} | ${k(p.has)} | |`,
    ...(r.packedLua === undefined
      ? []
      : [
          row('node-redis, packed Lua, prebuilt', r.packedLua.nodeRedis, r.packedLua.redisCliPipe),
          row('ioredis, packed Lua, prebuilt', r.packedLua.ioredis, r.packedLua.redisCliPipe),
          `| redis-cli --pipe, packed Lua (× the BITFIELDs' pipe) | ${k(r.packedLua.redisCliPipe.add)} (${ratio(r.packedLua.redisCliPipe.add, p.add)}) | ${k(r.packedLua.redisCliPipe.has)} (${ratio(r.packedLua.redisCliPipe.has, p.has)}) | |`,
        ]),
    '',
    r.memory === undefined
      ? ''
      : `addMany of ${r.memory.keys} keys from a generator: peak RSS ${mb(r.memory.peakRss)} above the baseline (heap ${mb(r.memory.peakHeap)}) in ${(r.memory.ms / 1000).toFixed(1)} s`,
  ].join('\n');
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  takeLock(fileURLToPath(import.meta.url));
  const o = parseArgs(process.argv.slice(2));
  const result = await runRedisBench(o);
  console.log(o.json ? JSON.stringify(result) : render(result));
}
