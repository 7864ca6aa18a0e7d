/**
 * The `bloomkit` command for tests, two ways, both from one esbuild build of the sources shared
 * by all test files (cli-build.ts):
 *
 * - In this process (`inProcessCli`): the build's `main()` (src/cli/main.ts) with in-memory
 *   streams, as src/cli.ts calls it with the process's. Most tests: a call costs what the
 *   command's work costs, not a Node start-up (about 0.15 s of CPU). The build is imported by
 *   Node itself, not transformed by vitest in each test file (about 1.5 s of CPU less per file).
 *
 *     const cli = inProcessCli();
 *     const r = await cli.run(['info', file]);   // { code, stdout (Buffer), stderr (string) }
 *
 * - As a subprocess (`buildCli`): `node cli.cjs ...`, exactly as the installed bin runs. For what
 *   only a process shows: its `#!` line and exit status, signals, a closed pipe, standard input
 *   being fd 0 (a pipe or a regular file), worker threads, and one end-to-end run per command
 *   family.
 *
 *     const cli = await buildCli();              // in beforeAll
 *     const r = cli.run(['info', file]);         // synchronous: spawnSync
 *
 * Both hand back the same `CliResult`; `dispose` (in afterAll) removes the temporary folders.
 */

import { type SpawnSyncOptions, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { cliBuild } from './cli-build.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

export interface RunOptions {
  /** Bytes for standard input (a pipe). */
  input?: string | Uint8Array;
  /** A file to open as standard input (a regular file, as with `< file`). */
  stdinFile?: string;
  /** The working folder (subprocess only: one process has one). */
  cwd?: string;
  /**
   * Variables on top of this process's environment. In this process only main()'s own reads see
   * them (`BLOOMKIT_DEBUG`), not a command's (`redis` reads `REDIS_URL` from `process.env`).
   */
  env?: NodeJS.ProcessEnv;
}

/** Temporary folders, removed by `dispose`. */
class Temps {
  private readonly dirs: string[] = [];
  tempDir(): string {
    const t = mkdtempSync(join(tmpdir(), 'bloomkit-cli-t-'));
    this.dirs.push(t);
    return t;
  }
  dispose(): void {
    for (const t of this.dirs.splice(0)) rmSync(t, { recursive: true, force: true });
  }
}

export interface InProcessCli {
  /** Runs `bloomkit ...args` in this process; resolves when main() does. */
  run(args: readonly string[], options?: RunOptions): Promise<CliResult>;
  /** `run` of a `--json` command: its standard output parsed; throws unless it exits 0. */
  json(args: readonly string[]): Promise<Record<string, unknown>>;
  /** A fresh temporary folder, removed by `dispose`. */
  tempDir(): string;
  dispose(): void;
}

/** A pipe's worth of bytes per chunk, so records cross chunk boundaries as they do from a pipe. */
const PIPE_CHUNK = 1 << 16;

/** Standard input as a pipe carrying `input` (empty when undefined: spawnSync's closed pipe). */
function pipeStdin(input: string | Uint8Array | undefined): Readable {
  const bytes = input === undefined ? Buffer.alloc(0) : Buffer.from(input);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += PIPE_CHUNK) chunks.push(bytes.subarray(i, i + PIPE_CHUNK));
  return Readable.from(chunks, { objectMode: false });
}

/** A stream that keeps a copy of every chunk (the command reuses its buffers once written). */
export function collector(): { stream: Writable; bytes(): Buffer } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  return { stream, bytes: () => Buffer.concat(chunks) };
}

/** The modules of the shared build that tests load (see cli-build.ts). */
export interface BuiltModules {
  /** src/cli/main.ts */
  main: typeof import('../../src/cli/main.js');
  /** src/cli/commands/index.ts: the command table. */
  commands: typeof import('../../src/cli/commands/index.js');
}

const loaded = new Map<string, Promise<unknown>>();

/**
 * A module of the shared build, imported by Node itself (the build lies under node_modules, which
 * vitest leaves to Node): no vitest transform of the command's sources in each test file.
 */
export function builtModule<K extends keyof BuiltModules>(name: K): Promise<BuiltModules[K]> {
  let module = loaded.get(name);
  if (module === undefined) {
    module = cliBuild().then((dir) => import(pathToFileURL(join(dir, `${name}.js`)).href));
    loaded.set(name, module);
  }
  return module as Promise<BuiltModules[K]>;
}

/**
 * `bloomkit ...args` run by main() in this process. Standard input is a stream over `input`, or
 * for `stdinFile` a stream whose `fd` is the opened file (main reads it with `read(2)`, as it
 * reads fd 0 after `< file`). The environment is this process's with `BLOOMKIT_DEBUG` unset (as
 * for the subprocess) and `env` on top. Neither stream is a terminal (no progress bar).
 */
export async function runMain(
  args: readonly string[],
  options: RunOptions = {},
): Promise<CliResult> {
  if (options.cwd !== undefined) throw new Error('runMain: cwd needs a subprocess (buildCli)');
  const stdout = collector();
  const stderr = collector();
  let fd: number | undefined;
  try {
    let stdin: Readable & { fd?: number };
    if (options.stdinFile !== undefined) {
      fd = openSync(options.stdinFile, 'r');
      stdin = Object.assign(pipeStdin(undefined), { fd });
    } else {
      stdin = pipeStdin(options.input);
    }
    const env = { ...process.env, BLOOMKIT_DEBUG: '', ...options.env };
    const { main } = await builtModule('main');
    let code: number;
    try {
      code = await main(args, { stdout: stdout.stream, stderr: stderr.stream, stdin, env });
    } catch (error) {
      // What src/cli.ts does with a rejection.
      stderr.stream.write(`bloomkit: ${error instanceof Error ? error.message : String(error)}\n`);
      code = 2;
    }
    return {
      code,
      signal: null,
      stdout: stdout.bytes(),
      stderr: stderr.bytes().toString('utf8'),
    };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The command in this process, with temporary folders. */
export function inProcessCli(): InProcessCli {
  const temps = new Temps();
  return {
    run: runMain,
    async json(args) {
      const r = await runMain(args);
      if (r.code !== 0) throw new Error(`bloomkit ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout.toString('utf8')) as Record<string, unknown>;
    },
    tempDir: () => temps.tempDir(),
    dispose: () => temps.dispose(),
  };
}

export interface BuiltCli {
  /** The folder holding cli.cjs and node.js (and their shared chunks); shared, do not write. */
  readonly dir: string;
  /** Path of the built command (executable: runs by its `#!` line). */
  readonly bin: string;
  /** Path of the built `bloomkit/node` entry (for child scripts). */
  readonly nodeEntry: string;
  /** Runs `node cli.cjs ...args` and waits for it. */
  run(args: readonly string[], options?: RunOptions): CliResult;
  /** Starts the command without waiting (for signals). */
  start(args: readonly string[], options?: RunOptions): ReturnType<typeof spawn>;
  /** A fresh temporary folder, removed by `dispose`. */
  tempDir(): string;
  dispose(): void;
}

/** The built command, run as a subprocess (the build is shared: see cli-build.ts). */
export async function buildCli(): Promise<BuiltCli> {
  const dir = await cliBuild();
  const temps = new Temps();
  const bin = join(dir, 'cli.cjs');
  const spawnOptions = (options: RunOptions): SpawnSyncOptions => ({
    cwd: options.cwd,
    env: { ...process.env, BLOOMKIT_DEBUG: '', ...options.env },
    maxBuffer: 1 << 30,
  });
  return {
    dir,
    bin,
    nodeEntry: join(dir, 'node.js'),
    run(args, options = {}) {
      let fd: number | undefined;
      try {
        if (options.stdinFile !== undefined) fd = openSync(options.stdinFile, 'r');
        const r = spawnSync(process.execPath, [bin, ...args], {
          ...spawnOptions(options),
          input: options.input,
          stdio: [fd ?? 'pipe', 'pipe', 'pipe'],
        });
        if (r.error) throw r.error;
        return {
          code: r.status,
          signal: r.signal,
          stdout: r.stdout as Buffer,
          stderr: (r.stderr as Buffer).toString('utf8'),
        };
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    },
    start(args, options = {}) {
      return spawn(process.execPath, [bin, ...args], {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    },
    tempDir: () => temps.tempDir(),
    dispose: () => temps.dispose(),
  };
}
