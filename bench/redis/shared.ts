/**
 * What the Redis benchmarks (bench/redis/run.ts, bench/redis/hot-path.ts) share: the commands a
 * filter sends for one key, prebuilt (the node-redis ceiling), and the memory of one `addMany` of
 * 1,000,000 keys from a generator (peaks of RSS and heap above the baseline), and the recording of
 * a batch's commands in RESP for `redis-cli --pipe`.
 */
import { writeSync } from 'node:fs';
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
): Promise<{ keys: number; peakRss: number; peakHeap: number; ms: number }> {
  const count = 1_000_000;
  const filter = await RedisBloomFilter.create(client, name, { capacity: count, fpp: 0.01 });
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

/**
 * A node-redis client that forwards every command to `client` and appends the hot-path ones
 * (`BITFIELD`, `BITFIELD_RO`) to the file `file` in RESP: the exact bytes a filter's batch sent,
 * for `redis-cli --pipe` to send again. `commands()` says how many were written.
 */
export function recording(
  client: { sendCommand(args: readonly (string | Buffer)[], options?: object): Promise<unknown> },
  fd: number,
): { sendCommand: typeof client.sendCommand; isReady: true; commands(): number } {
  let count = 0;
  return {
    isReady: true,
    sendCommand(args, options) {
      if (args[0] === 'BITFIELD' || args[0] === 'BITFIELD_RO') {
        writeSync(fd, resp(args));
        count++;
      }
      return client.sendCommand(args, options);
    },
    commands: () => count,
  };
}
