/**
 * `npm run bench:apps` (or `npx tsx bench/apps/run.ts`): what the application components cost.
 *
 * - CacheGuard, in memory: time per request for an absent id that the filter refuses (a
 *   "filtered miss"), `await guard.get(id)` one at a time, beside the bare `filter.has(id)` it
 *   wraps; the difference is the guard's overhead (target: under 2 µs). Also `getMany` in
 *   batches of 1,000.
 * - CacheGuard, Redis filter: commands and time per filtered miss (target: one round trip), one
 *   request at a time and in batches of 500 (one round trip per batch).
 * - RuntimeFilter: probe rows per second through `filterPage` (pages of 10,000 rows) and through
 *   the async `filter` generator, with a filter of 10,000 build keys (1% of 1,000,000 rows).
 * - RedisSeenSet: time for `unseen` of 500 candidates with 30 full generations.
 *
 * Correctness is checked before timing (no refused present id, the false positive count). Each
 * figure is the best of `--rounds` rounds (default 5) after a warm-up. The run starts its own
 * redis-server (skipped with a message if there is none) and holds /tmp/bloomkit-bench.lock
 * (flock) so that benchmarks never overlap on a shared machine.
 *
 *   npx tsx bench/apps/run.ts [--rounds 5] [--json]
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { BloomFilter, CacheGuard, RuntimeFilter } from '../../src/index.js';
import { RedisBloomFilter, RedisSeenSet } from '../../src/redis.js';
import { redisAvailable, startRedis } from '../../test/support/redis-server.js';

const LOCK = '/tmp/bloomkit-bench.lock';
const argv = process.argv.slice(2);
const rounds = Number(argv[argv.indexOf('--rounds') + 1] ?? 5) || 5;
const json = argv.includes('--json');

/** Re-runs this script under `flock` unless it already holds the lock (as bench/run.ts does). */
function takeLock(): void {
  if (process.env.BLOOMKIT_BENCH_LOCKED === '1') return;
  if (spawnSync('flock', ['--version']).status !== 0) return;
  const run = spawnSync(
    'flock',
    [LOCK, process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...argv],
    { stdio: 'inherit', env: { ...process.env, BLOOMKIT_BENCH_LOCKED: '1' } },
  );
  process.exit(run.status ?? 1);
}

/** Best of `rounds` runs of `fn` (after one warm-up), in ms. */
async function best(fn: () => Promise<void> | void): Promise<number> {
  await fn();
  let min = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    await fn();
    min = Math.min(min, performance.now() - start);
  }
  return min;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`benchmark correctness check failed: ${what}`);
}

takeLock();
const results: Record<string, number | string> = {};
const FPP = 0.01;
const N = 1_000_000;

// ---- CacheGuard, in memory
{
  const filter = BloomFilter.create({ funnel: 'int', capacity: N, fpp: FPP });
  for (let i = 0; i < N; i++) filter.add(2 * i);
  let loads = 0;
  const guard = new CacheGuard<number, number>({
    filter,
    load: async (id) => {
      loads++;
      return id % 2 === 0 ? id : null;
    },
  });
  // Absent ids the filter refuses: odd ids, minus its false positives (found once, up front).
  const refused: number[] = [];
  for (let i = 0; refused.length < 200_000; i++)
    if (!filter.has(2 * i + 1)) refused.push(2 * i + 1);
  const probes = 2 * N;
  let fp = 0;
  for (let i = 0; i < probes; i += 2) if (filter.has(i + 1)) fp++;
  check(fp <= 1.5 * FPP * N, `false positives ${fp} of ${N}`);
  for (let i = 0; i < 10_000; i++) check((await guard.get(2 * i)) === 2 * i, `present id ${2 * i}`);
  loads = 0;
  const n = refused.length;
  let sink = 0;
  const bare = await best(() => {
    for (let i = 0; i < n; i++) if (filter.has(refused[i]!)) sink++;
  });
  const single = await best(async () => {
    for (let i = 0; i < n; i++) if ((await guard.get(refused[i]!)) !== null) sink++;
  });
  const batched = await best(async () => {
    for (let i = 0; i < n; i += 1000) await guard.getMany(refused.slice(i, i + 1000));
  });
  check(loads === 0 && sink === 0, 'a refused id reached the loader');
  results.guardBareHasNs = (bare * 1e6) / n;
  results.guardGetNs = (single * 1e6) / n;
  results.guardOverheadNs = ((single - bare) * 1e6) / n;
  results.guardGetManyNs = (batched * 1e6) / n;
}

// ---- RuntimeFilter
{
  const buildKeys = Array.from({ length: 10_000 }, (_, i) => i * 100);
  const runtime = await RuntimeFilter.build(buildKeys, { fpp: FPP, funnel: 'long' });
  const rows: [number, number][] = Array.from({ length: N }, (_, i) => [i, i]);
  const pages: [number, number][][] = [];
  for (let i = 0; i < N; i += 10_000) pages.push(rows.slice(i, i + 10_000));
  let sent = 0;
  const probe = RuntimeFilter.fromBytes<number>(runtime.toBytes());
  for (const page of pages) sent += probe.filterPage(page, (r) => r[1]).length;
  check(sent >= 10_000 && sent < 10_000 + 1.5 * FPP * N, `rows sent ${sent}`);
  const paged = await best(() => {
    for (const page of pages) probe.filterPage(page, (r) => r[1]);
  });
  const streamed = await best(async () => {
    for await (const _ of probe.filter(rows, (r) => r[1])) sent++;
  });
  results.runtimeRowsPerSecPage = Math.round(N / (paged / 1000));
  results.runtimeRowsPerSecStream = Math.round(N / (streamed / 1000));
  results.runtimeFilterBytes = runtime.toBytes().length;
}

// ---- Redis
const redisOk = redisAvailable();
if (!redisOk.ok) {
  console.warn(`bench:apps: skipping the Redis figures: ${redisOk.reason}`);
} else {
  const server = await startRedis();
  const client = createClient({ url: server.url });
  await client.connect();
  try {
    let commands = 0;
    const counting = {
      sendCommand: (args: readonly (string | Buffer)[], options?: object) => {
        commands++;
        return client.sendCommand(args as (string | Buffer)[], options);
      },
    };
    const ids = Array.from({ length: 100_000 }, (_, i) => 2 * i);
    const filter = await RedisBloomFilter.create(counting, 'bench-guard', {
      capacity: ids.length,
      fpp: FPP,
      funnel: 'int',
    });
    await filter.addMany(ids);
    const guard = new CacheGuard<number, number>({ filter, load: async () => null });
    const refused: number[] = [];
    for (let i = 0; refused.length < 5_000; i++) {
      if (!(await filter.has(2 * i + 1))) refused.push(2 * i + 1);
    }
    commands = 0;
    for (const id of refused) await guard.get(id);
    check(guard.stats.loads === 0, 'a refused id reached the loader');
    results.redisCommandsPerMiss = commands / refused.length;
    const single = await best(async () => {
      for (const id of refused) await guard.get(id);
    });
    const batched = await best(async () => {
      for (let i = 0; i < refused.length; i += 500) await guard.getMany(refused.slice(i, i + 500));
    });
    results.redisGetUs = (single * 1000) / refused.length;
    results.redisGetManyUs = (batched * 1000) / refused.length;

    const DAY = 86_400_000;
    let clock = Date.now();
    const seen = new RedisSeenSet(client, 'bench-seen', {
      capacity: 200,
      fpp: FPP,
      now: () => clock,
    });
    for (let d = 0; d < 30; d++) {
      clock += DAY;
      await seen.markSeen(
        'u',
        Array.from({ length: 200 }, (_, i) => `d${d}:${i}`),
      );
    }
    const candidates = Array.from({ length: 500 }, (_, i) =>
      i < 100 ? `d${i % 30}:${i}` : `n${i}`,
    );
    const page = await best(async () => {
      await seen.unseen('u', candidates);
    });
    results.seenUnseen500Ms = page;
  } finally {
    await client.close();
    await server.stop();
  }
}

results.node = process.version;
results.cpus = `${cpus().length} x ${cpus()[0]?.model ?? '?'}`;
results.load = loadavg()[0]!.toFixed(2);
if (json) {
  console.log(JSON.stringify(results));
} else {
  const f = (v: unknown, digits = 0) => (typeof v === 'number' ? v.toFixed(digits) : String(v));
  console.log(`bench:apps (best of ${rounds}; ${results.cpus}; load ${results.load})`);
  console.log(
    `CacheGuard, in memory, filtered miss: ${f(results.guardGetNs)} ns per await guard.get (bare filter.has ${f(results.guardBareHasNs)} ns; guard overhead ${f(results.guardOverheadNs)} ns); getMany: ${f(results.guardGetManyNs)} ns per id`,
  );
  if (results.redisGetUs !== undefined) {
    console.log(
      `CacheGuard, Redis filter, filtered miss: ${f(results.redisCommandsPerMiss, 2)} commands (round trips) per get, ${f(results.redisGetUs, 1)} µs per get; getMany of 500: ${f(results.redisGetManyUs, 2)} µs per id`,
    );
    console.log(
      `RedisSeenSet: unseen of 500 candidates over 30 generations: ${f(results.seenUnseen500Ms, 2)} ms (one round trip)`,
    );
  }
  console.log(
    `RuntimeFilter: ${f(results.runtimeRowsPerSecPage)} rows/s (filterPage), ${f(results.runtimeRowsPerSecStream)} rows/s (async filter); filter of 10,000 keys = ${results.runtimeFilterBytes} bytes`,
  );
}
