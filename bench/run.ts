/**
 * `npm run bench`: bloomkit's filters side by side with bloomfilter@1.1, bloom-filters@3,
 * libbloom (C) and Guava 31.1 on the JVM, at 1M and 10M keys of two corpora (bench/corpus.ts:
 * synthetic keys and real-looking URLs), fpp 0.01; add, has(present) and has(absent); then the
 * worker-thread scaling curve (bench/parallel.ts). Writes its sections of BENCHMARKS.md (between
 * `<!-- bench:NAME -->` markers; other sections are kept) and prints them.
 *
 *   npm run bench                     full run, writes BENCHMARKS.md
 *   npm run bench -- --quick          200k keys, 3 rounds, no file written (about a minute)
 *   npm run bench -- --sizes 1e6 --corpus urls --rounds 3 --only blocked,bloomfilter,libbloom
 *                    --no-java --no-write --no-parallel
 *
 * Each key count runs in a fresh Node process (bench/js.ts: every JS library in one process,
 * taking turns) and twice in a fresh JVM, before and after it (bench/java/GuavaBench.java,
 * timed inside the JVM after a warm-up round; the better run counts). Correctness (no false negatives, the false positive count) is checked before
 * any timing. The best of the rounds is reported; the spread is in the JSON next to the table.
 * On a machine where /tmp/bloomkit-bench.lock is used, the run takes that lock (flock) so that
 * two benchmarks never share the CPU.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CorpusName } from './corpus.js';
import type { JsResult } from './js.js';
import { type GuavaResult, renderReport, type SizeResult } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const LOCK = '/tmp/bloomkit-bench.lock';
const GUAVA_JAR = process.env.GUAVA_JAR ?? '/usr/share/java/guava.jar';

interface Options {
  quick: boolean;
  sizes: number[];
  rounds: number;
  fpp: number;
  only: string | null;
  corpora: CorpusName[];
  java: boolean;
  parallel: boolean;
  write: boolean;
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick') || process.env.BLOOMKIT_BENCH_QUICK === '1';
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = value('--sizes')?.split(',').map(Number) ?? (quick ? [200_000] : [1e6, 1e7]);
  for (const n of sizes) {
    if (!Number.isSafeInteger(n) || n < 1000) throw new RangeError(`bad --sizes entry ${n}`);
  }
  return {
    quick,
    sizes,
    rounds: Number(value('--rounds') ?? (quick ? 3 : 5)),
    fpp: Number(value('--fpp') ?? 0.01),
    only: value('--only') ?? null,
    corpora: (value('--corpus')?.split(',') ?? ['synthetic', 'urls']) as CorpusName[],
    java: !argv.includes('--no-java'),
    parallel: !argv.includes('--no-parallel'),
    write: !quick && !argv.includes('--no-write'),
  };
}

/**
 * Re-runs this script under `flock` (and exits with its status) when `flock` is available, so
 * that benchmarks on a shared machine never overlap; returns if already locked or no flock.
 */
function takeLock(): void {
  if (process.env.BLOOMKIT_BENCH_LOCKED === '1') return;
  const flock = spawnSync('flock', ['--version'], { encoding: 'utf8' });
  if (flock.status !== 0) return;
  const run = spawnSync(
    'flock',
    [
      LOCK,
      process.execPath,
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit', env: { ...process.env, BLOOMKIT_BENCH_LOCKED: '1' } },
  );
  process.exit(run.status ?? 1);
}

function runJs(n: number, corpus: CorpusName, o: Options): JsResult[] {
  const args = [
    '--expose-gc',
    '--max-old-space-size=12000',
    '--import',
    'tsx',
    join(here, 'js.ts'),
    String(n),
    String(o.fpp),
    String(o.rounds),
    corpus,
  ];
  if (o.only !== null) args.push(o.only);
  const run = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (run.status !== 0) {
    throw new Error(`bench/js.ts failed for n=${n}, ${corpus} (exit ${run.status})`);
  }
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as JsResult[];
}

/** Compiles GuavaBench.java once per source version; returns the class directory or null. */
function compileGuava(): string | null {
  if (spawnSync('java', ['-version']).status !== 0 || !existsSync(GUAVA_JAR)) return null;
  const source = join(here, 'java', 'GuavaBench.java');
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 16);
  const out = join(tmpdir(), `bloomkit-bench-java-${hash}`);
  if (!existsSync(join(out, 'GuavaBench.class'))) {
    mkdirSync(out, { recursive: true });
    const javac = spawnSync('javac', ['-cp', GUAVA_JAR, '-d', out, source], { stdio: 'inherit' });
    if (javac.status !== 0) return null;
  }
  return out;
}

function runGuava(classes: string, n: number, o: Options): GuavaResult {
  const heap = Math.max(2, Math.ceil((n * 400) / 2 ** 30));
  const run = spawnSync(
    'java',
    [
      `-Xmx${heap}g`,
      '-cp',
      `${GUAVA_JAR}:${classes}`,
      'GuavaBench',
      String(n),
      String(o.fpp),
      String(o.rounds),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (run.status !== 0) throw new Error(`GuavaBench failed for n=${n} (exit ${run.status})`);
  return JSON.parse(run.stdout.trim()) as GuavaResult;
}

/** Per operation, the better of two Guava runs (their answers must agree). */
function bestOf(a: GuavaResult, b: GuavaResult): GuavaResult {
  if (a.falsePositives !== b.falsePositives || a.bitSize !== b.bitSize) {
    throw new Error('two Guava runs disagree');
  }
  return {
    ...a,
    add: Math.max(a.add, b.add),
    hasPresent: Math.max(a.hasPresent, b.hasPresent),
    hasAbsent: Math.max(a.hasAbsent, b.hasAbsent),
  };
}

function main(): void {
  const options = parseArgs(process.argv.slice(2));
  takeLock();
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const classes = options.java ? compileGuava() : null;
  if (options.java && classes === null) {
    console.error('java, javac or the Guava jar is missing: Guava is left out of this run.');
  }
  const results: SizeResult[] = [];
  const loads = [loadavg()[0]!];
  for (const n of options.sizes) {
    for (const corpus of options.corpora) {
      // Guava (synthetic keys only) runs before and after the JavaScript process, and its better
      // run counts: the JS libraries get the best of several rounds spread over time, so Guava does too.
      const java = classes !== null && corpus === 'synthetic';
      let guava: GuavaResult | null = null;
      if (java) {
        console.error(`n = ${n.toLocaleString('en-US')}: Guava on the JVM...`);
        guava = runGuava(classes, n, options);
        loads.push(loadavg()[0]!);
      }
      console.error(
        `n = ${n.toLocaleString('en-US')}, ${corpus}: JavaScript libraries and libbloom...`,
      );
      const js = runJs(n, corpus, options);
      loads.push(loadavg()[0]!);
      if (java && guava !== null) {
        console.error(`n = ${n.toLocaleString('en-US')}: Guava on the JVM again...`);
        guava = bestOf(guava, runGuava(classes, n, options));
      }
      results.push({ n, corpus, js, guava });
    }
  }
  const report = renderReport(results, {
    command,
    fpp: options.fpp,
    rounds: options.rounds,
    machine: `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores; Node ${process.version} (V8 ${process.versions.v8})${results[0]?.guava ? `; Java ${results[0].guava.java}` : ''}`,
    load: [Math.min(...loads), Math.max(...loads, loadavg()[0]!)],
  });
  console.log(report);
  const parallel = options.parallel ? runParallel(options) : null;
  if (parallel !== null) console.log(parallel);
  if (options.write) {
    let doc = existsSync(join(root, 'BENCHMARKS.md'))
      ? readFileSync(join(root, 'BENCHMARKS.md'), 'utf8')
      : '';
    doc = spliceSection(doc, 'filters', report);
    if (parallel !== null) doc = spliceSection(doc, 'parallel', parallel);
    writeFileSync(join(root, 'BENCHMARKS.md'), doc);
    writeFileSync(join(here, 'results.json'), `${JSON.stringify(results, null, 1)}\n`);
    console.error('wrote BENCHMARKS.md and bench/results.json');
  }
}

/** bench/parallel.ts in its own process: the scaling section, or null if it failed. */
function runParallel(o: Options): string | null {
  const args = ['--import', 'tsx', join(here, 'parallel.ts')];
  if (o.quick) args.push('--quick');
  const run = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (run.status !== 0) {
    console.error(`bench/parallel.ts failed (exit ${run.status}): its section is left as it was.`);
    return null;
  }
  return run.stdout.trim();
}

/**
 * Replaces the text between `<!-- bench:name -->` and `<!-- /bench:name -->` in `doc` (adding
 * the section at the end when it is missing), so that each benchmark owns its section only.
 */
export function spliceSection(doc: string, name: string, body: string): string {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const block = `${open}\n${body.trim()}\n${close}`;
  const a = doc.indexOf(open);
  const b = doc.indexOf(close);
  if (a >= 0 && b > a) return doc.slice(0, a) + block + doc.slice(b + close.length);
  const base = doc.trim() === '' ? '# Benchmarks\n' : doc.trimEnd();
  return `${base}\n\n${block}\n`;
}

main();
