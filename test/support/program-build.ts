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
 * The build is kept under node_modules/.cache/bloomkit-test-programs (test/support/build-cache.ts),
 * its key the newest modification time of what it is built from (src/, examples/, test/support/,
 * the lock file) and this working copy's path. Under a node_modules folder, vitest leaves the
 * bundles to Node's own loader.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { cachedBuild, newestOf, ROOT, SPLIT_NODE_BUILD } from './build-cache.js';

/**
 * What the build reads: a change to any of these makes a cached build stale. Not package.json:
 * `npm pack` (test/package.test.ts) rewrites it for a moment during the run, and the bundles
 * resolve nothing through it (their packages' versions are package-lock.json's).
 */
const INPUTS = ['src', 'examples', 'test/support', 'package-lock.json'];

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

let current: { key: string; dir: Promise<string> } | undefined;

/**
 * The folder holding `<name>.mjs` for every entry of {@link PROGRAMS} (and their shared chunks),
 * fresh for the current sources: built now unless a test file already built these sources.
 */
export function programBuild(): Promise<string> {
  const stamp = newestOf(INPUTS);
  const where = createHash('sha256').update(ROOT).update(JSON.stringify(PROGRAMS)).digest('hex');
  const key = `v2-${where.slice(0, 12)}-${stamp}`;
  if (current?.key !== key) current = { key, dir: buildInto(key) };
  return current.dir;
}

function buildInto(key: string): Promise<string> {
  return cachedBuild('bloomkit-test-programs', key, async (temp) => {
    await build({
      ...SPLIT_NODE_BUILD,
      entryPoints: PROGRAMS as Record<string, string>,
      outdir: temp,
      outExtension: { '.js': '.mjs' },
      // pg's optional native binding is loaded only if installed (a require in a try).
      external: ['pg-native'],
    });
  });
}
