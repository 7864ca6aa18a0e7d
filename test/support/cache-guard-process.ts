/**
 * The second process of the shared-Redis CacheGuard test (test/apps-cache-guard.test.ts): opens
 * the Redis filter the first process filled, guards the PostgreSQL table with it, inserts `count`
 * new rows (announcing each with `added` once its INSERT committed), asks for `absent` ids that do not
 * exist (in batches, one Redis round trip each), and prints one JSON line: the ids it inserted
 * and its guard's stats.
 *
 *   node --import tsx test/support/cache-guard-process.ts <redis-url> <pg-socket-dir> <pg-port>
 *     <filter-name> <table> <first-new-id> <count> <absent> <seed>
 *
 * (The test runs it bundled, test/support/worker-bundle.ts `bundleProgram`, with plain node.)
 */
import pg from 'pg';
import { createClient } from 'redis';
import { CacheGuard, RedisBloomFilter } from '../../src/redis.js';
import { mulberry32 } from './random.js';

const [url, host, port, name, table, firstText, countText, absentText, seed] =
  process.argv.slice(2);
const redis = createClient({ url: url!, disableOfflineQueue: true });
redis.on('error', () => undefined);
await redis.connect();
const db = new pg.Client({ host, port: Number(port), user: 'postgres', database: 'postgres' });
await db.connect();

const filter = await RedisBloomFilter.open(redis, name!);
const guard = new CacheGuard<number, { id: number; value: number }>({
  filter,
  load: async (id) =>
    (await db.query(`SELECT id, value FROM ${table} WHERE id = $1`, [id])).rows[0] ?? null,
  loadMany: async (ids) => {
    const rows = (await db.query(`SELECT id, value FROM ${table} WHERE id = ANY($1)`, [ids])).rows;
    const byId = new Map(rows.map((row) => [row.id as number, row]));
    return ids.map((id) => byId.get(id) ?? null);
  },
});

const inserted: number[] = [];
for (let i = 0; i < Number(countText); i++) {
  const id = Number(firstText) + 3 * i;
  await db.query(`INSERT INTO ${table} (id, value) VALUES ($1, $2)`, [id, id / 3]);
  await guard.added(id);
  inserted.push(id);
}

// Absent ids: not multiples of 3, inside the table's id range.
const random = mulberry32(Number(seed));
const absent = Array.from({ length: Number(absentText) }, () => {
  const g = 1 + Math.floor(random() * 1_000_000);
  return 3 * g + 1 + (g & 1);
});
let wrong = 0;
for (let start = 0; start < absent.length; start += 500) {
  const answers = await guard.getMany(absent.slice(start, start + 500));
  wrong += answers.filter((a) => a !== null).length;
}
process.stdout.write(`${JSON.stringify({ inserted, wrong, stats: guard.stats })}\n`);
await db.end();
await redis.close();
