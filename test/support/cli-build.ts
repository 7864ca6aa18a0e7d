/**
 * The `bloomkit` command built with esbuild (tsup's engine), once for all test files. The build
 * goes to node_modules/.cache/bloomkit-cli/<key>, where the key is the newest modification time
 * of what it is built from (src/, the package and lock files, this file), so an edit to src/
 * makes the next test file build afresh. Test files running at the same time may both build:
 * each builds into its own folder and renames it into place; the first rename wins and the other
 * build is dropped (a rename is atomic, so no test runs a half-written build). Builds no test
 * used for an hour are removed.
 */

import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { hotPathChunk } from '../../scripts/cli-chunks.js';
import { commandAsCommonJs } from '../../scripts/cli-commonjs.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CACHE = join(ROOT, 'node_modules', '.cache', 'bloomkit-cli');
/** What the build reads: a change to any of these makes a cached build stale. */
const INPUTS = [
  'src',
  'package.json',
  'package-lock.json',
  'scripts/cli-chunks.ts',
  'scripts/cli-commonjs.ts',
  fileURLToPath(import.meta.url),
];
const UNUSED_MS = 60 * 60 * 1000;

/** The newest modification time below `path` (ms); folders count (a removed file). */
function newest(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

/** Removes cached builds other than `keep` that no test used for an hour. */
function prune(keep: string): void {
  for (const entry of readdirSync(CACHE)) {
    const dir = join(CACHE, entry);
    if (entry === keep) continue;
    const st = statSync(dir, { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs > UNUSED_MS) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The folder holding the built command (cli.cjs and its CommonJS files, as in dist/) and the ES
 * module build they are made from (main.js, commands.js and node.js for tests that import them,
 * and their shared chunks), fresh for the
 * current sources: built now unless a test file already built these sources.
 */
export async function cliBuild(): Promise<string> {
  const key = `v4-${Math.floor(Math.max(...INPUTS.map((p) => newest(resolve(ROOT, p)))))}`;
  const dir = join(CACHE, key);
  if (statSync(join(dir, 'cli.cjs'), { throwIfNoEntry: false })) {
    const now = new Date();
    utimesSync(dir, now, now); // used: kept by prune
    return dir;
  }
  mkdirSync(CACHE, { recursive: true });
  const temp = mkdtempSync(join(CACHE, `.build-${process.pid}-`));
  try {
    await build({
      absWorkingDir: ROOT,
      // cli.js: the command. main.js and commands.js: its main() and command table, for tests
      // that run it in their own process. cli-worker.js: what the command's worker threads
      // (--threads) load, as in dist/. node.js: bloomkit/node, for child scripts.
      entryPoints: {
        cli: 'src/cli.ts',
        main: 'src/cli/main.ts',
        commands: 'src/cli/commands/index.ts',
        node: 'src/node.ts',
        'cli-worker': 'src/node/parallel-worker.ts',
      },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: temp,
      outExtension: { '.js': '.js' },
      // As tsup leaves them out of dist/ (peer dependencies): loaded from node_modules.
      external: ['redis', 'ioredis'],
      logLevel: 'error',
      // As dist/cli.cjs is cut (tsup.config.ts): the code of a plain add or check in one file.
      plugins: [
        hotPathChunk({ root: ROOT, entry: 'src/cli.ts', apart: ['src/node/parallel-worker.ts'] }),
      ],
      // ESM output that still lets bundled CommonJS call require().
      banner: {
        js: "import { createRequire as __bkRequire } from 'node:module'; const require = __bkRequire(import.meta.url);",
      },
    });
    // The command as dist/ ships it: each file also as CommonJS (scripts/cli-commonjs.ts).
    await commandAsCommonJs(temp, temp, { sourcemap: false, removeFrom: false });
    chmodSync(join(temp, 'cli.cjs'), 0o755); // as installed: run by its #! line
    try {
      renameSync(temp, dir);
    } catch (error) {
      // Another test file renamed its build of the same sources first: use that one.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  prune(key);
  return dir;
}
