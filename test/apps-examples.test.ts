/**
 * Runs every program in examples/ against real servers started here, and checks the figures each
 * prints (its last line, JSON). Each program is bundled once with esbuild (the engine of tsx, with
 * which a user runs it: `npx tsx examples/<name>.ts`) and run with `node`, so that a run does not
 * compile bloomkit's sources first (~1 s of CPU each). The sizes are smaller than the programs'
 * defaults to keep the suite fast; the figures of docs/guide/applications.md come from runs of the
 * same programs at the sizes it states.
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresHandle, requirePostgres, startPostgres } from './support/postgres.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';
import { runJs } from './support/run-ts.js';
import { bundleProgram, removeBundles } from './support/worker-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));
afterAll(removeBundles);

/** Runs an example; resolves to its output, failing with its stderr when it exits non-zero. */
async function run<T>(name: string, env: Record<string, string>): Promise<T> {
  const program = await bundleProgram(new URL(`../examples/${name}.ts`, import.meta.url));
  const { code, stdout, stderr } = await runJs(program, [], { cwd: root, env });
  expect(code, `${name} failed:\n${stderr}`).toBe(0);
  process.stdout.write(`--- examples/${name}.ts\n${stdout}`);
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

const hasPostgres = requirePostgres();
const hasRedis = requireRedis();

describe.skipIf(!hasPostgres)('examples against PostgreSQL', () => {
  let server: PostgresHandle;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startPostgres();
    const admin = new pg.Client(server.connection());
    await admin.connect();
    for (const db of ['shop', 'crm', 'warehouse']) await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    env = { PGHOST: server.host, PGPORT: String(server.port), PGUSER: 'postgres' };
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('cache-guard.ts: 90% absent ids, about 1% of them reach the database', async () => {
    const last = await run<{
      rows: number;
      requests: number;
      found: number;
      queries: number;
      falsePositives: number;
      newIdServed: boolean;
    }>('cache-guard', { ...env, PGDATABASE: 'shop', ROWS: '20000', REQUESTS: '10000' });
    expect(last.rows).toBe(20_000);
    const absent = last.requests - last.found;
    expect(absent).toBeGreaterThan(0.85 * last.requests);
    // The found ids, the false positives, and the one get of the id inserted at the end.
    expect(last.queries).toBe(last.found + last.falsePositives + 1);
    expect(last.falsePositives).toBeLessThanOrEqual(1.5 * 0.01 * absent);
    expect(last.newIdServed).toBe(true);
  }, 120_000);

  it('runtime-filter.ts: ships a filter instead of rows; turns itself off at 90% match', async () => {
    interface Join {
      buildKeys: number;
      filterBytes: number;
      keyListBytes: number;
      rows: number;
      sent: number;
      disabledAtRow: number | null;
    }
    const last = await run<{ selective: Join; broad: Join }>('runtime-filter', {
      ...env,
      BUILD_DATABASE: 'crm',
      PROBE_DATABASE: 'warehouse',
      ORDERS: '40000',
    });
    const { selective, broad } = last;
    expect(selective.buildKeys).toBe(1_000);
    expect(selective.filterBytes).toBeLessThan(selective.keyListBytes);
    expect(selective.sent / selective.rows).toBeLessThan(0.01 + 1.4 * 0.01);
    expect(selective.disabledAtRow).toBeNull();
    expect(broad.disabledAtRow).toBe(10_000);
  }, 120_000);
});

describe.skipIf(!hasRedis)('examples against Redis', () => {
  let redis: RedisServerHandle;

  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);

  afterAll(async () => {
    await redis?.stop();
  });

  it('seen-set.ts: bounded memory per user, no seen post offered again', async () => {
    const last = await run<{
      seenOfferedAgain: number;
      falsePositives: number;
      candidates: number;
      memoryPerUser: number;
      measuredPerUser: number;
    }>('seen-set', { REDIS_URL: redis.url, USERS: '20' });
    expect(last.seenOfferedAgain).toBe(0);
    expect(last.falsePositives / last.candidates).toBeLessThan(0.015);
    expect(last.measuredPerUser).toBeGreaterThanOrEqual(last.memoryPerUser);
    expect(last.measuredPerUser).toBeLessThan(last.memoryPerUser + 30 * 128);
  }, 120_000);
});

describe('examples without a server', () => {
  it('deduper.ts: every URL queued before the last checkpoint is known after a restart', async () => {
    const last = await run<{
      links: number;
      fresh: number;
      duplicates: number;
      checkpoints: number;
      forgotten: number;
      queued: number;
    }>('deduper', { PAGES: '6000' });
    expect(last.forgotten).toBe(0);
    expect(last.queued).toBe(last.fresh);
    expect(last.fresh + last.duplicates).toBe(last.links + 1);
    expect(last.checkpoints).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
