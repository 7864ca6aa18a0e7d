/**
 * The memory measurement of the Redis benchmarks (bench/redis/run.ts, bench/redis/hot-path.ts):
 * one `addMany` of 1,000,000 keys from a generator, peaks of RSS and heap above the baseline.
 */
import type { createClient } from 'redis';
import { RedisBloomFilter } from '../../src/redis.js';

/**
 * `addMany` of 1,000,000 keys produced by a generator (nothing materialized), into a filter sized
 * for them; RSS and heap sampled every 20 ms, peaks reported above the baseline taken just before.
 */
export async function memoryOfAddMany(
  client: ReturnType<typeof createClient>,
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
