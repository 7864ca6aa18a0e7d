/**
 * What the Redis benchmarks (bench/redis/run.ts, bench/redis/hot-path.ts) share: the commands a
 * filter sends for one key, prebuilt (the node-redis ceiling), and the memory of one `addMany` of
 * 1,000,000 keys from a generator (peaks of RSS and heap above the baseline), the recording of
 * a batch's commands in RESP for `redis-cli --pipe`, and the timed `redis-cli --pipe` itself.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { RedisBloomFilter, ShardedBloomFilter } from '../../src/redis.js';

/**
 * The BITFIELD commands `filter` (made with `opts`) sends to add and test `key`, with their
 * arguments prebuilt: the header read, then the k bits (cell offsets past the 64-bit header).
 */
export function prebuiltCommands(
  filter: RedisBloomFilter,
  opts: { capacity: number; fpp: number },
  key: string,
): { cells: string[]; setArgs: string[]; getArgs: string[] } {
  const { shard, offsets } = ShardedBloomFilter.create(opts).positionsOf(key);
  const ref = filter.shardKey(shard);
  const header = ['GET', 'u32', '0', 'GET', 'u32', '32'];
  const cells = offsets.map((x) => String(x + 64));
  return {
    cells,
    setArgs: ['BITFIELD', ref, ...header, ...cells.flatMap((x) => ['SET', 'u1', x, '1'])],
    getArgs: ['BITFIELD_RO', ref, ...header, ...cells.flatMap((x) => ['GET', 'u1', x])],
  };
}

/**
 * `addMany` of 1,000,000 keys produced by a generator (nothing materialized), into a filter sized
 * for them; RSS and heap sampled every 20 ms, peaks reported above the baseline taken just before.
 */
export async function memoryOfAddMany(
  // Any client RedisBloomFilter takes (typing it as node-redis' declared client type made tsc
  // compare two instantiations of the client class: seconds of type checking).
  client: Parameters<typeof RedisBloomFilter.create>[0],
  name: string,
  durability: 'strict' | 'best-effort' = 'strict',
): Promise<{ keys: number; peakRss: number; peakHeap: number; ms: number }> {
  const count = 1_000_000;
  const opts = { capacity: count, fpp: 0.01, durability };
  const filter = await RedisBloomFilter.create(client, name, opts);
  globalThis.gc?.();
  const base = process.memoryUsage();
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss - base.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed - base.heapUsed);
  };
  const timer = setInterval(sample, 20);
  function* urls() {
    for (let i = 0; i < count; i++) yield `https://example.com/item/${i}`;
  }
  const t = performance.now();
  try {
    await filter.addMany(urls());
  } finally {
    clearInterval(timer);
  }
  sample();
  const ms = performance.now() - t;
  await filter.destroy();
  return { keys: count, peakRss, peakHeap, ms };
}

/** One command in RESP, as a client writes it: `*N`, then `$len` and the bytes of each argument. */
export function resp(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const bytes = typeof a === 'string' ? Buffer.from(a) : a;
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** The most commands a recording keeps as argument arrays (for {@link replay}). */
const KEPT = 256;

/**
 * A node-redis client that forwards every command to `client` and, while `active`, appends the
 * hot-path ones (`BITFIELD`, `BITFIELD_RO`) to the file `fd` in RESP: the exact bytes a filter's
 * batch sent, for `redis-cli --pipe` to send again. `commands()` says how many were written;
 * `kept` holds the arguments of the first {@link KEPT}; `also` sees every recorded command.
 */
export function recording(
  client: { sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown> },
  fd: number,
  /** Also called with each recorded command (packed-lua.ts records the packed form). */
  also?: (args: readonly (string | Buffer)[]) => void,
): {
  sendCommand: typeof client.sendCommand;
  isReady: true;
  commands(): number;
  kept: string[][];
  active: boolean;
} {
  let count = 0;
  const kept: string[][] = [];
  return {
    isReady: true,
    active: false,
    sendCommand(args, options) {
      const hot = args[0] === 'BITFIELD' || args[0] === 'BITFIELD_RO';
      if (this.active && hot) {
        writeSync(fd, resp(args));
        also?.(args);
        if (kept.length < KEPT) kept.push(args.slice() as string[]);
        count++;
      }
      return client.sendCommand(args, options);
    },
    commands: () => count,
    kept,
  };
}

/**
 * Sends `count` commands taken in turn from `commands` (prebuilt: no hashing, no argument
 * building) through `send`, `perWindow` in one turn and `depth` such turns in flight, as a
 * filter's batch sends its windows: what the client library itself costs for those commands.
 */
export async function replay<A extends readonly (string | Buffer)[]>(
  send: (args: A) => Promise<unknown>,
  commands: readonly A[],
  count: number,
  perWindow: number,
  depth: number,
): Promise<void> {
  const inFlight: Promise<unknown>[] = [];
  for (let start = 0; start < count; start += perWindow) {
    const window: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(count, start + perWindow); i++) {
      window.push(send(commands[i % commands.length]!));
    }
    inFlight.push(Promise.all(window));
    if (inFlight.length >= depth) await inFlight.shift();
  }
  await Promise.all(inFlight);
}

/**
 * A node-redis-shaped client whose `BITFIELD`s never leave the process: each is answered at once
 * with the header of filter `id` (generation 1) and every cell as for a new key (a bit write: 0, a
 * counter write: 1) or 1 (a read: all present); anything else goes to `client`. A filter's batch through it costs
 * bloomkit's own work only (hashing, windows, arguments, replies), no client library, no socket.
 */
export function answeredInProcess(
  client: { sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown> },
  id: () => number,
): { sendCommand: typeof client.sendCommand; isReady: true } {
  return {
    isReady: true,
    sendCommand(args, options) {
      const write = args[0] === 'BITFIELD';
      if (!write && args[0] !== 'BITFIELD_RO') return client.sendCommand(args, options);
      // A counting add (`OVERFLOW SAT INCRBY u4 ...`) answers 1, a new counter; a bit add 0.
      const counters = args[8] === 'OVERFLOW';
      const cells = (args.length - (counters ? 10 : 8)) / (write ? 4 : 3);
      const reply = new Array<number>(2 + cells).fill(write && !counters ? 0 : 1);
      reply[0] = id();
      reply[1] = 1;
      return Promise.resolve(reply);
    },
  };
}

/** Sends the RESP file `file` with `redis-cli --pipe`; the whole process's wall time in ms. */
export function pipe(port: number, file: string, commands: number): number {
  const fd = openSync(file, 'r');
  try {
    const t = performance.now();
    const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), '--pipe'], {
      stdio: [fd, 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 300_000,
    });
    const ms = performance.now() - t;
    const m = /errors: (\d+), replies: (\d+)/.exec(r.stdout);
    if (r.status !== 0 || m === null || m[1] !== '0' || Number(m[2]) !== commands) {
      throw new Error(`redis-cli --pipe failed (${r.status}): ${r.stdout} ${r.stderr}`);
    }
    return ms;
  } finally {
    closeSync(fd);
  }
}

/** The lock every benchmark run holds, so that benchmarks never overlap on a shared machine. */
const LOCK = '/tmp/bloomkit-bench.lock';

/**
 * Re-runs the script `file` under `flock` unless it already holds the lock (as bench/run.ts
 * does); returns only in the run that holds it.
 */
export function takeLock(file: string): void {
  if (process.env.BLOOMKIT_BENCH_LOCKED === '1') return;
  if (spawnSync('flock', ['--version']).status !== 0) return;
  const run = spawnSync(
    'flock',
    [LOCK, process.execPath, ...process.execArgv, file, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, BLOOMKIT_BENCH_LOCKED: '1' } },
  );
  process.exit(run.status ?? 1);
}
