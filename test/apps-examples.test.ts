/**
 * Runs every program in examples/ against real servers started here, and checks the figures each
 * prints (its last line, JSON). Each program is bundled once with esbuild (the engine of tsx, with
 * which a user runs it: `npx tsx examples/<name>.ts`) and run with `node`, so that a run does not
 * compile bloomkit's sources first (~1 s of CPU each). runtime-filter.ts and seen-set.ts run with
 * their defaults, and the figures docs/guide/applications.md quotes for them are checked against
 * what they print; cache-guard.ts and deduper.ts run at smaller sizes than their defaults.
 *
 * Without the service an example needs (no server, no database), it prints one line saying what to
 * start and how, and exits with status 1: no stack trace.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getFreePort } from './support/ports.js';
import { type PostgresHandle, requirePostgres, startPostgres } from './support/postgres.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';
import { runJs } from './support/run-ts.js';
import { bundleProgram, removeBundles } from './support/worker-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));
afterAll(removeBundles);

/** The guide's section on the examples, whose figures must be those the examples print. */
const GUIDE = readFileSync(join(root, 'docs', 'guide', 'applications.md'), 'utf8').replace(
  /\s+/g,
  ' ',
);
/** A number as the guide writes it: 300,000. */
const fmt = (n: number): string => n.toLocaleString('en-US');

/** Runs an example; resolves to its output, failing with its stderr when it exits non-zero. */
async function run<T>(name: string, env: Record<string, string>): Promise<T> {
  const { code, stdout, stderr } = await runExample(name, env);
  expect(code, `${name} failed:\n${stderr}`).toBe(0);
  process.stdout.write(`--- examples/${name}.ts\n${stdout}`);
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

/** Runs an example (bundled once) with `env` on top of this process's environment. */
async function runExample(name: string, env: Record<string, string>) {
  const program = await bundleProgram(new URL(`../examples/${name}.ts`, import.meta.url));
  return runJs(program, [], { cwd: root, env });
}

/** Checks that an example said what to start in one line on stderr and exited with status 1. */
async function expectOneLine(name: string, env: Record<string, string>, says: RegExp) {
  const { code, stdout, stderr } = await runExample(name, env);
  expect(code, `${name}: ${stderr}`).toBe(1);
  expect(stdout).toBe('');
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^${name}: `));
  expect(lines[0]).toMatch(says);
  expect(stderr).not.toMatch(/^\s+at /m);
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

  it('cache-guard.ts without its database: one line saying how to create it', async () => {
    await expectOneLine(
      'cache-guard',
      { ...env, PGDATABASE: 'nosuch' },
      /database "nosuch" .*does not exist; create it \(createdb .* nosuch\)/,
    );
  }, 60_000);

  it('runtime-filter.ts (defaults): ships a filter instead of rows; turns itself off at 90% match; the guide quotes its figures', async () => {
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
    });
    const { selective, broad } = last;
    expect(selective.buildKeys).toBe(1_000);
    expect(selective.filterBytes).toBeLessThan(selective.keyListBytes);
    expect(selective.sent / selective.rows).toBeLessThan(0.01 + 1.4 * 0.01);
    expect(selective.disabledAtRow).toBeNull();
    expect(broad.disabledAtRow).toBe(10_000);
    // The guide's figures are this run's.
    const percent = ((100 * selective.sent) / selective.rows).toFixed(2);
    for (const figure of [
      `${fmt(selective.rows)} orders`,
      `${fmt(selective.filterBytes)}-byte filter`,
      `${fmt(selective.keyListBytes)} bytes`,
      `${fmt(selective.sent)} of ${fmt(selective.rows)} rows (${percent}%)`,
      `off at row ${fmt(broad.disabledAtRow!)}`,
    ]) {
      expect(GUIDE, figure).toContain(figure);
    }
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

  it('seen-set.ts (defaults): bounded memory per user, no seen post offered again; the guide quotes its figures', async () => {
    const last = await run<{
      users: number;
      seenOfferedAgain: number;
      falsePositives: number;
      candidates: number;
      memoryPerUser: number;
      measuredPerUser: number;
    }>('seen-set', { REDIS_URL: redis.url });
    expect(last.seenOfferedAgain).toBe(0);
    expect(last.falsePositives / last.candidates).toBeLessThan(0.015);
    expect(last.measuredPerUser).toBeGreaterThanOrEqual(last.memoryPerUser);
    expect(last.measuredPerUser).toBeLessThan(last.memoryPerUser + 30 * 128);
    const percent = ((100 * last.falsePositives) / last.candidates).toFixed(2);
    for (const figure of [
      `${fmt(last.users)} users`,
      `${fmt(last.memoryPerUser)} bytes of bitmaps per user`,
      `${fmt(last.falsePositives)} of ${fmt(last.candidates)} new posts (${percent}%)`,
    ]) {
      expect(GUIDE, figure).toContain(figure);
    }
    // What Redis reports depends on its version's allocator: the guide's figure within 10%.
    const quoted = /MEMORY USAGE reported about ([\d,]+) bytes/.exec(GUIDE);
    expect(quoted, 'the guide quotes MEMORY USAGE').not.toBeNull();
    const bytes = Number(quoted![1]!.replaceAll(',', ''));
    expect(Math.abs(bytes - last.measuredPerUser)).toBeLessThanOrEqual(0.1 * last.measuredPerUser);
  }, 120_000);
});

describe('examples without their server: one line saying what to start, exit status 1', () => {
  it('cache-guard.ts and runtime-filter.ts with no PostgreSQL server', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'bloomkit-no-pg-'));
    try {
      const env = { PGHOST: empty, PGPORT: '5432', PGDATABASE: 'shop' };
      for (const name of ['cache-guard', 'runtime-filter']) {
        await expectOneLine(name, env, /no PostgreSQL server .*\(ENOENT\); start one/);
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);

  it('seen-set.ts with no Redis server', async () => {
    const url = `redis://127.0.0.1:${await getFreePort()}`;
    await expectOneLine(
      'seen-set',
      { REDIS_URL: url },
      /no Redis server at redis:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); start one \(redis-server/,
    );
  }, 60_000);
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
