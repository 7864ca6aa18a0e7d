/**
 * Builds kept on disk under node_modules/.cache/<name>/<key> while what they are built from is
 * unchanged (test/support/cli-build.ts: the command; test/support/program-build.ts: the programs
 * tests run as plain JavaScript). The key carries the newest modification time of the inputs, so
 * an edit makes the next test file build afresh. Test files running at the same time may both
 * build: each builds into its own folder and renames it into place; the first rename wins and
 * the other build is dropped (a rename is atomic, so no test runs a half-written build). Builds
 * no test used for an hour are removed.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

/** The package's root folder. */
export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const UNUSED_MS = 60 * 60 * 1000;

/**
 * The esbuild options both cached builds share: bundled, split ES modules for Node 20 whose
 * bundled CommonJS can still call require().
 */
export const SPLIT_NODE_BUILD = {
  absWorkingDir: ROOT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'error',
  banner: {
    js: "import { createRequire as __bkRequire } from 'node:module'; const require = __bkRequire(import.meta.url);",
  },
} as const satisfies BuildOptions;
/** Written last into a finished build. */
const COMPLETE = '.complete';

/** The newest modification time (ms, whole) below any of `paths` (relative to ROOT, or absolute). */
export function newestOf(paths: readonly string[]): number {
  return Math.floor(Math.max(...paths.map((p) => newest(resolve(ROOT, p)))));
}

/** The newest modification time below `path` (ms); folders count (a removed file). */
function newest(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

/** Removes cached builds in `cache` other than `keep` that no test used for an hour. */
function prune(cache: string, keep: string): void {
  for (const entry of readdirSync(cache)) {
    const dir = join(cache, entry);
    if (entry === keep) continue;
    const st = statSync(dir, { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs > UNUSED_MS) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The folder of build `key` under node_modules/.cache/`name`: the cached one when it is complete,
 * else `make(folder)` run into a fresh folder that then takes its place.
 */
export async function cachedBuild(
  name: string,
  key: string,
  make: (into: string) => Promise<void>,
): Promise<string> {
  const cache = join(ROOT, 'node_modules', '.cache', name);
  const dir = join(cache, key);
  if (statSync(join(dir, COMPLETE), { throwIfNoEntry: false })) {
    const now = new Date();
    utimesSync(dir, now, now); // used: kept by prune
    return dir;
  }
  mkdirSync(cache, { recursive: true });
  const temp = mkdtempSync(join(cache, `.build-${process.pid}-`));
  try {
    await make(temp);
    writeFileSync(join(temp, COMPLETE), '');
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
  prune(cache, key);
  return dir;
}
