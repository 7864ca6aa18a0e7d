import { defineConfig, type Plugin } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { MIRROR_DIR, mirrorOf, SRC_DIR } from './test/support/src-mirror.js';

/** A folder as a pattern over vitest's module ids (absolute, with '/'). */
const under = (dir: string): RegExp =>
  new RegExp(`^${dir.replace(/\\/g, '/').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
const SRC = under(SRC_DIR);

/**
 * Sends every import that resolves to a file of src/ to that file's compiled copy in the mirror
 * (test/support/src-mirror.ts), which `server.deps.external` leaves to Node's own loader.
 */
const srcMirror: Plugin = {
  name: 'bloomkit-src-mirror',
  enforce: 'pre',
  async resolveId(source, importer, options) {
    const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
    if (resolved === null || !resolved.id.endsWith('.ts') || !SRC.test(resolved.id)) {
      return resolved;
    }
    return { ...resolved, id: mirrorOf(resolved.id).replace(/\\/g, '/'), external: true };
  },
};

/**
 * Whether this is `vitest` watching (asked for with `vitest watch`, `vitest dev` or `--watch`, or
 * by default, as vitest decides it: no `run`, not CI, a terminal): there the sources stay with
 * vitest's module runner, which reloads an edited file for the next run, where Node's own loader
 * would keep serving the first version to a worker for as long as it lives.
 */
const ARGS = process.argv.slice(2);
const WATCH =
  ARGS.some((a) => a === 'watch' || a === 'dev' || a === '--watch' || a === '-w') ||
  (!ARGS.some((a) => a === 'run' || a === '--run' || a === '--watch=false') &&
    !process.env.CI &&
    process.stdin.isTTY === true);

/**
 * The files that take longest (wall time in a fresh clone's full run, longest first), started
 * first so that no long file starts last and runs alone while the other workers sit idle (a fresh
 * clone has no timing cache to sort by, and vitest then orders files by size, largest first). The
 * package test comes first: in a working copy whose sources changed since the last build it also
 * rebuilds dist/ (about 40 s; about 10 s when dist/ is fresh).
 */
const SLOW_FIRST = [
  'package',
  'cli-signals',
  'web',
  'apps-examples',
  'apps-cache-guard',
  'io',
  'cli',
  'browser-workers',
  'parallel',
  'redis-cluster',
  'redis-failover',
  'cli-files',
  'parquet',
  'guava-interop',
  'redis-faults',
  'cli-redis',
  'redis-cluster-faults',
  'chunked',
  'apps-seen-set',
  'readme',
  'redis-conformance',
  'cli-dedup',
  'scalable-batch',
  'apps-runtime-filter',
  'batch',
  'redis-resend',
  'dcso-interop',
  'redis-integrity',
  'redis',
  'scalable',
  'conformance',
  'cli-threads',
  'cli-edges',
  'sidecar',
  'fpr.statistical',
  'cascade',
  'family.property',
  'atomic-file',
  'browser',
  'cuckoo',
  'bundle-size',
  'parallel-lanes',
  'redis-sharded',
  'cli-formats',
  'format.fuzz',
];

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const name = f.moduleId.replace(/^.*\/test\//, '').replace(/\.test\.ts$/, '');
      const i = SLOW_FIRST.indexOf(name);
      return i < 0 ? SLOW_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  plugins: WATCH ? [] : [srcMirror],
  test: {
    include: ['test/**/*.test.ts'],
    // The sources run as Node runs them, from a compiled mirror of src/ that Node's own loader
    // loads (test/support/src-mirror.ts); test files and their support code stay with vitest.
    ...(WATCH
      ? {}
      : {
          globalSetup: ['test/support/src-mirror.ts'],
          setupFiles: ['test/support/native-src.ts'],
          server: { deps: { external: [under(MIRROR_DIR)] } },
        }),
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One module graph per worker process, not one per file: bloomkit's sources, the test
    // support code and the libraries are loaded once per worker instead of once per file
    // (measured: the whole suite's "collect" time 70 s -> 25 s, its CPU 303 s -> 247 s). Test
    // files must therefore leave no global state behind (restore stubbed globals, close
    // servers and clients in afterAll, let the collector take back what a library counts until
    // collection: test/support/gc.ts); each still gets its own module instance of itself.
    isolate: false,
    // Three workers on two cores. Many files wait on servers, browsers, the JVM or child
    // processes (a Redis failover, Chromium starting, PostgreSQL loading a table): with one
    // worker per core both sometimes wait at once and a core idles; a third worker fills those
    // gaps (measured in whole `npm test` runs on 2 cores, alternating: vitest 131 and 141 s with
    // three workers, 150 and 143 s with two, about the same CPU). As many workers from the start
    // as at most: a pool that may stop idle workers can end the run with tinypool's unhandled
    // "Terminating worker thread" (seen with 1 to 3; vitest-dev/vitest#8564).
    maxWorkers: 3,
    minWorkers: 3,
    // A young generation of up to 128 MiB per semi-space instead of V8's 16 MiB: the tests hash
    // millions of keys and build many short-lived arrays, and a larger nursery lets most of
    // that die before it is copied (measured on the eight heaviest files: 9% less CPU; the
    // collector's share of the workers' main threads fell from 33 to 23 s in a full run).
    // And one collector thread per worker: three workers already keep both cores busy, so V8's
    // parallel and concurrent collector threads only competed with the other workers for them
    // (measured, whole runs alternating: vitest 116, 120 and 118 s with the flag, 124, 123 and
    // 123 s without; the machine's busy CPU 229-234 s against 239-243 s; a 256 MiB semi-space
    // did worse, 64 MiB about the same).
    poolOptions: { forks: { execArgv: ['--max-semi-space-size=128', '--single-threaded-gc'] } },
    sequence: { sequencer: SlowFirst },
  },
});
