/**
 * RuntimeFilter: join orders (one database) with the 1% of customers that are VIPs (another
 * database) without moving the orders table. The customer side ships a Bloom filter of its VIP
 * ids; the order side sends across only the rows that may match.
 *
 * Connects with the usual PG* environment variables; BUILD_DATABASE holds `customers`,
 * PROBE_DATABASE holds `orders` (both default to PGDATABASE). Creates the tables if missing
 * (CUSTOMERS customers, 1% VIP; ORDERS orders). Prints rows and bytes moved with and without the
 * filter, then repeats with a 90%-match join, where the filter turns itself off. The last line is
 * the figures as JSON.
 *
 *   PGHOST=/var/run/postgresql BUILD_DATABASE=crm PROBE_DATABASE=warehouse \
 *     npx tsx examples/runtime-filter.ts
 */
import pg from 'pg';
import { RuntimeFilter } from '../src/index.js'; // in your project: 'bloomkit'
import { connectPostgres } from './services.js';

const CUSTOMERS = Number(process.env.CUSTOMERS ?? 100_000);
const ORDERS = Number(process.env.ORDERS ?? 300_000);
const crm = new pg.Client({ database: process.env.BUILD_DATABASE });
const warehouse = new pg.Client({ database: process.env.PROBE_DATABASE });
await connectPostgres(crm, 'runtime-filter');
await connectPostgres(warehouse, 'runtime-filter');
await crm.query(
  `CREATE TABLE IF NOT EXISTS customers AS SELECT g::int AS id, (g % 100 = 0) AS vip, (g % 10 <> 0) AS active
   FROM generate_series(1, ${CUSTOMERS}) g`,
);
await warehouse.query(
  `CREATE TABLE IF NOT EXISTS orders AS SELECT g::int AS id, (1 + (g::bigint * 7919) % ${CUSTOMERS})::int AS customer_id,
   (g % 500)::int AS amount FROM generate_series(1, ${ORDERS}) g`,
);

/** The probe side: reads its table through a cursor and keeps the rows that pass. */
async function probe(runtime: RuntimeFilter<number>): Promise<{ sent: number; seconds: number }> {
  let sent = 0;
  let filtering = 0;
  await warehouse.query('BEGIN');
  await warehouse.query(
    'DECLARE o NO SCROLL CURSOR FOR SELECT id, customer_id, amount FROM orders',
  );
  for (;;) {
    const page = await warehouse.query<[number, number, number]>({
      text: 'FETCH 20000 FROM o',
      rowMode: 'array',
    });
    if (page.rows.length === 0) break;
    const start = performance.now();
    sent += runtime.filterPage(page.rows, (row) => row[1]).length;
    filtering += performance.now() - start;
  }
  await warehouse.query('COMMIT');
  return { sent, seconds: filtering / 1000 };
}

async function join(where: string, label: string) {
  const keys = (
    await crm.query<[number]>({ text: `SELECT id FROM customers WHERE ${where}`, rowMode: 'array' })
  ).rows.map((r) => r[0]);
  const built = await RuntimeFilter.build(keys, { fpp: 0.01, funnel: 'long' });
  const bytes = built.toBytes(); // what crosses to the probe side
  const runtime = RuntimeFilter.fromBytes<number>(bytes);
  const { sent, seconds } = await probe(runtime);
  const { stats } = runtime;
  console.log(
    `${label}: ${keys.length} build keys -> filter of ${bytes.length} bytes (key list: ${keys.length * 4} bytes as 4-byte ints)`,
  );
  console.log(
    `  rows sent across: ${sent} of ${ORDERS} (${((100 * sent) / ORDERS).toFixed(2)}%); filtering ran at ${Math.round(ORDERS / seconds)} rows/s`,
  );
  console.log(
    stats.disabled
      ? `  disabled at row ${stats.disabledAtRow}: ${stats.reason}`
      : `  dropped ${stats.dropped} rows that cannot match`,
  );
  return {
    buildKeys: keys.length,
    filterBytes: bytes.length,
    keyListBytes: keys.length * 4,
    rows: ORDERS,
    sent,
    disabledAtRow: stats.disabledAtRow,
  };
}

const selective = await join('vip', '1% of customers (VIP)');
const broad = await join('active', '90% of customers (active)');
console.log(JSON.stringify({ selective, broad }));
await Promise.all([crm.end(), warehouse.end()]);
