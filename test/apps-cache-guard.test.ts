/**
 * CacheGuard against a real PostgreSQL (started here, one cluster for this file) holding 1,000,000
 * rows: the database itself (pg_stat_statements) counts the queries that get through, rebuilds
 * run from a server-side cursor while requests and inserts go on, and a Redis filter is shared
 * with a second process.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BloomFilter, CacheGuard } from '../src/index.js';
import { RedisBloomFilter } from '../src/redis.js';
import { type PostgresHandle, requirePostgres, startPostgres } from './support/postgres.js';
import { createItems, cursorIds, statementCalls } from './support/postgres-items.js';
import { mulberry32 } from './support/random.js';
import { type NodeClient, nodeClient } from './support/redis-clients.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';
import { runJs } from './support/run-ts.js';
import { bundleProgram, removeBundles } from './support/worker-bundle.js';

const ROWS = 1_000_000;
const FPP = 0.01;
/**
 * The rows of the table behind the shared Redis filter, and the filter's capacity: every id of
 * them goes into Redis key by key (about 25 us of CPU each), so fewer than the in-memory guard's.
 */
const ACCOUNTS = 5_000;
const ACCOUNTS_CAPACITY = 6_250;
const LOAD_ONE = 'SELECT id, value FROM items WHERE id = $1';
const LOAD_MANY = 'SELECT id, value FROM items WHERE id = ANY($1)';

interface Item {
  id: number;
  value: number;
}

/**
 * A few milliseconds between a simulated client's requests: they still overlap the whole rebuild,
 * without taking every turn of the event loop (and the server) from the scan they run beside.
 */
const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 4));

/** An id in the table's range that is not a multiple of 3, so certainly absent. */
function absentId(random: () => number): number {
  const g = 1 + Math.floor(random() * ROWS);
  return 3 * g + 1 + (g & 1);
}

const presentId = (random: () => number): number => 3 * (1 + Math.floor(random() * ROWS));

const hasPostgres = requirePostgres();
afterAll(removeBundles);

describe.skipIf(!hasPostgres)('CacheGuard in front of PostgreSQL (1,000,000 rows)', () => {
  let server: PostgresHandle;
  let db: pg.Client; // requests
  let scan: pg.Client; // the rebuild's cursor
  let admin: pg.Client; // statistics
  let guard: CacheGuard<number, Item>;

  const newFilter = () => BloomFilter.create({ funnel: 'int', capacity: 1_100_000, fpp: FPP });

  beforeAll(async () => {
    server = await startPostgres({ preload: ['pg_stat_statements'] });
    db = new pg.Client(server.connection());
    scan = new pg.Client(server.connection());
    admin = new pg.Client(server.connection());
    await Promise.all([db.connect(), scan.connect(), admin.connect()]);
    await admin.query('CREATE EXTENSION pg_stat_statements');
    await createItems(admin, ROWS);
    guard = new CacheGuard<number, Item>({
      filter: newFilter(),
      load: async (id) => (await db.query<Item>(LOAD_ONE, [id])).rows[0] ?? null,
      loadMany: async (ids) => {
        const byId = new Map((await db.query<Item>(LOAD_MANY, [ids])).rows.map((r) => [r.id, r]));
        return ids.map((id) => byId.get(id) ?? null);
      },
      createFilter: newFilter,
    });
    // The table's ids are 3, 6, ..., 3 x ROWS: fill the first filter from that (the rebuild test
    // below reads them back through a server-side cursor).
    const first = await guard.rebuild([Array.from({ length: ROWS }, (_, i) => 3 * (i + 1))]);
    expect(first).toEqual({ scanned: ROWS, addedDuringRebuild: 0 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([db, scan, admin].map((c) => c?.end().catch(() => undefined)));
    await server?.stop();
  });

  it('lets through at most 1.5 x fpp of 100,000 requests for absent ids, counted by PostgreSQL', async () => {
    await admin.query('SELECT pg_stat_statements_reset()');
    const before = guard.stats;
    const random = mulberry32(14);
    const n = 100_000;
    let wrong = 0;
    for (let i = 0; i < n; i++) if ((await guard.get(absentId(random))) !== null) wrong++;
    const after = guard.stats;
    const executed = await statementCalls(admin, LOAD_ONE);
    expect(wrong).toBe(0);
    expect(after.requests - before.requests).toBe(n);
    // The database saw exactly the loads the guard let through, and no more than 1.5 x fpp x n.
    expect(executed).toBe(after.loads - before.loads);
    expect(executed).toBeLessThanOrEqual(1.5 * FPP * n);
    // ... and about the rate the filter's bits imply (it holds 1.0M keys, sized for 1.1M): a
    // guard that let nothing through would fail here. 4-sigma binomial tolerance.
    const rate = (guard.filter as BloomFilter).expectedFpp();
    expect(rate).toBeLessThan(FPP);
    const sigma = Math.sqrt(n * rate * (1 - rate));
    expect(Math.abs(executed - n * rate)).toBeLessThan(4 * sigma);
    expect(after.falsePositives - before.falsePositives).toBe(executed);
    expect(after.filtered - before.filtered).toBe(n - executed);
  });

  it('answers every present id with its row, one by one and in batches', async () => {
    const random = mulberry32(41);
    let wrong = 0;
    for (let i = 0; i < 250; i++) {
      const id = presentId(random);
      const row = await guard.get(id);
      if (row?.id !== id || row.value !== id / 3) wrong++;
    }
    for (let batch = 0; batch < 5; batch++) {
      const ids = Array.from({ length: 500 }, (_, i) =>
        i % 2 === 0 ? presentId(random) : absentId(random),
      );
      const rows = await guard.getMany(ids);
      ids.forEach((id, i) => {
        const expected = i % 2 === 0 ? { id, value: id / 3 } : null;
        if (JSON.stringify(rows[i]) !== JSON.stringify(expected)) wrong++;
      });
    }
    expect(wrong).toBe(0);
  });

  it('rebuilds from a server-side cursor while requests and inserts run; no inserted id is refused', async () => {
    const old = guard.filter;
    const random = mulberry32(7);
    const inserted: number[] = [];
    let wrong = 0;
    let requestsDuringRebuild = 0;
    const writer = async (): Promise<void> => {
      // New ids beyond the table, announced once their INSERT committed (the write-through rule).
      for (let id = 3 * (ROWS + 1); guard.stats.rebuilding; id += 3) {
        await db.query('INSERT INTO items (id, value) VALUES ($1, $2)', [id, id / 3]);
        await guard.added(id);
        inserted.push(id);
        if ((await guard.get(id))?.id !== id) wrong++;
        await pause(); // requests at a steady pace, not as fast as the event loop turns
      }
    };
    const reader = async (): Promise<void> => {
      while (guard.stats.rebuilding) {
        const ids = Array.from({ length: 200 }, () => presentId(random));
        const rows = await guard.getMany(ids);
        requestsDuringRebuild += ids.length;
        ids.forEach((id, i) => {
          if (rows[i]?.id !== id) wrong++;
        });
        await pause();
      }
    };
    const rebuilt = guard.rebuild(cursorIds(scan));
    expect(guard.stats.rebuilding).toBe(true);
    const [report] = await Promise.all([rebuilt, writer(), reader()]);
    expect(guard.stats.rebuilding).toBe(false);
    // Not `.not.toBe(old)`: on two different objects it deep-compares them for its message
    // (12 s for two 1.3 MB filters).
    expect(guard.filter === old, 'the rebuilt filter replaced the old one').toBe(false);
    expect(wrong).toBe(0);
    expect(requestsDuringRebuild).toBeGreaterThan(0);
    // Some ids were inserted after the cursor's snapshot: only `added` put them in the new filter.
    const afterSnapshot = inserted.length - (report.scanned - ROWS);
    expect(afterSnapshot).toBeGreaterThan(0);
    // Every id but perhaps the last (announced after the swap, into the new filter directly).
    expect(report.addedDuringRebuild).toBeGreaterThanOrEqual(inserted.length - 1);
    expect(report.addedDuringRebuild).toBeLessThanOrEqual(inserted.length);
    const rows = await guard.getMany(inserted);
    expect(rows.map((r) => r?.id)).toEqual(inserted);
    expect(inserted.every((id) => guard.filter.has(id) === true)).toBe(true);
  }, 60_000);

  it('keeps the old filter when the scan fails, and rejects bad arguments by name', async () => {
    const old = guard.filter;
    async function* failing(): AsyncGenerator<number> {
      yield 3;
      throw new Error('connection lost');
    }
    await expect(guard.rebuild(failing())).rejects.toThrow('connection lost');
    expect(guard.filter).toBe(old);
    expect(guard.stats.rebuilding).toBe(false);
    await expect(guard.rebuild([], { into: old })).rejects.toThrow(
      /must not be the serving filter/,
    );
    await expect(guard.rebuild([], { chunk: 0 })).rejects.toThrow(/options.chunk .* got 0/);
    expect(() => new CacheGuard({ filter: {} as never, load: async () => null })).toThrow(
      /options.filter must be a MembershipFilter/,
    );
    expect(() => new CacheGuard({ filter: old, load: 'x' as never })).toThrow(
      /options.load must be a function, got "x"/,
    );
  });

  it('an abort settles a rebuild whose scan is stuck on a lock, and the next rebuild runs', async () => {
    const old = guard.filter;
    // Another session holds a lock the scan's query waits for: the scan is stuck in the database.
    const locker = new pg.Client(server.connection());
    const stuck = new pg.Client(server.connection());
    await Promise.all([locker.connect(), stuck.connect()]);
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE items IN ACCESS EXCLUSIVE MODE');
      const controller = new AbortController();
      const rebuilt = guard.rebuild(cursorIds(stuck), { signal: controller.signal });
      rebuilt.catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(guard.stats.rebuilding).toBe(true);
      const started = Date.now();
      controller.abort(new Error('stop the rebuild'));
      const outcome = await Promise.race([
        rebuilt.then(
          () => 'resolved',
          (error: Error) => error.message,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still running after 2 s'), 2000)),
      ]);
      expect(outcome).toBe('stop the rebuild');
      expect(Date.now() - started).toBeLessThan(1000);
      expect(guard.stats.rebuilding).toBe(false);
      expect(guard.filter).toBe(old);
      // The next rebuild may start (not "already running"): this one ends at its own abort.
      const next = guard.rebuild([[3]], { signal: AbortSignal.abort(new Error('next one')) });
      await expect(next).rejects.toThrow('next one');
      expect(guard.filter).toBe(old);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await Promise.all([locker.end(), stuck.end()].map((p) => p.catch(() => undefined)));
    }
  });

  const hasRedis = requireRedis();

  describe.skipIf(!hasRedis)('with a Redis filter shared by two processes', () => {
    let redis: RedisServerHandle;
    let client: NodeClient;

    beforeAll(async () => {
      redis = await startRedis();
      client = nodeClient(redis.url);
      await client.connect();
    }, 30_000);

    afterAll(async () => {
      await client?.close().catch(() => undefined);
      await redis?.stop();
    });

    it('an id added by one process is let through by the other; absent ids stay filtered', async () => {
      await createItems(admin, ACCOUNTS, 'accounts');
      const filter = await RedisBloomFilter.create(client, 'accounts', {
        capacity: ACCOUNTS_CAPACITY,
        fpp: FPP,
        funnel: 'int',
      });
      for await (const page of cursorIds(scan, 'accounts')) await filter.addMany(page);
      const guard = new CacheGuard<number, Item>({
        filter,
        load: async (id) =>
          (await db.query<Item>('SELECT id, value FROM accounts WHERE id = $1', [id])).rows[0] ??
          null,
      });

      // Bundled (plain JavaScript for node): no compile of bloomkit's sources in the child.
      const program = await bundleProgram(
        new URL('./support/cache-guard-process.ts', import.meta.url),
      );
      const { code, stdout, stderr } = await runJs(program, [
        redis.url,
        server.host,
        String(server.port),
        'accounts',
        'accounts',
        String(3 * 30_000),
        '50',
        '5000',
        '99',
      ]);
      expect(code, stderr).toBe(0);
      const other = JSON.parse(stdout) as {
        inserted: number[];
        wrong: number;
        stats: { requests: number; loads: number; filtered: number };
      };
      expect(other.inserted).toHaveLength(50);
      expect(other.wrong).toBe(0);
      expect(other.stats.requests).toBe(5000);
      expect(other.stats.loads).toBeLessThanOrEqual(1.5 * FPP * 5000);

      // This process never called `added` for them: only the shared filter lets them through.
      for (const id of other.inserted) expect((await guard.get(id))?.id).toBe(id);
      const random = mulberry32(3);
      // 2,000 absent ids, 250 requests in flight at a time (each its own get: one Redis query
      // each, pipelined by the client, instead of 2,000 round trips one after the other).
      const served: number[] = [];
      for (let done = 0; done < 2000; done += 250) {
        const ids = Array.from({ length: 250 }, () => absentId(random));
        const rows = await Promise.all(ids.map((id) => guard.get(id)));
        rows.forEach((row, i) => {
          if (row !== null) served.push(ids[i]!);
        });
      }
      expect(served).toEqual([]);
      expect(guard.stats.requests).toBe(50 + 2000);
      expect(guard.stats.loads - 50).toBeLessThanOrEqual(1.5 * FPP * 2000);
    }, 60_000);

    it('rebuilds into a new Redis filter from a cursor while inserts run (async writes are awaited)', async () => {
      const old = await RedisBloomFilter.open(client, 'accounts');
      const guard = new CacheGuard<number, Item>({
        filter: old,
        load: async (id) =>
          (await db.query<Item>('SELECT id, value FROM accounts WHERE id = $1', [id])).rows[0] ??
          null,
        createFilter: () =>
          RedisBloomFilter.create(client, 'accounts:v2', {
            capacity: ACCOUNTS_CAPACITY,
            fpp: FPP,
            funnel: 'int',
          }),
      });
      const count = await admin.query<{ n: string }>('SELECT count(*) AS n FROM accounts');
      const before = Number(count.rows[0]!.n);
      const inserted: number[] = [];
      const writer = async (): Promise<void> => {
        for (let id = 3 * 40_000; guard.stats.rebuilding; id += 3) {
          await db.query('INSERT INTO accounts (id, value) VALUES ($1, $2)', [id, id / 3]);
          await guard.added(id);
          inserted.push(id);
        }
      };
      const [report] = await Promise.all([
        guard.rebuild(cursorIds(scan, 'accounts', 1_000)),
        writer(),
      ]);
      expect(report.scanned).toBeGreaterThanOrEqual(before);
      expect(inserted.length).toBeGreaterThan(report.scanned - before); // some after the snapshot
      const fresh = await RedisBloomFilter.open(client, 'accounts:v2');
      expect(guard.filter === old, 'the rebuilt filter replaced the old one').toBe(false);
      expect((await fresh.hasMany(inserted)).every(Boolean)).toBe(true);
      for (const id of inserted) expect((await guard.get(id))?.id).toBe(id);
    }, 60_000);
  });
});
