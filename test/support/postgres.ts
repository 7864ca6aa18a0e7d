/**
 * Real PostgreSQL clusters for tests: `initdb` in a temporary directory, `postgres` listening only
 * on a Unix socket inside it (no TCP port, so parallel test files never collide), stopped and
 * removed afterwards.
 *
 *   const hasPostgres = requirePostgres(); // throws under CI when PostgreSQL is missing
 *   describe.skipIf(!hasPostgres)('...', () => {
 *     let pg: PostgresHandle;
 *     beforeAll(async () => { pg = await startPostgres(); }, 60_000);
 *     afterAll(async () => { await pg?.stop(); });
 *     // new pg.Client(pg.connection('postgres'))
 *   });
 *
 * initdb and postgres refuse to run as root (CI runs as root): then both run as the `postgres`
 * user through `setpriv`, on a directory that user owns. initdb runs once per machine (per
 * binaries): its cluster is kept as a template under os.tmpdir() and copied for every start
 * (`cp -a`, a fraction of initdb's cost). The cluster is tuned for throwaway data
 * (fsync off, no WAL archiving). Options: `preload` for `shared_preload_libraries` (e.g.
 * `pg_stat_statements`, which counts every statement the server executes).
 *
 * Needs the Debian `postgresql` package (binaries under /usr/lib/postgresql/<major>/bin), or
 * POSTGRES_BIN_DIR pointing at a directory holding `initdb` and `postgres`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchdog } from './watchdog.js';

export const POSTGRES_INSTALL_HINT = 'apt-get install postgresql';
/** The socket's port number: only names the socket file, since nothing listens on TCP. */
const PORT = 5432;
const START_TIMEOUT_MS = 30_000;

export interface PostgresHandle {
  /** The socket directory (pass as `host` to node-postgres). */
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** node-postgres connection settings for `database`, as the superuser `postgres`. */
  connection(database?: string): { host: string; port: number; user: string; database: string };
  /** The server log so far. */
  output(): string;
  /** Fast shutdown (SIGINT), then SIGKILL after 5 s; removes the directory. Idempotent. */
  stop(): Promise<void>;
}

function binDir(): string | undefined {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => /^\d+$/.test(d) && existsSync(join(root, d, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin');
}

function isCI(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

let noticePrinted = false;

/**
 * True when PostgreSQL can be started here. When it cannot, throws under CI (so the suite fails
 * instead of skipping) and otherwise prints once how to install it and returns false.
 */
export function requirePostgres(): boolean {
  const dir = binDir();
  if (dir !== undefined && existsSync(join(dir, 'initdb'))) return true;
  const message = `PostgreSQL binaries not found; install with: ${POSTGRES_INSTALL_HINT}`;
  if (isCI()) throw new Error(`PostgreSQL is required in CI but is not available: ${message}`);
  if (!noticePrinted) {
    noticePrinted = true;
    console.warn(`[bloomkit tests] skipping PostgreSQL tests: ${message}`);
  }
  return false;
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** `[command, args]` running `bin` as the postgres user when we are root. */
function asServerUser(bin: string, args: string[]): [string, string[]] {
  if (!isRoot) return [bin, args];
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', bin, ...args]];
}

const live = new Set<ChildProcess>();
const dirs = new Set<string>();
let hooks = false;

function cleanupSync(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

function installHooks(): void {
  if (hooks) return;
  hooks = true;
  process.on('exit', cleanupSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      cleanupSync();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** The initdb arguments after `-D <dir>`. */
const INITDB_ARGS = ['-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'];

/** Makes `dir` (fresh) owned by the server user when we are root. */
function ownForServer(dir: string): void {
  if (!isRoot) return;
  const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (ids.status !== 0) throw new Error('running as root, but there is no `postgres` user');
  chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
}

/**
 * A fresh initdb cluster to copy: made once per binaries (keyed by the bin directory, the
 * `postgres` and `initdb` files' size and time, the arguments and the user) under os.tmpdir().
 * Safe with parallel test files: each makes it in a private directory and renames it into place;
 * a loser of the race uses the winner's identical cluster. Returns the template's data directory.
 */
function templateData(bin: string): string {
  const stamp = ['postgres', 'initdb'].map((f) => {
    const st = statSync(join(bin, f));
    return `${st.size}:${st.mtimeMs}`;
  });
  const key = createHash('sha256')
    .update(JSON.stringify([bin, stamp, INITDB_ARGS, isRoot]))
    .digest('hex')
    .slice(0, 16);
  const dir = join(tmpdir(), `bloomkit-pg-template-${key}`);
  const data = join(dir, 'data');
  if (existsSync(join(dir, 'complete'))) return data;
  const tmp = mkdtempSync(join(tmpdir(), 'bloomkit-pg-template-tmp-'));
  try {
    ownForServer(tmp);
    const [initCmd, initArgs] = asServerUser(join(bin, 'initdb'), [
      '-D',
      join(tmp, 'data'),
      ...INITDB_ARGS,
    ]);
    const init = spawnSync(initCmd, initArgs, { encoding: 'utf8', timeout: START_TIMEOUT_MS });
    if (init.status !== 0) {
      throw new Error(`initdb failed (${init.status}): ${init.stderr || init.error?.message}`);
    }
    writeFileSync(join(tmp, 'complete'), '');
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another test file won the race (ENOTEMPTY/EEXIST); its cluster is identical.
      if (!existsSync(join(dir, 'complete'))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return data;
}

export interface StartPostgresOptions {
  /** `shared_preload_libraries`, e.g. `['pg_stat_statements']`. */
  preload?: readonly string[];
}

/** Creates and starts a fresh cluster; resolves once it accepts connections. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresHandle> {
  const bin = binDir();
  if (bin === undefined) throw new Error(`PostgreSQL not found; ${POSTGRES_INSTALL_HINT}`);
  installHooks();
  const template = templateData(bin);
  const dir = mkdtempSync(join(tmpdir(), 'bloomkit-pg-'));
  dirs.add(dir);
  ownForServer(dir);
  const data = join(dir, 'data');
  // -a keeps the owner (the server user) and the 0700 mode postgres insists on.
  const copy = spawnSync('cp', ['-a', template, data], { encoding: 'utf8' });
  if (copy.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
    throw new Error(`copying the initdb template failed (${copy.status}): ${copy.stderr}`);
  }
  const settings = [
    ['listen_addresses', ''],
    ['unix_socket_directories', dir],
    ['port', String(PORT)],
    ['fsync', 'off'],
    ['synchronous_commit', 'off'],
    ['full_page_writes', 'off'],
    ['max_connections', '20'],
    ['shared_buffers', '64MB'],
    ...(options.preload?.length ? [['shared_preload_libraries', options.preload.join(',')]] : []),
  ];
  const [cmd, args] = asServerUser(join(bin, 'postgres'), [
    '-D',
    data,
    ...settings.flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let log = '';
  const append = (chunk: Buffer): void => {
    log = (log + chunk.toString('utf8')).slice(-16_384);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => live.delete(child));
  watchdog(child, dir, 'pg-watchdog');

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
    dirs.delete(dir);
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  const ready = join(bin, 'pg_isready');
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`postgres exited during start-up:\n${log}`);
    }
    const probe = spawnSync(ready, ['-q', '-h', dir, '-p', String(PORT), '-U', 'postgres']);
    if (probe.status === 0) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`postgres did not accept connections within ${START_TIMEOUT_MS} ms:\n${log}`);
    }
    await sleep(50);
  }
  return {
    host: dir,
    port: PORT,
    dir,
    connection: (database = 'postgres') => ({ host: dir, port: PORT, user: 'postgres', database }),
    output: () => log,
    stop,
  };
}
