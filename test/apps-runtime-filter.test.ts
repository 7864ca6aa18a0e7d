/**
 * RuntimeFilter between two PostgreSQL databases (one cluster started here): the build side
 * (`crm.customers`) ships a filter of its matching keys to the probe side (`warehouse.orders`,
 * 300,000 rows read through a server-side cursor), which sends across only the rows that may
 * match. The data is generated so that the true answer is known exactly.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packKeys, RuntimeFilter } from '../src/index.js';
import { type PostgresHandle, requirePostgres, startPostgres } from './support/postgres.js';

const CUSTOMERS = 100_000;
const ORDERS = 300_000; // 3 per customer
const FPP = 0.01;

/** Pages of [order id, customer id] from a server-side cursor over `warehouse.orders`. */
async function* orderPages(client: pg.Client, page = 10_000): AsyncGenerator<[number, number][]> {
  await client.query('BEGIN');
  try {
    await client.query(
      'DECLARE orders_cursor NO SCROLL CURSOR FOR SELECT id, customer_id FROM orders',
    );
    for (;;) {
      const result = await client.query<[number, number]>({
        text: `FETCH ${page} FROM orders_cursor`,
        rowMode: 'array',
      });
      if (result.rows.length === 0) break;
      yield result.rows;
    }
  } finally {
    await client.query('COMMIT');
  }
}

/** The probe side: streams its rows through the filter; returns the rows it sends across. */
async function probe(
  runtime: RuntimeFilter<number>,
  client: pg.Client,
): Promise<[number, number][]> {
  const sent: [number, number][] = [];
  for await (const page of orderPages(client)) {
    for (const row of runtime.filterPage(page, (r) => r[1])) sent.push(row);
  }
  return sent;
}

const hasPostgres = requirePostgres();

describe.skipIf(!hasPostgres)('RuntimeFilter across two PostgreSQL databases', () => {
  let server: PostgresHandle;
  let crm: pg.Client;
  let warehouse: pg.Client;

  beforeAll(async () => {
    server = await startPostgres();
    const admin = new pg.Client(server.connection());
    await admin.connect();
    await admin.query('CREATE DATABASE crm');
    await admin.query('CREATE DATABASE warehouse');
    await admin.end();
    crm = new pg.Client(server.connection('crm'));
    warehouse = new pg.Client(server.connection('warehouse'));
    await Promise.all([crm.connect(), warehouse.connect()]);
    await crm.query(
      `CREATE TABLE customers AS SELECT g::int AS id, (g % 100 = 0) AS vip, (g % 10 <> 0) AS active
       FROM generate_series(1, ${CUSTOMERS}) g`,
    );
    // 7919 is prime to 100,000, so every customer has exactly 3 orders, spread over the table.
    await warehouse.query(
      `CREATE TABLE orders AS SELECT g::int AS id, (1 + (g::bigint * 7919) % ${CUSTOMERS})::int AS customer_id
       FROM generate_series(1, ${ORDERS}) g`,
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all([crm, warehouse].map((c) => c?.end().catch(() => undefined)));
    await server?.stop();
  });

  it('ships a filter of the 1% that match; about (match rate + fpp) of the rows cross, none missing', async () => {
    const vip = (
      await crm.query<[number]>({ text: 'SELECT id FROM customers WHERE vip', rowMode: 'array' })
    ).rows.map((r) => r[0]);
    expect(vip).toHaveLength(CUSTOMERS / 100);
    const built = await RuntimeFilter.build(vip, { fpp: FPP, funnel: 'long' });
    const bytes = built.toBytes();
    // The key list it replaces, as 4-byte integers: the filter is smaller.
    expect(bytes.length).toBeLessThan(vip.length * 4);

    const runtime = RuntimeFilter.fromBytes<number>(bytes);
    const sent = await probe(runtime, warehouse);

    // Join on the build side: exactly the true matches (computed by the warehouse itself).
    const vipSet = new Set(vip);
    const joined = sent.filter((r) => vipSet.has(r[1])).length;
    const truth = await warehouse.query<{ n: string }>(
      'SELECT count(*) AS n FROM orders WHERE customer_id % 100 = 0',
    );
    expect(joined).toBe(Number(truth.rows[0]!.n));
    expect(joined).toBe(ORDERS / 100);

    // Rows sent across: matches plus false positives, about (m + p (1 - m)) of the table. The
    // non-matching keys are 99,000 customers with 3 orders each: 4 sigma is about 13% of p (1 - m).
    const m = 0.01;
    const fraction = sent.length / ORDERS;
    expect(fraction).toBeGreaterThan(m + 0.6 * FPP * (1 - m));
    expect(fraction).toBeLessThan(m + 1.4 * FPP * (1 - m));
    const stats = runtime.stats;
    expect(stats).toMatchObject({
      rows: ORDERS,
      checked: ORDERS,
      passed: sent.length,
      disabled: false,
    });
    expect(stats.dropped).toBe(ORDERS - sent.length);
    expect(stats.reason).toBeNull();
  }, 60_000);

  it('disables itself within the sample when 90% of the rows match, and says so', async () => {
    const active = (
      await crm.query<[number]>({ text: 'SELECT id FROM customers WHERE active', rowMode: 'array' })
    ).rows.map((r) => r[0]);
    expect(active).toHaveLength((CUSTOMERS * 9) / 10);
    const built = await RuntimeFilter.build(active, { fpp: FPP, funnel: 'long' });
    const runtime = RuntimeFilter.fromBytes<number>(built.toBytes(), { sampleSize: 10_000 });
    const sent = await probe(runtime, warehouse);
    const stats = runtime.stats;
    expect(stats.disabled).toBe(true);
    expect(stats.disabledAtRow).toBe(10_000);
    expect(stats.checked).toBe(10_000);
    expect(stats.rows).toBe(ORDERS);
    expect(stats.reason).toMatch(
      /of the first 10000 rows passed \(9\d\.\d% >= maxPassRate 90\.0%\)/,
    );
    // Only rows of the sample were dropped; everything after it crossed unchecked.
    expect(sent.length).toBe(ORDERS - stats.dropped);
    expect(stats.passed / stats.checked).toBeGreaterThanOrEqual(0.9);
  }, 60_000);
});

describe('RuntimeFilter without a database', () => {
  it('keeps checking a selective filter past the sample, and filter() streams async rows', async () => {
    const runtime = await RuntimeFilter.build<string>(['a', 'b'], { fpp: 0.001 });
    const rows = Array.from({ length: 300 }, (_, i) => ({ key: i % 100 === 0 ? 'a' : `x${i}` }));
    async function* source() {
      yield* rows;
    }
    const out: { key: string }[] = [];
    const small = new RuntimeFilter(runtime.membership, { sampleSize: 100 });
    for await (const row of small.filter(source(), (r) => r.key)) out.push(row);
    expect(out.filter((r) => r.key === 'a')).toHaveLength(3);
    expect(small.stats).toMatchObject({ rows: 300, checked: 300, disabled: false });
  });

  it('the shipped filter answers packed integer keys (hasBatch) as it answers has', async () => {
    // 1,000 'long' keys pack into 8,000 bytes: past packKeys' first 1 KiB buffer, which must grow.
    const built = await RuntimeFilter.build(
      Array.from({ length: 1_000 }, (_, i) => i * 7),
      { fpp: 0.01, funnel: 'long' },
    );
    const probe = Array.from({ length: 3_000 }, (_, i) => i);
    const flags = built.membership.hasBatch(packKeys('long', probe));
    expect(Array.from(flags, Boolean)).toEqual(probe.map((k) => built.membership.has(k)));
  });

  it('rejects bad arguments by name', async () => {
    await expect(RuntimeFilter.build(['a'], { fpp: 1.5 })).rejects.toThrow(
      'options.fpp must be in (0, 1), got 1.5',
    );
    const built = await RuntimeFilter.build(['a'], { fpp: 0.01 });
    expect(() => new RuntimeFilter(built.membership, { sampleSize: 0 })).toThrow(
      'options.sampleSize must be a positive safe integer, got 0',
    );
    expect(() => new RuntimeFilter(built.membership, { maxPassRate: 0 })).toThrow(
      'options.maxPassRate must be in (0, 1], got 0',
    );
    expect(() => built.filterPage([1], 'x' as never)).toThrow('keyOf must be a function, got "x"');
    expect(() => new RuntimeFilter({} as never)).toThrow(/filter must be a MembershipFilter/);
  });
});
