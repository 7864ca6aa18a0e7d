/**
 * RedisSeenSet for a feed: never show a user a post they saw in the last 30 days.
 *
 * Connects to REDIS_URL (default redis://127.0.0.1:6379). USERS users each read 20 posts a day for
 * 30 days (a simulated clock: no waiting); then each asks for a page: 500 candidates, of which
 * the user saw 100, filtered in one round trip. Prints memory per user (the bound and what Redis
 * reports) and how many seen posts came back. The last line is the same figures as JSON.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/seen-set.ts
 */
import { RedisSeenSet } from '../src/redis.js'; // in your project: 'bloomkit/redis'
import { connectRedis } from './services.js';

const USERS = Number(process.env.USERS ?? 50);
const DAY = 86_400_000;
const PER_DAY = 20;

const client = await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'seen-set');
let clock = Date.now();
const seen = new RedisSeenSet(client, `feed-example-${process.pid}`, {
  capacity: PER_DAY, // posts a user reads per day (more only raises that day's rate)
  fpp: 0.01, // over the whole 30-day window
  generations: 30,
  period: DAY,
  now: () => clock,
});

const post = (user: number, day: number, i: number) => `post:${user}:${day}:${i}`;
for (let day = 0; day < 30; day++) {
  if (day > 0) clock += DAY;
  await Promise.all(
    Array.from({ length: USERS }, (_, u) =>
      seen.markSeen(
        `user${u}`,
        Array.from({ length: PER_DAY }, (_, i) => post(u, day, i)),
      ),
    ),
  );
}

// A page request: 100 posts the user saw (5 from each of the last 20 days) and 400 new ones.
let wrong = 0;
let falsePositives = 0;
let elapsed = 0;
for (let u = 0; u < USERS; u++) {
  const old = Array.from({ length: 100 }, (_, i) => post(u, 10 + (i % 20), Math.floor(i / 20)));
  const fresh = Array.from({ length: 400 }, (_, i) => `new:${u}:${i}`);
  const start = performance.now();
  const unseen = new Set(await seen.unseen(`user${u}`, [...old, ...fresh]));
  elapsed += performance.now() - start;
  wrong += old.filter((p) => unseen.has(p)).length;
  falsePositives += fresh.filter((p) => !unseen.has(p)).length;
}

let measured = 0;
for (let g = 0; g < 30; g++) {
  measured += Number(
    await client.sendCommand([
      'MEMORY',
      'USAGE',
      seen.key('user0', seen.generation() - g),
      'SAMPLES',
      '0',
    ]),
  );
}
console.log(`${USERS} users x 30 days x ${PER_DAY} posts a day; one bitmap per user per day`);
console.log(
  `memory per user: at most ${seen.memoryPerUser} bytes of bitmaps (${seen.bits} bits x 30); Redis reports ${measured} bytes with its key overhead`,
);
console.log(
  `500 candidates per page, one round trip each: ${(elapsed / USERS).toFixed(2)} ms on average`,
);
console.log(
  `seen posts offered again: ${wrong}; new posts hidden by mistake: ${falsePositives} of ${USERS * 400} (${((100 * falsePositives) / (USERS * 400)).toFixed(2)}%)`,
);
console.log(
  JSON.stringify({
    users: USERS,
    memoryPerUser: seen.memoryPerUser,
    measuredPerUser: measured,
    msPerPage: Number((elapsed / USERS).toFixed(3)),
    seenOfferedAgain: wrong,
    falsePositives,
    candidates: USERS * 400,
  }),
);
for (let u = 0; u < USERS; u++) await seen.forget(`user${u}`);
await client.close();
