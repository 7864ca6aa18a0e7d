/**
 * The real `bloomkit` command for tests: built once per test file with esbuild (tsup's engine)
 * from src/cli.ts and src/node.ts into a temporary folder, then run as a subprocess with
 * `node dist/cli.js ...`, exactly as the installed bin runs.
 *
 *   const cli = await buildCli();            // in beforeAll
 *   const r = cli.run(['info', file]);       // { code, stdout (Buffer), stderr (string) }
 *   cli.dispose();                           // in afterAll
 */

import { type SpawnSyncOptions, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

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
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface BuiltCli {
  /** The folder holding cli.js and node.js (and their shared chunks). */
  readonly dir: string;
  /** Path of the built command. */
  readonly bin: string;
  /** Path of the built `bloomkit/node` entry (for child scripts). */
  readonly nodeEntry: string;
  run(args: readonly string[], options?: RunOptions): CliResult;
  /** Starts the command without waiting (for signals). */
  start(args: readonly string[], options?: RunOptions): ReturnType<typeof spawn>;
  /** A fresh temporary folder, removed by `dispose`. */
  tempDir(): string;
  dispose(): void;
}

export async function buildCli(): Promise<BuiltCli> {
  const dir = mkdtempSync(join(tmpdir(), 'bloomkit-cli-'));
  await build({
    absWorkingDir: ROOT,
    entryPoints: { cli: 'src/cli.ts', node: 'src/node.ts' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: dir,
    outExtension: { '.js': '.js' },
    logLevel: 'error',
    // ESM output that still lets bundled CommonJS call require().
    banner: {
      js: "import { createRequire as __bkRequire } from 'node:module'; const require = __bkRequire(import.meta.url);",
    },
  });
  const temps: string[] = [dir];
  const bin = join(dir, 'cli.js');
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
    tempDir() {
      const t = mkdtempSync(join(tmpdir(), 'bloomkit-cli-t-'));
      temps.push(t);
      return t;
    },
    dispose() {
      for (const t of temps) rmSync(t, { recursive: true, force: true });
    },
  };
}
