/**
 * The worker-thread scaling curve end to end (alone: `node --import tsx bench/parallel-sources.ts
 * [--keys N] [--rounds R]`): `buildParallel` from a file of lines and from an array of strings,
 * on 1 thread (`workers: 1`, the calling thread), 2 and 4 threads (the calling one and 1 or 3
 * workers) and `'auto'`, everything the call does
 * timed (reading or packing, splitting, adding, merging); beside it, bench/parallel.ts times
 * pre-packed keys only. Then `'auto'` against one thread at 10,000, 100,000 and N keys.
 *
 * bloomkit/node is bundled first (test/support/worker-bundle.ts), so the workers load built
 * JavaScript as they do from the published package, not the sources through tsx. Configurations
 * run in turn within each round (1, 2, 4, auto, 1, 2, ...), so that they share the machine's
 * drift; the first round's threads start cold, later rounds borrow the warm threads the earlier
 * calls left (as a program that builds more than once does). Every build is checked: its bytes
 * equal the one-thread build's. Prints the BENCHMARKS.md section (markdown) on stdout.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { importNodeBundle, removeBundles } from '../test/support/worker-bundle.js';
import { corpusKeys } from './corpus.js';

const argv = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const N = Number(value('--keys') ?? 4e6);
const ROUNDS = Number(value('--rounds') ?? 4);
const FPP = 0.01;
type Workers = number | 'auto';
const CONFIGS: Workers[] = [1, 2, 4, 'auto'];

const node = await importNodeBundle();
const dir = mkdtempSync(join(tmpdir(), 'bloomkit-bench-par-'));

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** One checked build; its wall time in ms. */
async function build(source: string | string[], n: number, workers: Workers, ref: Uint8Array) {
  const t = performance.now();
  const filter = await node.buildParallel(source, { capacity: n, fpp: FPP, workers });
  const ms = performance.now() - t;
  if (!same(filter.toBytes(), ref)) throw new Error(`${workers} workers built other bits`);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

interface Curve {
  cold: Map<Workers, number>;
  warm: Map<Workers, number[]>;
}

/** Every configuration once per round, in turn. */
async function curve(source: string | string[], n: number, ref: Uint8Array): Promise<Curve> {
  const cold = new Map<Workers, number>();
  const warm = new Map<Workers, number[]>(CONFIGS.map((w) => [w, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const workers of CONFIGS) {
      const ms = await build(source, n, workers, ref);
      if (round === 0) cold.set(workers, ms);
      else warm.get(workers)!.push(ms);
    }
  }
  return { cold, warm };
}

const f = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const x = (r: number): string => `${r.toFixed(2)}×`;

function table(name: string, c: Curve): string[] {
  const one = Math.min(...c.warm.get(1)!);
  const lines = [
    `**${name}**`,
    '',
    '| workers (threads in all) | first call | later calls (best) | later calls (range) | × 1 thread |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const w of CONFIGS) {
    const all = c.warm.get(w)!;
    const best = Math.min(...all);
    const label = w === 1 ? '1 (calling thread)' : String(w);
    lines.push(
      `| ${label} | ${f(c.cold.get(w)!)} | ${f(best)} | ${f(best)}–${f(Math.max(...all))} | ${x(one / best)} |`,
    );
  }
  lines.push('');
  return lines;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const keys = corpusKeys('synthetic', N, false);
  const file = join(dir, 'keys.txt');
  writeFileSync(file, `${keys.join('\n')}\n`);
  const single = node.BloomFilter.create({ capacity: N, fpp: FPP });
  single.addBatch(node.packKeys('string', keys));
  const ref = single.toBytes();
  const fromFile = await curve(file, N, ref);
  const fromArray = await curve(keys, N, ref);
  // 'auto' against one thread at small sizes: pairs in turn, the median of each.
  const small: string[] = [];
  for (const n of [10_000, 100_000]) {
    const part = keys.slice(0, n);
    const s = node.BloomFilter.create({ capacity: n, fpp: FPP });
    s.addBatch(node.packKeys('string', part));
    const r = s.toBytes();
    const one: number[] = [];
    const auto: number[] = [];
    for (let i = 0; i < 9; i++) {
      one.push(await build(part, n, 1, r));
      auto.push(await build(part, n, 'auto', r));
    }
    small.push(
      `${n.toLocaleString('en-US')} keys (array): auto ${(median(auto) * 1000).toFixed(0)} µs, 1 thread ${(median(one) * 1000).toFixed(0)} µs (medians of 9 pairs)`,
    );
  }
  const loadAfter = loadavg()[0]!;
  const two = (c: Curve) => Math.min(...c.warm.get(1)!) / Math.min(...c.warm.get(2)!);
  const c1 = (c: Curve) => c.cold.get(1)! / c.cold.get(2)!;
  const lines = [
    '## Worker threads end to end: buildParallel from a file and from an array',
    '',
    `Command: \`node --import tsx bench/parallel-sources.ts --keys ${N} --rounds ${ROUNDS}\`. ${N.toLocaleString('en-US')} synthetic keys (URLs of about 32 bytes), classic filter, fpp ${FPP}: \`buildParallel(source, { workers })\` timed whole (reading or packing, splitting, adding, merging the copies into the shared filter), from a file of lines (${((N * 33) / 2 ** 20).toFixed(0)} MiB) and from an array of strings. "workers: w" is w threads in all: the calling thread reads or packs the chunks, hands each to one of w − 1 workers with room and adds the others itself (before the workers have started too); each thread splits and adds its chunks into a private copy, OR-ed into the shared filter at the end. Every build's bytes equal a one-thread build's. The first call starts the workers cold; later calls reuse the warm threads (${ROUNDS - 1} later rounds, configurations in turn each round).`,
    '',
    `Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores; Node ${process.version}; 1-minute load average ${loadBefore.toFixed(2)} before the run, ${loadAfter.toFixed(2)} after.`,
    '',
    ...table('From a file of lines', fromFile),
    ...table('From an array of strings', fromArray),
    `'auto' at small sizes: ${small.join('; ')}.`,
    '',
    `Scaling (later calls, best of each): 2 threads build at ${x(two(fromFile))} one thread from a file and ${x(two(fromArray))} from an array; first calls (cold worker start) at ${x(c1(fromFile))} and ${x(c1(fromArray))}.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  await main();
} finally {
  await node.endIdleThreads();
  rmSync(dir, { recursive: true, force: true });
  removeBundles();
}
