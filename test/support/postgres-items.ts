/**
 * The `items` table the application tests query, and a server-side cursor over its ids.
 *
 * `items(id int primary key, value int)` holds ids 3, 6, 9, ... (3 x g for g in 1..rows, made by
 * `generate_series` in one statement) with `value = id / 3`, so an id is present exactly when it
 * is a multiple of 3 in [3, 3 x rows], and every answer can be checked without a lookup table.
 */
import type pg from 'pg';

/** Creates `table` with `rows` rows (ids 3, 6, ..., 3 x rows) and its primary key. */
export async function createItems(client: pg.Client, rows: number, table = 'items'): Promise<void> {
  await client.query(
    `CREATE TABLE ${table} AS SELECT (g * 3)::int AS id, g::int AS value FROM generate_series(1, ${rows}) g`,
  );
  await client.query(`ALTER TABLE ${table} ADD PRIMARY KEY (id)`);
}

/**
 * The ids of `table` read through a server-side cursor (`DECLARE ... CURSOR` in a transaction on
 * `client`, which must be used for nothing else meanwhile), `page` rows per `FETCH`, one array of
 * ids per page. Lazy: the cursor (and its snapshot) opens when the first page is asked for.
 */
export async function* cursorIds(
  client: pg.Client,
  table = 'items',
  page = 10_000,
): AsyncGenerator<number[]> {
  await client.query('BEGIN');
  let done = false;
  try {
    await client.query(`DECLARE ids NO SCROLL CURSOR FOR SELECT id FROM ${table}`);
    for (;;) {
      const result = await client.query<[number]>({
        text: `FETCH ${page} FROM ids`,
        rowMode: 'array',
      });
      if (result.rows.length === 0) break;
      yield result.rows.map((row) => row[0]);
    }
    await client.query('COMMIT');
    done = true;
  } finally {
    if (!done) await client.query('ROLLBACK');
  }
}

/** How many times the server executed `query` (pg_stat_statements; the extension must exist). */
export async function statementCalls(client: pg.Client, query: string): Promise<number> {
  const result = await client.query<{ calls: string }>(
    'SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_statements WHERE query = $1',
    [query],
  );
  return Number(result.rows[0]!.calls);
}
