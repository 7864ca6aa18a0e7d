/**
 * A child process for test/redis-faults.test.ts: opens a Redis filter with its own client, waits
 * for "go" on stdin, adds keys `key:0` … `key:<count-1>` in pipelined chunks of 250, in an order
 * shuffled with `seed`, and prints the indexes whose add reported "new" as one JSON line.
 *
 *   node <bundle of this file> <url> <kind> <name> <count> <seed>
 *   (or node --import tsx test/support/redis-adder.ts ...)
 *
 * kind: `bloom` or `scalable` (both created with the parameters below, so whichever process comes
 * first creates the filter and the other opens it; a scalable filter's first layer holds count / 10
 * keys).
 */
import { createInterface } from 'node:readline';
import { createClient } from 'redis';
import { RedisBloomFilter, RedisScalableBloomFilter } from '../../src/redis.js';

const [url, kind, name, countText, seed] = process.argv.slice(2);
const count = Number(countText);
const client = createClient({ url: url!, disableOfflineQueue: true });
client.on('error', () => undefined);
await client.connect();
const filter =
  kind === 'scalable'
    ? await RedisScalableBloomFilter.create(client, name!, {
        capacity: Math.ceil(count / 10),
        fpp: 0.01,
        shardBits: 4096,
      })
    : await RedisBloomFilter.create(client, name!, { capacity: count, fpp: 0.01, shardBits: 8192 });

const indexes = Array.from({ length: count }, (_, i) => i);
// A seeded shuffle (xorshift32), so two processes with different seeds race on every key.
let state = Number(seed) >>> 0 || 1;
for (let i = count - 1; i > 0; i--) {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  const j = (state >>> 0) % (i + 1);
  [indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!];
}
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim() === 'go') break;
lines.close();
process.stdin.destroy(); // an open stdin would keep this process alive

const fresh: number[] = [];
for (let start = 0; start < count; start += 250) {
  const chunk = indexes.slice(start, start + 250);
  const results = await filter.addEach(chunk.map((i) => `key:${i}`));
  results.forEach((isNew, j) => {
    if (isNew) fresh.push(chunk[j]!);
  });
}
process.stdout.write(`${JSON.stringify(fresh)}\n`);
await client.close();
