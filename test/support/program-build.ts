/**
 * The programs and worker modules that tests run as plain JavaScript (test/support/worker-bundle.ts
 * `bundleProgram` and `bundleWorker`), bundled by one esbuild call for all of them and all test
 * files, and kept on disk while what they are built from is unchanged.
 *
 * Each of these bundles holds bloomkit's sources (and, for the programs, their npm packages). Built
 * one by one, in each test file that runs one, esbuild parsed and wrote the same sources again for
 * every bundle: eight bundles, about 3.4 s of CPU. One call with code splitting parses them once and
 * writes the shared code once, as chunks beside the entries (about 1.0 s; measured with esbuild's
 * command on this machine); a run whose sources are unchanged since the last one builds nothing.
 *
 * The build goes to node_modules/.cache/bloomkit-test-programs/<key>, where the key is the newest
 * modification time of what it is built from (src/, examples/, test/support/, the lock file) and
 * this working copy's path. Test files running at the same time may both build: each
 * builds into its own folder and renames it into place; the first rename wins and the other build
 * is dropped (a rename is atomic, so no test runs a half-written build). Builds no test used for an
 * hour are removed. Under a node_modules folder, vitest leaves the bundles to Node's own loader.
 */
import { createHash } from 'node:crypto';
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
import { build } from 'esbuild';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CACHE = join(ROOT, 'node_modules', '.cache', 'bloomkit-test-programs');
/**
 * What the build reads: a change to any of these makes a cached build stale. Not package.json:
 * `npm pack` (test/package.test.ts) rewrites it for a moment during the run, and the bundles
 * resolve nothing through it (their packages' versions are package-lock.json's).
 */
const INPUTS = ['src', 'examples', 'test/support', 'package-lock.json'];
const UNUSED_MS = 60 * 60 * 1000;

/**
 * The entries built, by output name (`<name>.mjs` in the build's folder): every program and worker
 * module a test file bundles. A source not listed here is still bundled, on its own
 * (worker-bundle.ts).
 */
export const PROGRAMS: Readonly<Record<string, string>> = {
  'examples-cache-guard': 'examples/cache-guard.ts',
  'examples-deduper': 'examples/deduper.ts',
  'examples-runtime-filter': 'examples/runtime-filter.ts',
  'examples-seen-set': 'examples/seen-set.ts',
  'support-cache-guard-process': 'test/support/cache-guard-process.ts',
  'support-redis-adder': 'test/support/redis-adder.ts',
  'worker-race': 'test/support/worker-race.ts',
  'worker-add': 'test/support/worker-add.ts',
};

/** The output name of `source` (an absolute path) in the shared build, if it is one of its entries. */
export function programName(source: string): string | undefined {
  for (const [name, path] of Object.entries(PROGRAMS)) {
    if (resolve(ROOT, path) === resolve(source)) return name;
  }
  return undefined;
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

/** Removes cached builds other than `keep` that no test used for an hour. */
function prune(keep: string): void {
  for (const entry of readdirSync(CACHE)) {
    const dir = join(CACHE, entry);
    if (entry === keep) continue;
    const st = statSync(dir, { throwIfNoEntry: false });
    if (st && Date.now() - st.mtimeMs > UNUSED_MS) rmSync(dir, { recursive: true, force: true });
  }
}

let current: { key: string; dir: Promise<string> } | undefined;

/**
 * The folder holding `<name>.mjs` for every entry of {@link PROGRAMS} (and their shared chunks),
 * fresh for the current sources: built now unless a test file already built these sources.
 */
export function programBuild(): Promise<string> {
  const stamp = Math.floor(Math.max(...INPUTS.map((p) => newest(resolve(ROOT, p)))));
  const where = createHash('sha256').update(ROOT).update(JSON.stringify(PROGRAMS)).digest('hex');
  const key = `v1-${where.slice(0, 12)}-${stamp}`;
  if (current?.key !== key) current = { key, dir: buildInto(key) };
  return current.dir;
}

async function buildInto(key: string): Promise<string> {
  const dir = join(CACHE, key);
  if (statSync(join(dir, 'complete'), { throwIfNoEntry: false })) {
    const now = new Date();
    utimesSync(dir, now, now); // used: kept by prune
    return dir;
  }
  mkdirSync(CACHE, { recursive: true });
  const temp = mkdtempSync(join(CACHE, `.build-${process.pid}-`));
  try {
    await build({
      absWorkingDir: ROOT,
      entryPoints: PROGRAMS as Record<string, string>,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: temp,
      outExtension: { '.js': '.mjs' },
      // pg's optional native binding is loaded only if installed (a require in a try).
      external: ['pg-native'],
      logLevel: 'error',
      // ESM output that still lets bundled CommonJS call require().
      banner: {
        js: "import { createRequire as __bkRequire } from 'node:module'; const require = __bkRequire(import.meta.url);",
      },
    });
    writeFileSync(join(temp, 'complete'), '');
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
