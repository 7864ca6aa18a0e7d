/**
 * `npm run bench:cli`: the `bloomkit` command against the tools people use today, side by side
 * in one run, end to end (process start included), each run a few times under `/usr/bin/time`
 * and reported as the run of median CPU time (user + system; wall time and peak resident memory
 * from that run):
 *
 * - add and check of 2,000,000 URL lines at p = 0.01 against the DCSO `bloom` tool (Go; Debian
 *   golang-github-dcso-bloom-cli), both reading standard input redirected from the file;
 *   check of absent keys and of present keys (printing 2,000,000 lines to /dev/null);
 *   both tools' false positive rates on the absent keys; bloomkit's add and check with
 *   `--threads 2` beside one thread (their output checked equal).
 * - dedup of 6,000,000 lines (4,000,000 distinct, 2,000,000 repeats at random places) against
 *   `awk '!seen[$0]++'`: time, peak memory (also above Node's own baseline, `node -e 0`), and
 *   the false drops (new lines dropped) counted exactly, beside the number bloomkit expected
 *   from its type's rate model, with a binomial tolerance; for each state type (blocked, the
 *   default; classic; split-block) and the scalable filter (no -n, one run).
 *
 * Correctness is checked before anything is reported: no false negatives (every present line
 * printed by check), dedup's output a subsequence of awk's. Run it alone on the machine:
 * `npm run bench:cli` (tools that are missing are skipped, said so).
 * Writes bench/cli/results.json. `npm run bench:cli -- --only dedup` (or `filters`, `threads`, a
 * comma-separated list; also BENCH_CLI_ONLY) runs only those parts and writes no results file.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from '../../test/support/cli.js';
import { mulberry32 } from '../../test/support/random.js';

const N = Number(process.env.BENCH_CLI_N ?? 2_000_000);
const DEDUP_DISTINCT = Number(process.env.BENCH_CLI_DISTINCT ?? 4_000_000);
const DEDUP_REPEATS = Number(process.env.BENCH_CLI_REPEATS ?? 2_000_000);
const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 3);
const FPP = 0.01;
const DEDUP_FPP = 1e-6;

/** The parts: bloomkit and DCSO add/check, bloomkit --threads 2, dedup vs awk. */
const PARTS = ['filters', 'threads', 'dedup'] as const;
const onlyArg = process.argv.indexOf('--only');
const ONLY = (onlyArg >= 0 ? process.argv[onlyArg + 1] : process.env.BENCH_CLI_ONLY) ?? '';
const chosen = ONLY === '' ? [...PARTS] : ONLY.split(',').map((p) => p.trim());
for (const p of chosen) {
  if (!(PARTS as readonly string[]).includes(p)) {
    throw new Error(`--only takes ${PARTS.join(', ')} (comma-separated), got ${JSON.stringify(p)}`);
  }
}
const want = (part: (typeof PARTS)[number]) => chosen.includes(part);

const work = mkdtempSync(join(tmpdir(), 'bloomkit-bench-cli-'));
const file = (name: string) => join(work, name);

const HOSTS = [
  'news.example.com',
  'shop.example.org',
  'blog.example.net',
  'docs.example.io',
  'forum.example.cn',
];
const WORDS = [
  'item',
  'page',
  'tag',
  'user',
  'search',
  'cache',
  'bloom',
  'dedup',
  'crawl',
  'index',
];

/** Line i of a URL corpus (`salt` keeps the present and absent sets apart). */
function url(i: number, salt: string): string {
  const h = HOSTS[i % HOSTS.length]!;
  const w = WORDS[(i >>> 3) % WORDS.length]!;
  return `https://${h}/${w}/${salt}${i.toString(36)}/${(i * 2654435761) >>> 0}?ref=${i % 7}`;
}

/** Writes `count` lines made by `line(i)` to `path`, streaming. */
async function writeLines(path: string, count: number, line: (i: number) => string): Promise<void> {
  const out = createWriteStream(path);
  const CHUNK = 10_000;
  for (let i = 0; i < count; i += CHUNK) {
    let text = '';
    for (let j = i; j < Math.min(count, i + CHUNK); j++) text += `${line(j)}\n`;
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

interface Timing {
  /** Wall time. */
  seconds: number;
  /** User + system CPU time (steadier than wall time on a busy machine). */
  cpuSeconds: number;
  maxRssMiB: number;
  stdoutLines?: number;
}

/** `word` quoted for bash. */
const q = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/**
 * Runs `cmd args` (with `2> stderrTo` when given) `rounds` times under /usr/bin/time; the run of
 * median CPU time (on a shared machine the least noisy figure), with its wall time and memory.
 */
function time(
  cmd: string,
  args: readonly string[],
  options: {
    stdin?: string;
    stdout?: string;
    rounds?: number;
    before?: () => void;
    stderrTo?: string;
  } = {},
): Timing {
  const runs: Timing[] = [];
  for (let r = 0; r < (options.rounds ?? ROUNDS); r++) {
    options.before?.();
    const redirect = `${options.stdin ? ` < ${q(options.stdin)}` : ''} > ${q(options.stdout ?? '/dev/null')}`;
    const inner =
      [cmd, ...args].map(q).join(' ') + (options.stderrTo ? ` 2> ${q(options.stderrTo)}` : '');
    const shell = `exec /usr/bin/time -f '%e %U %S %M' bash -c ${q(`exec ${inner}`)}${redirect}`;
    const res = spawnSync('bash', ['-c', shell], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const last = res.stderr.trim().split('\n').at(-1) ?? '';
    const m = /^([0-9.]+) ([0-9.]+) ([0-9.]+) ([0-9]+)$/.exec(last);
    if (!m)
      throw new Error(
        `${cmd} ${args.join(' ')} failed (${res.status}): ${res.stderr.slice(-2000)}`,
      );
    const t = {
      seconds: Number(m[1]),
      cpuSeconds: Number(m[2]) + Number(m[3]),
      maxRssMiB: Number(m[4]) / 1024,
    };
    runs.push(t);
  }
  runs.sort((a, b) => a.cpuSeconds - b.cpuSeconds);
  return runs[(runs.length - 1) >> 1]!;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

function countLines(path: string): number {
  return Number(execFileSync('wc', ['-l', path], { encoding: 'utf8' }).trim().split(/\s+/)[0]);
}

function dcsoBinary(): string | null {
  try {
    const listed = execFileSync('dpkg', ['-L', 'golang-github-dcso-bloom-cli'], {
      encoding: 'utf8',
    });
    const bin = listed.split('\n').find((l) => /\/bin\/bloom$/.test(l));
    if (bin && existsSync(bin)) return bin;
  } catch {
    // not installed as a Debian package: try PATH
  }
  const which = spawnSync('bash', ['-c', 'command -v bloom'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() : null;
}

const fmt = (t: Timing) =>
  `${t.seconds.toFixed(2)} s wall, ${t.cpuSeconds.toFixed(2)} s CPU, ${t.maxRssMiB.toFixed(0)} MiB`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

async function main(): Promise<void> {
  const results: Record<string, unknown> = {
    n: N,
    fpp: FPP,
    rounds: ROUNDS,
    date: new Date().toISOString(),
    loadAtStart: load(),
  };
  console.log(`load average at start: ${load()} (cores: 2 shared)`);
  console.log(
    `bench:cli in ${work}: generating ${N.toLocaleString()} present and absent URL lines...`,
  );
  if (want('filters') || want('threads')) {
    await writeLines(file('present.txt'), N, (i) => url(i, 'p'));
    await writeLines(file('absent.txt'), N, (i) => url(i, 'a'));
  }
  const cli = await buildCli();
  const node = process.execPath;
  const bk = (args: string[]) => [cli.bin, ...args];
  try {
    // ---- add / check vs DCSO bloom
    type Trio = { add: Timing; checkAbsent: Timing; checkPresent: Timing; fpr: number };
    /** add, check absent, check present with `argv(verb, filter)` after `create()`. */
    const trio = (
      name: string,
      cmd: string,
      argv: (verb: string) => string[],
      create: () => void,
    ): Trio => {
      const add = time(cmd, argv('add'), { stdin: file('present.txt'), before: create });
      const checkAbsent = time(cmd, argv('check'), {
        stdin: file('absent.txt'),
        stdout: file('absent.out'),
      });
      const checkPresent = time(cmd, argv('check'), {
        stdin: file('present.txt'),
        stdout: file('present.out'),
      });
      if (countLines(file('present.out')) !== N)
        throw new Error(`${name}: check missed present lines`);
      const fpr = countLines(file('absent.out')) / N;
      console.log(
        `${name.padEnd(18)} add ${fmt(add)} | check absent ${fmt(checkAbsent)} | check present ${fmt(checkPresent)} | FPR ${(fpr * 100).toFixed(3)}%`,
      );
      return { add, checkAbsent, checkPresent, fpr };
    };
    const ours = file('ours.bloom');
    const mine: Record<string, Trio> = {};
    if (want('filters')) {
      for (const type of ['classic', 'blocked']) {
        mine[type] = trio(
          `bloomkit ${type}`,
          node,
          (verb) => bk([verb, ours]),
          () => {
            rmSync(ours, { force: true });
            execFileSync(
              node,
              bk(['create', ours, '-n', String(N), '-p', String(FPP), '--type', type]),
            );
          },
        );
      }
      results.bloomkit = mine;
      const dcso = dcsoBinary();
      if (dcso === null) {
        console.log(
          'DCSO bloom: not installed (apt-get install golang-github-dcso-bloom-cli): skipped',
        );
      } else {
        const theirs = file('dcso.bloom');
        const verbs: Record<string, string> = { add: 'insert', check: 'check' };
        const d = trio(
          'DCSO bloom',
          dcso,
          (verb) => [verbs[verb]!, theirs],
          () => {
            rmSync(theirs, { force: true });
            execFileSync(dcso, ['create', '-n', String(N), '-p', String(FPP), theirs]);
          },
        );
        results.dcso = d;
        for (const [type, m] of Object.entries(mine)) {
          const both = (a: Timing, b: Timing) =>
            `${ratio(a.seconds, b.seconds)} wall, ${ratio(a.cpuSeconds, b.cpuSeconds)} CPU`;
          console.log(
            `speed-up of bloomkit ${type} over DCSO (their time / ours): add ${both(d.add, m.add)}; check absent ${both(d.checkAbsent, m.checkAbsent)}; check present ${both(d.checkPresent, m.checkPresent)}`,
          );
        }
      }
    }
    if (want('threads')) {
      // The same classic add and check on 2 worker threads: output checked equal to one thread's.
      const oneThread = file('ours-one.bloom');
      rmSync(oneThread, { force: true });
      execFileSync(node, bk(['create', oneThread, '-n', String(N), '-p', String(FPP)]));
      const presentFd = openSync(file('present.txt'), 'r');
      try {
        execFileSync(node, bk(['add', oneThread]), { stdio: [presentFd, 'ignore'] });
      } finally {
        closeSync(presentFd);
      }
      const threaded = trio(
        'bloomkit classic -T 2',
        node,
        (verb) => bk([verb, ours, '--threads', '2']),
        () => {
          rmSync(ours, { force: true });
          execFileSync(node, bk(['create', ours, '-n', String(N), '-p', String(FPP)]));
        },
      );
      if (!readFileSync(ours).equals(readFileSync(oneThread))) {
        throw new Error('add --threads 2 wrote another filter than one thread');
      }
      results.threads2 = threaded;
      const classic = mine.classic;
      const rel = (one: Timing, two: Timing) =>
        `${ratio(one.seconds, two.seconds)} wall, ${ratio(one.cpuSeconds, two.cpuSeconds)} CPU`;
      if (classic !== undefined)
        console.log(
          `--threads 2 over one thread (one's time / two's): add ${rel(classic.add, threaded.add)}; check absent ${rel(classic.checkAbsent, threaded.checkAbsent)}; check present ${rel(classic.checkPresent, threaded.checkPresent)}`,
        );
    }

    // ---- dedup vs awk
    if (want('dedup')) {
      const total = DEDUP_DISTINCT + DEDUP_REPEATS;
      console.log(
        `generating ${total.toLocaleString()} lines (${DEDUP_DISTINCT.toLocaleString()} distinct) for dedup...`,
      );
      const rnd = mulberry32(2024);
      // Line i: a new URL, or a repeat of an earlier one; repeats spread at random over the file.
      const isRepeat = new Uint8Array(total);
      for (let placed = 0; placed < DEDUP_REPEATS; ) {
        const i = 1 + Math.floor(rnd() * (total - 1));
        if (isRepeat[i] === 0) {
          isRepeat[i] = 1;
          placed++;
        }
      }
      let fresh = 0;
      await writeLines(file('dedup.txt'), total, (i) =>
        isRepeat[i] === 1 ? url(Math.floor(rnd() * fresh), 'd') : url(fresh++, 'd'),
      );
      const awk = time('awk', ['!seen[$0]++'], {
        stdin: file('dedup.txt'),
        stdout: file('awk.out'),
        rounds: 1,
      });
      const baseline = time(node, ['-e', '0'], { rounds: 5 });
      console.log(`node -e 0 (Node's own start and memory): ${fmt(baseline)}`);
      const awkLines = countLines(file('awk.out'));
      if (awkLines !== DEDUP_DISTINCT)
        throw new Error(`awk printed ${awkLines} lines, expected ${DEDUP_DISTINCT}`);
      const runs: Record<
        string,
        Timing & { printed: number; falseDrops: number; expected: number; aboveBaselineMiB: number }
      > = {};
      const sized = ['-n', String(DEDUP_DISTINCT), '-p', String(DEDUP_FPP)];
      for (const [name, extra, rounds] of [
        [`dedup -n ${DEDUP_DISTINCT} -p ${DEDUP_FPP} (blocked, the default)`, sized, ROUNDS],
        [
          `dedup -n ${DEDUP_DISTINCT} -p ${DEDUP_FPP} --type classic`,
          [...sized, '--type', 'classic'],
          ROUNDS,
        ],
        [
          `dedup -n ${DEDUP_DISTINCT} -p ${DEDUP_FPP} --type split-block`,
          [...sized, '--type', 'split-block'],
          ROUNDS,
        ],
        [`dedup -p ${DEDUP_FPP} (scalable)`, ['-p', String(DEDUP_FPP)], 1],
      ] as const) {
        const summaryFile = file('summary.json');
        const t = time(node, bk(['dedup', '--json', ...extra]), {
          stdin: file('dedup.txt'),
          stdout: file('ours-dedup.out'),
          stderrTo: summaryFile,
          rounds,
        });
        const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as {
          printed: number;
          expectedFalseDrops: number;
        };
        const printed = countLines(file('ours-dedup.out'));
        const falseDrops = DEDUP_DISTINCT - printed;
        const aboveBaselineMiB = t.maxRssMiB - baseline.maxRssMiB;
        runs[name] = {
          ...t,
          printed,
          falseDrops,
          expected: summary.expectedFalseDrops,
          aboveBaselineMiB,
        };
        // Every line printed is a first sighting in awk's order (a subsequence of awk's output).
        const cmp = spawnSync(
          'bash',
          [
            '-c',
            `comm -23 <(sort '${file('ours-dedup.out')}') <(sort '${file('awk.out')}') | wc -l`,
          ],
          {
            encoding: 'utf8',
          },
        );
        if (cmp.stdout.trim() !== '0') throw new Error(`${name}: printed lines awk did not print`);
        const tolerance = 4 * Math.sqrt(summary.expectedFalseDrops) + 2;
        const within = Math.abs(falseDrops - summary.expectedFalseDrops) <= tolerance;
        console.log(
          `bloomkit ${name}: ${fmt(t)} (${aboveBaselineMiB.toFixed(0)} MiB above node -e 0) | false drops ${falseDrops} (expected ${summary.expectedFalseDrops.toFixed(2)}, ${within ? 'within' : 'OUTSIDE'} ±${tolerance.toFixed(1)}) | vs awk: ${ratio(awk.seconds, t.seconds)} wall, ${ratio(awk.cpuSeconds, t.cpuSeconds)} CPU, ${ratio(awk.maxRssMiB, t.maxRssMiB)} less peak memory (${ratio(awk.maxRssMiB, aboveBaselineMiB)} counting only memory above Node's baseline)`,
        );
        if (!within) process.exitCode = 1;
      }
      console.log(`awk '!seen[$0]++': ${fmt(awk)}`);
      results.dedup = {
        lines: total,
        distinct: DEDUP_DISTINCT,
        fpp: DEDUP_FPP,
        awk,
        nodeBaseline: baseline,
        bloomkit: runs,
      };
    }
    results.loadAtEnd = load();
    console.log(`load average at end: ${load()}`);
    if (ONLY === '') {
      const out = fileURLToPath(new URL('./results.json', import.meta.url));
      writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
      console.log(`wrote ${out}`);
    }
  } finally {
    cli.dispose();
    rmSync(work, { recursive: true, force: true });
  }
}

// The work folder goes also when main fails before its own cleanup (a failed build).
await main().finally(() => rmSync(work, { recursive: true, force: true }));
