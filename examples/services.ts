/**
 * How the examples reach the services they need (PostgreSQL, Redis): connect, and when the
 * service is not there, say in one line what to start and how, then exit with status 1, instead
 * of a driver's stack trace. docs/guide/applications.md ("Running the examples") gives the same
 * commands.
 */
import type pg from 'pg';
import { createClient } from 'redis';

/** Prints `example: message` on standard error and exits with status 1. */
export function fail(example: string, message: string): never {
  console.error(`${example}: ${message}`);
  process.exit(1);
}

/** Where a PostgreSQL client connects: `database "shop" on /var/run/postgresql:5432`. */
function pgWhere(client: pg.Client): string {
  const as = client.user === undefined ? '' : ` as ${client.user}`;
  return `database "${client.database}" on ${client.host}:${client.port}${as}`;
}

/**
 * Connects `client` (configured by the PG* variables and its own options); on failure, one line
 * saying what to start or create.
 */
export async function connectPostgres(client: pg.Client, example: string): Promise<void> {
  try {
    await client.connect();
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const where = pgWhere(client);
    if (code === '3D000') {
      fail(
        example,
        `${where}: the database does not exist; create it (createdb -h ${client.host} -p ${client.port}${client.user === undefined ? '' : ` -U ${client.user}`} ${client.database}) or set PGDATABASE`,
      );
    }
    if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'EHOSTUNREACH') {
      fail(
        example,
        `no PostgreSQL server for ${where} (${code}); start one (e.g. sudo service postgresql start) or set PGHOST and PGPORT to a running server`,
      );
    }
    fail(example, `PostgreSQL refused ${where}: ${message}; set PGUSER/PGPASSWORD or PGDATABASE`);
  }
}

/**
 * A connected node-redis client for `url`; when no server answers there, one line saying how to
 * start one. It does not reconnect: an example is a short run.
 */
export async function connectRedis(
  url: string,
  example: string,
): Promise<ReturnType<typeof createClient>> {
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  let failure: Error | undefined;
  client.on('error', (error: Error) => {
    failure ??= error;
  });
  try {
    await client.connect();
  } catch (error) {
    const { code, message } = (failure ?? error) as { code?: string; message: string };
    fail(
      example,
      `no Redis server at ${url} (${code ?? message}); start one (redis-server --port 6379 --save '') or set REDIS_URL to a running server`,
    );
  }
  return client;
}
