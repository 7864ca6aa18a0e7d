/**
 * CacheGuard in front of PostgreSQL: requests for ids that do not exist (a scraper walking the id
 * space, a bug, an attack) are answered without a query.
 *
 * Connects with the usual PG* environment variables (PGHOST, PGPORT, PGUSER, PGDATABASE), creates
 * a `products` table of ROWS rows if there is none, fills the guard's filter from a server-side
 * cursor, sends REQUESTS requests of which 90% ask for ids that do not exist, and prints how many
 * queries reached the database. The last line is the same figures as JSON.
 *
 *   PGHOST=/var/run/postgresql npx tsx examples/cache-guard.ts
 */
import pg from 'pg';
import { BloomFilter, CacheGuard } from '../src/index.js'; // in your project: 'bloomkit'
import { connectPostgres } from './services.js';

const ROWS = Number(process.env.ROWS ?? 200_000);
const REQUESTS = Number(process.env.REQUESTS ?? 100_000);
const FPP = 0.01;

interface Product {
  id: number;
  price: number;
}

const db = new pg.Client();
await connectPostgres(db, 'cache-guard');
const exists = await db.query("SELECT to_regclass('products') IS NOT NULL AS yes");
if (!exists.rows[0].yes) {
  await db.query(
    `CREATE TABLE products AS
     SELECT (g * 2)::int AS id, (g % 1000)::int AS price FROM generate_series(1, ${ROWS}) g`,
  );
  await db.query('ALTER TABLE products ADD PRIMARY KEY (id)');
}

/** Every existing id, one page of a server-side cursor at a time. */
async function* allIds(): AsyncGenerator<number[]> {
  await db.query('BEGIN');
  try {
    await db.query('DECLARE product_ids NO SCROLL CURSOR FOR SELECT id FROM products');
    for (;;) {
      const page = await db.query<[number]>({
        text: 'FETCH 10000 FROM product_ids',
        rowMode: 'array',
      });
      if (page.rows.length === 0) break;
      yield page.rows.map((row) => row[0]);
    }
  } finally {
    await db.query('COMMIT');
  }
}

let queries = 0;
const newFilter = () =>
  BloomFilter.create({ funnel: 'int', capacity: Math.ceil(ROWS * 1.2), fpp: FPP });
const guard = new CacheGuard<number, Product>({
  filter: newFilter(),
  createFilter: newFilter,
  load: async (id) => {
    queries++;
    return (
      (await db.query<Product>('SELECT id, price FROM products WHERE id = $1', [id])).rows[0] ??
      null
    );
  },
});
const { scanned } = await guard.rebuild(allIds());

// 90% of the requests ask for odd ids (none exists), 10% for even ids in the table.
let seed = 42;
const random = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32;
};
let found = 0;
for (let i = 0; i < REQUESTS; i++) {
  const g = 1 + Math.floor(random() * ROWS);
  const id = random() < 0.9 ? 2 * g + 1 : 2 * g;
  if ((await guard.get(id)) !== null) found++;
}

// A new product: insert it, then announce it (before handing its id to anyone); served at once.
const newId = 2 * (ROWS + 1);
await db.query('INSERT INTO products (id, price) VALUES ($1, 1) ON CONFLICT DO NOTHING', [newId]);
await guard.added(newId);
const fresh = await guard.get(newId);

const stats = guard.stats;
const absent = REQUESTS - found;
console.log(`filter built from ${scanned} ids through a server-side cursor`);
console.log(`${REQUESTS} requests, ${found} found, ${absent} for ids that do not exist`);
console.log(
  `queries sent to PostgreSQL: ${queries} (without the guard: ${REQUESTS}); saved ${stats.filtered} ` +
    `(${((100 * stats.filtered) / absent).toFixed(1)}% of the requests for absent ids)`,
);
console.log(
  `false positives: ${stats.falsePositives} (${((100 * stats.falsePositives) / absent).toFixed(2)}% of absent ids; fpp ${FPP})`,
);
console.log(`new id ${newId} served right after its insert: ${fresh !== null}`);
console.log(
  JSON.stringify({
    rows: scanned,
    requests: REQUESTS,
    found,
    queries,
    saved: stats.filtered,
    falsePositives: stats.falsePositives,
    newIdServed: fresh !== null,
  }),
);
await db.end();
