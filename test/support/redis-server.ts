/**
 * Real Redis servers for tests: standalone servers (and the nodes of the small clusters of
 * redis-cluster-server.ts), started on free loopback ports in temporary directories and stopped
 * afterwards.
 *
 * Usage in a vitest file:
 *
 *   const hasRedis = requireRedis(); // throws under CI when redis-server is missing
 *   describe.skipIf(!hasRedis)('redis backend', () => {
 *     let redis: RedisServerHandle;
 *     beforeAll(async () => { redis = await startRedis(); });
 *     afterAll(async () => { await redis?.stop(); });
 *     ...
 *   });
 *
 * Every call picks its own ports and directories, so parallel vitest workers never share a server.
 * Servers still alive when the test process ends (normal exit, SIGINT/SIGTERM/SIGHUP as sent by
 * vitest when it tears a worker down) are SIGKILLed and their temporary directories removed; a
 * small `sh` watchdog per server also kills it if the test process dies by SIGKILL.
 *
 * Needs `redis-server` on PATH (Debian: `apt-get install redis-server`), or REDIS_SERVER_BIN
 * pointing at it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { getFreePort, isPortFree, LOOPBACK } from './ports.js';
import { watchdog } from './watchdog.js';

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN || 'redis-server';
export const REDIS_INSTALL_HINT = 'apt-get install redis-server';

const DEFAULT_START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_CHARS = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// Public types

export interface StartRedisOptions {
  /**
   * Enable the append-only file (needed for data to survive kill() + restart()). Default true:
   * the Redis filters refuse a server that may lose acknowledged writes unless told otherwise
   * (`durability: 'best-effort'`).
   */
  appendonly?: boolean;
  /**
   * AOF fsync policy when `appendonly` is on. Default 'always', so that every acknowledged write
   * is on disk before the reply and survives kill() deterministically.
   */
  appendfsync?: 'always' | 'everysec' | 'no';
  /** Data directory. Created if missing and never removed. Default: a fresh temp dir, removed by stop(). */
  dir?: string;
  /** Fixed port. Default: a free loopback port (a new one is picked if it is taken at start-up). */
  port?: number;
  /** More `--name value` arguments for redis-server, e.g. ['--enable-debug-command', 'yes']. */
  extraArgs?: readonly string[];
  /** How long to wait for the server to answer PING. Default 10 s. */
  startTimeoutMs?: number;
}

export interface RedisServerHandle {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  readonly dir: string;
  /** pid of the current redis-server process (changes after restart()); -1 when none ran. */
  readonly pid: number;
  /** Whether the redis-server process is alive right now. */
  readonly running: boolean;
  /** The last few KiB of the server's stdout/stderr (its log). */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; waits for exit; removes the temp dir unless `dir` was given. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit (a crash, for fault tests). Keeps the dir; restart() brings it back. */
  kill(): Promise<void>;
  /** Start again on the same port and dir (shutting the running process down first, if any). */
  restart(): Promise<void>;
}

export type RedisAvailability = { ok: true; version: string } | { ok: false; reason: string };

/** A RESP2 reply as parsed by rawCommands(). Error replies come back as RespError values. */
export type RespValue = string | number | null | RespError | RespValue[];

export class RespError extends Error {
  override name = 'RespError';
}

/** Thrown when redis-server does not come up; carries the server's log. */
export class RedisStartError extends Error {
  override name = 'RedisStartError';
  constructor(
    message: string,
    readonly output: string,
    readonly addressInUse: boolean,
  ) {
    super(output ? `${message}\n--- redis-server output ---\n${output.trimEnd()}` : message);
  }
}

// ---------------------------------------------------------------------------------------------
// Availability policy

let availability: RedisAvailability | undefined;
let skipNoticePrinted = false;

function probeVersion(bin: string): { ok: true; text: string } | { ok: false; reason: string } {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (r.error) return { ok: false, reason: `${bin} could not be run (${r.error.message})` };
  if (r.status !== 0) {
    return { ok: false, reason: `${bin} --version exited with ${r.status}: ${r.stderr.trim()}` };
  }
  return { ok: true, text: r.stdout.trim() };
}

/** Whether redis-server can be run here (cached). */
export function redisAvailable(): RedisAvailability {
  if (availability) return availability;
  const server = probeVersion(REDIS_SERVER_BIN);
  if (!server.ok) availability = { ok: false, reason: server.reason };
  else {
    // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=..."
    const version = /v=(\d+\.\d+\.\d+)/.exec(server.text)?.[1] ?? server.text;
    availability = { ok: true, version };
  }
  return availability;
}

function isCI(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/**
 * The skip policy for Redis tests: true when Redis can be used. When it cannot, throws under CI
 * (CI set to anything but '', '0' or 'false') so the suite fails instead of silently skipping;
 * locally returns false and prints, once per process, how to install it.
 */
export function requireRedis(): boolean {
  const a = redisAvailable();
  if (a.ok) return true;
  const message = `${a.reason}; install with: ${REDIS_INSTALL_HINT}`;
  if (isCI()) throw new Error(`Redis is required in CI but is not available: ${message}`);
  if (!skipNoticePrinted) {
    skipNoticePrinted = true;
    console.warn(`[bloomkit tests] skipping Redis tests: ${message}`);
  }
  return false;
}

/** The major version of the redis-server on PATH (throws when there is none). */
export function redisMajorVersion(): number {
  const a = redisAvailable();
  if (!a.ok)
    throw new Error(`Redis is not available: ${a.reason}; install with: ${REDIS_INSTALL_HINT}`);
  return Number.parseInt(a.version, 10) || 0;
}

// ---------------------------------------------------------------------------------------------
// Cleanup when the test process goes away

/** redis-server processes and their watchdogs that may still be alive. */
const liveChildren = new Set<ChildProcess>();
/** Temp dirs we created and have not removed yet. */
const ownedDirs = new Set<string>();
/** Ports handed to servers of this process that are not stopped (kept while a server is killed). */
const reservedPorts = new Set<number>();
let hooksInstalled = false;

function killAllSync(): void {
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  liveChildren.clear();
  for (const dir of ownedDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
    } catch {
      // best effort
    }
  }
  ownedDirs.clear();
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllSync);
  // vitest ends a forks-pool worker with SIGTERM (SIGKILL 1 s later); Ctrl-C sends SIGINT.
  // Signals skip 'exit' handlers, so clean up here too, then re-raise the signal if nobody else
  // listens for it, so the default action (terminate) still happens.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAllSync();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** The watchdog of `child` (see watchdog.ts), killed with the other children by the exit hooks. */
function spawnWatchdog(child: ChildProcess, dir: string | undefined): void {
  const dog = watchdog(child, dir, 'redis-watchdog');
  if (dog === undefined) return;
  dog.on('error', () => liveChildren.delete(dog));
  dog.on('exit', () => liveChildren.delete(dog));
  liveChildren.add(dog);
}

// ---------------------------------------------------------------------------------------------
// Raw RESP (no client library needed for readiness checks)

function encodeCommand(args: readonly string[]): string {
  let s = `*${args.length}\r\n`;
  for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return s;
}

function parseResp(buf: Buffer, off: number): { value: RespValue; next: number } | undefined {
  const eol = buf.indexOf('\r\n', off);
  if (eol < 0) return undefined;
  const type = buf.toString('latin1', off, off + 1);
  const line = buf.toString('utf8', off + 1, eol);
  const next = eol + 2;
  switch (type) {
    case '+':
      return { value: line, next };
    case '-':
      return { value: new RespError(line), next };
    case ':':
      return { value: Number(line), next };
    case '$': {
      const len = Number(line);
      if (len < 0) return { value: null, next };
      if (buf.length < next + len + 2) return undefined;
      return { value: buf.toString('utf8', next, next + len), next: next + len + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next };
      const items: RespValue[] = [];
      let pos = next;
      for (let i = 0; i < count; i++) {
        const item = parseResp(buf, pos);
        if (!item) return undefined;
        items.push(item.value);
        pos = item.next;
      }
      return { value: items, next: pos };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
  }
}

/**
 * Sends commands over one fresh TCP connection (pipelined, RESP2) and returns one reply per
 * command. Rejects on connection errors and after `timeoutMs` (default 2 s). Error replies are
 * returned as RespError values, not thrown. Handy for inspecting a server without node-redis.
 */
export function rawCommands(
  port: number,
  commands: ReadonlyArray<readonly string[]>,
  opts: { host?: string; timeoutMs?: number } = {},
): Promise<RespValue[]> {
  const host = opts.host ?? LOOPBACK;
  const timeoutMs = opts.timeoutMs ?? 2_000;
  return new Promise((resolvePromise, reject) => {
    const replies: RespValue[] = [];
    let buf: Buffer = Buffer.alloc(0);
    let done = false;
    const socket = connect({ host, port });
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolvePromise(replies);
    };
    const timer = setTimeout(
      () => finish(new Error(`no reply from ${host}:${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('connect', () => {
      socket.write(commands.map(encodeCommand).join(''));
    });
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      try {
        let off = 0;
        while (replies.length < commands.length) {
          const parsed = parseResp(buf, off);
          if (!parsed) break;
          replies.push(parsed.value);
          off = parsed.next;
        }
        buf = buf.subarray(off);
      } catch (err) {
        finish(err as Error);
        return;
      }
      if (replies.length === commands.length) finish();
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error(`${host}:${port} closed the connection early`)));
  });
}

/** One command; see rawCommands(). */
export async function rawCommand(
  port: number,
  args: readonly string[],
  opts: { host?: string; timeoutMs?: number } = {},
): Promise<RespValue> {
  const [reply] = await rawCommands(port, [args], opts);
  return reply ?? null;
}

/**
 * The socket reads and commands a server has processed so far (INFO stats
 * `total_reads_processed` and `total_commands_processed`); this INFO itself counts as one of each.
 */
export async function serverStats(port: number): Promise<{ reads: number; commands: number }> {
  const info = (await rawCommand(port, ['INFO', 'stats'])) as string;
  const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)![1]);
  return { reads: field('total_reads_processed'), commands: field('total_commands_processed') };
}

/**
 * How many times a server has run `command` (lower case, e.g. `eval`) so far, scripts' own calls
 * included (INFO commandstats; 0 before the first).
 */
export async function commandCalls(port: number, command: string): Promise<number> {
  const info = String(await rawCommand(port, ['INFO', 'commandstats']));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

// ---------------------------------------------------------------------------------------------
// Processes

class OutputTail {
  #text = '';
  push(chunk: string): void {
    this.#text += chunk;
    if (this.#text.length > 2 * OUTPUT_TAIL_CHARS)
      this.#text = this.#text.slice(-OUTPUT_TAIL_CHARS);
  }
  text(): string {
    return this.#text.slice(-OUTPUT_TAIL_CHARS);
  }
}

interface Proc {
  child: ChildProcess;
  output: OutputTail;
  /** Resolves when the process has exited (or failed to spawn). */
  exited: Promise<void>;
  /** Resolves when its stdio has closed too (all output read). */
  closed: Promise<void>;
  spawnError?: Error;
}

function isAlive(proc: Proc): boolean {
  return (
    proc.spawnError === undefined && proc.child.exitCode === null && proc.child.signalCode === null
  );
}

/** `cleanupDir`: a temp dir of ours that the watchdog removes if this process dies hard. */
function spawnRedis(args: readonly string[], cleanupDir: string | undefined): Proc {
  installExitHooks();
  const child = spawn(REDIS_SERVER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = new OutputTail();
  // Always drain the pipes: redis logs to stdout and would block once a pipe buffer fills.
  child.stdout?.setEncoding('utf8').on('data', (s: string) => output.push(s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => output.push(s));
  const proc: Proc = { child, output, exited: Promise.resolve(), closed: Promise.resolve() };
  const gone = (): void => {
    liveChildren.delete(child);
  };
  proc.exited = new Promise((resolveExit) => {
    child.once('exit', () => {
      gone();
      resolveExit();
    });
    child.once('error', (err) => {
      proc.spawnError = err;
      output.push(`spawn ${REDIS_SERVER_BIN} failed: ${err.message}\n`);
      gone();
      resolveExit();
    });
  });
  proc.closed = new Promise((resolveClose) => {
    child.once('close', () => resolveClose());
    child.once('error', () => resolveClose());
  });
  if (child.pid !== undefined) {
    liveChildren.add(child);
    spawnWatchdog(child, cleanupDir);
  }
  return proc;
}

/** Sends `signal`, escalates to SIGKILL after `graceMs`, and waits for the exit. */
async function terminate(proc: Proc, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (isAlive(proc)) {
    proc.child.kill(signal);
    const timer =
      signal === 'SIGKILL' ? undefined : setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
    try {
      await proc.exited;
    } finally {
      clearTimeout(timer);
    }
  }
  await proc.exited;
}

async function startError(proc: Proc, port: number, what: string): Promise<RedisStartError> {
  await Promise.race([proc.closed, sleep(500)]);
  const output = proc.output.text();
  const exit =
    proc.child.exitCode !== null
      ? ` (exit code ${proc.child.exitCode})`
      : proc.child.signalCode !== null
        ? ` (signal ${proc.child.signalCode})`
        : '';
  return new RedisStartError(
    `redis-server on ${LOOPBACK}:${port} ${what}${exit}`,
    output,
    /address already in use/i.test(output),
  );
}

/**
 * Polls until this very process answers PING (checked with INFO's process_id, so a server of
 * another worker that happens to hold the port does not count). PING fails with -LOADING while
 * an AOF is being loaded, so readiness also means the data is back.
 */
async function waitReady(proc: Proc, port: number, deadline: number): Promise<void> {
  let delay = 10;
  for (;;) {
    if (!isAlive(proc)) throw await startError(proc, port, 'exited during start-up');
    try {
      const [pong, info] = await rawCommands(port, [['PING'], ['INFO', 'server']], {
        timeoutMs: 1_000,
      });
      if (
        pong === 'PONG' &&
        typeof info === 'string' &&
        info.includes(`process_id:${proc.child.pid}\r\n`)
      ) {
        return;
      }
    } catch {
      // not listening yet
    }
    if (!isAlive(proc)) throw await startError(proc, port, 'exited during start-up');
    if (Date.now() >= deadline) {
      await terminate(proc, 'SIGKILL', 0);
      throw await startError(proc, port, 'did not answer PING in time');
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}

async function spawnAndWait(
  args: readonly string[],
  port: number,
  deadline: number,
  cleanupDir: string | undefined,
): Promise<Proc> {
  const proc = spawnRedis(args, cleanupDir);
  try {
    await waitReady(proc, port, deadline);
    return proc;
  } catch (err) {
    await terminate(proc, 'SIGKILL', 0);
    throw err;
  }
}

/** A free port not already given to a server of this process. */
async function pickPort(needsBusPortPlus10000: boolean): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const port = await getFreePort();
    if (reservedPorts.has(port)) continue;
    if (!needsBusPortPlus10000) return port;
    // Redis < 7 has no --cluster-port: the bus listens on port + 10000.
    const bus = port + 10_000;
    if (bus <= 65_535 && !reservedPorts.has(bus) && (await isPortFree(bus))) return port;
  }
  throw new Error('could not find a free loopback port');
}

async function pickOtherPort(taken: number): Promise<number> {
  for (;;) {
    const port = await pickPort(false);
    if (port !== taken) return port;
  }
}

// ---------------------------------------------------------------------------------------------
// Servers

class RedisServer implements RedisServerHandle {
  readonly host = LOOPBACK;
  readonly #ownsDir: boolean;
  readonly #args: readonly string[];
  readonly #ports: readonly number[];
  readonly #startTimeoutMs: number;
  #proc: Proc;
  #stopped = false;
  /** Serialises stop/kill/restart so that overlapping calls cannot interleave. */
  #queue: Promise<unknown> = Promise.resolve();

  /** The cluster bus port of a cluster node (`--cluster-port`, or port + 10000 before Redis 7). */
  readonly busPort: number;

  constructor(
    readonly port: number,
    readonly dir: string,
    ownsDir: boolean,
    args: readonly string[],
    ports: readonly number[],
    startTimeoutMs: number,
    proc: Proc,
  ) {
    this.busPort = ports[1] ?? port + 10_000;
    this.#ownsDir = ownsDir;
    this.#args = args;
    this.#ports = ports;
    this.#startTimeoutMs = startTimeoutMs;
    this.#proc = proc;
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  get pid(): number {
    return this.#proc.child.pid ?? -1;
  }

  get running(): boolean {
    return isAlive(this.#proc);
  }

  output(): string {
    return this.#proc.output.text();
  }

  #enqueue(op: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(op, op);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  stop(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#stopped) return;
      this.#stopped = true;
      await terminate(this.#proc, 'SIGTERM', STOP_GRACE_MS);
      for (const p of this.#ports) reservedPorts.delete(p);
      if (this.#ownsDir) {
        await rm(this.dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
        ownedDirs.delete(this.dir);
      }
    });
  }

  kill(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#stopped) throw new Error(`redis-server on port ${this.port} was stopped`);
      await terminate(this.#proc, 'SIGKILL', 0);
    });
  }

  restart(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#stopped) throw new Error(`redis-server on port ${this.port} was stopped`);
      await terminate(this.#proc, 'SIGTERM', STOP_GRACE_MS);
      // The port must stay the same, so on EADDRINUSE wait for it rather than pick another.
      const deadline = Date.now() + this.#startTimeoutMs;
      for (;;) {
        try {
          const cleanupDir = this.#ownsDir ? this.dir : undefined;
          this.#proc = await spawnAndWait(this.#args, this.port, deadline, cleanupDir);
          return;
        } catch (err) {
          if (!(err instanceof RedisStartError && err.addressInUse) || Date.now() >= deadline) {
            throw err;
          }
          await sleep(100);
        }
      }
    });
  }
}

interface ServerSpec {
  appendonly: boolean;
  appendfsync: 'always' | 'everysec' | 'no';
  dir: string | undefined;
  port: number | undefined;
  cluster: { nodeTimeoutMs: number } | undefined;
  extraArgs: readonly string[];
  startTimeoutMs: number;
}

async function startServer(spec: ServerSpec): Promise<RedisServer> {
  const ownsDir = spec.dir === undefined;
  let dir: string;
  if (spec.dir === undefined) {
    installExitHooks();
    // In memory where there is a tmpfs: the AOF's fsync (appendfsync always) then costs nothing.
    dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'bloomkit-redis-'));
    ownedDirs.add(dir);
  } else {
    dir = resolve(spec.dir);
    await mkdir(dir, { recursive: true });
  }
  const useClusterPort = spec.cluster !== undefined && redisMajorVersion() >= 7;
  const deadline = Date.now() + spec.startTimeoutMs;
  try {
    for (let attempt = 1; ; attempt++) {
      const port = spec.port ?? (await pickPort(spec.cluster !== undefined && !useClusterPort));
      const busPort = useClusterPort ? await pickOtherPort(port) : undefined;
      const ports = busPort === undefined ? [port] : [port, busPort];
      const args = [
        '--port',
        String(port),
        '--bind',
        LOOPBACK,
        '--save',
        '',
        '--appendonly',
        spec.appendonly ? 'yes' : 'no',
        '--appendfsync',
        spec.appendfsync,
        '--auto-aof-rewrite-percentage', // no forked rewrites while a test runs
        '0',
        '--dir',
        dir,
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
        ...(spec.cluster
          ? [
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              `nodes-${port}.conf`,
              '--cluster-node-timeout',
              String(spec.cluster.nodeTimeoutMs),
            ]
          : []),
        ...(busPort === undefined ? [] : ['--cluster-port', String(busPort)]),
        ...spec.extraArgs,
      ];
      for (const p of ports) reservedPorts.add(p);
      try {
        const proc = await spawnAndWait(args, port, deadline, ownsDir ? dir : undefined);
        return new RedisServer(port, dir, ownsDir, args, ports, spec.startTimeoutMs, proc);
      } catch (err) {
        for (const p of ports) reservedPorts.delete(p);
        const retry =
          err instanceof RedisStartError &&
          err.addressInUse &&
          attempt < 20 &&
          Date.now() < deadline;
        if (!retry) throw err;
        // Someone took the port between our probe and redis' bind: pick new ports (or, for a
        // fixed port, wait for it).
        if (spec.port !== undefined) await sleep(100);
      }
    }
  } catch (err) {
    if (ownsDir) {
      await rm(dir, { recursive: true, force: true });
      ownedDirs.delete(dir);
    }
    throw err;
  }
}

/** A cluster node, not joined to anything yet (see redis-cluster-server.ts). */
export interface ClusterNodeHandle extends RedisServerHandle {
  readonly busPort: number;
}

/**
 * Starts a cluster-enabled redis-server (no RDB snapshots; AOF, fsync always) that knows only itself, for
 * redis-cluster-server.ts to join into a cluster.
 */
export function startClusterNode(
  nodeTimeoutMs: number,
  extraArgs: readonly string[],
): Promise<ClusterNodeHandle> {
  return startServer({
    appendonly: true,
    appendfsync: 'always',
    dir: undefined,
    port: undefined,
    cluster: { nodeTimeoutMs },
    // A replica's first sync starts at once, not after the default 5 s wait for more replicas.
    extraArgs: ['--repl-diskless-sync-delay', '0', ...extraArgs],
    startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
  });
}

/**
 * Starts a standalone redis-server on 127.0.0.1 (no RDB snapshots; AOF, fsync always, unless asked otherwise) and
 * resolves once it answers PING.
 */
export function startRedis(opts: StartRedisOptions = {}): Promise<RedisServerHandle> {
  return startServer({
    appendonly: opts.appendonly ?? true,
    appendfsync: opts.appendfsync ?? 'always',
    dir: opts.dir,
    port: opts.port,
    cluster: undefined,
    extraArgs: opts.extraArgs ?? [],
    startTimeoutMs: opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  });
}
