/**
 * A BloomFilter over shared memory (`shared: true`, SharedBitArray) written by several
 * worker_threads at once.
 *
 * What the atomic design guarantees, and what is checked here:
 *   - no bit is ever lost: after concurrent adds, every key answers true, and the bits are exactly
 *     those of a single-threaded filter built from the union of all keys (OR is order-free);
 *   - each bit's 0 → 1 transition is seen by exactly one `Atomics.or`: summed over all workers,
 *     the bits their `Atomics.or` calls turned from 0 to 1 equal the bits set during the run
 *     (counted by wrapping `Atomics.or` in the worker, so the production storage runs unchanged);
 *   - `add` is Guava's "some bit changed": when N workers add the same key at the same time, each
 *     of its k bits is won by one of them, so between 1 and min(N, k) of the N calls return true if
 *     the key had a bit that no other key sets, and between 0 and min(N, k) otherwise. (Not "at
 *     most one": two workers can each win a different bit of the same key.);
 *   - plain reads racing atomic writes never miss a key that was added before the race began;
 *   - `union` into the shared filter (atomic OR per word) from several workers at once loses nothing.
 */
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { BloomFilter, SharedBitArray, type StrategyName } from '../src/index.js';
import type { AddJob, AddReport } from './support/worker-add.js';
import { bundleWorker, removeBundles } from './support/worker-bundle.js';
import { releaseTogether } from './support/worker-message.js';

/** The worker, bundled once with the sources it imports (no tsx compile in each thread). */
const WORKER = await bundleWorker(new URL('./support/worker-add.ts', import.meta.url));
afterAll(removeBundles);

/**
 * Four workers, started once for the file (a start costs more CPU than most runs here): each run
 * sends one job to each of the first few.
 */
let pool: Worker[] | undefined;
afterAll(async () => {
  await Promise.all((pool ?? []).map((w) => w.terminate()));
});

/** Runs the jobs in parallel workers, releasing them together; returns their reports. */
async function runTogether(jobs: AddJob[]): Promise<AddReport[]> {
  pool ??= Array.from({ length: 4 }, () => new Worker(WORKER));
  return (await releaseTogether(pool.slice(0, jobs.length), jobs, jobs[0]!.gate)) as AddReport[];
}

function popcountAll(data: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < data.length; i++) {
    let v = data[i]!;
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return n;
}

const range = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}:${i}`);

interface Scenario {
  workers: number;
  /** Keys only worker w adds. */
  own: number;
  /** Keys every worker adds, in the same order. */
  common: number;
  capacity: number;
  fpp: number;
  strategy: StrategyName;
  mode: 'add' | 'union';
}

async function run(s: Scenario) {
  const filter = BloomFilter.create({
    capacity: s.capacity,
    fpp: s.fpp,
    strategy: s.strategy,
    shared: true,
  });
  expect(filter.bits).toBeInstanceOf(SharedBitArray);
  const preloaded = range('pre', 500);
  filter.addMany(preloaded);
  const bitsBefore = popcountAll(filter.bits.data);
  const common = range('common', s.common);
  const owns = Array.from({ length: s.workers }, (_, w) => range(`own${w}`, s.own));
  const gate = new SharedArrayBuffer(4);
  const jobs: AddJob[] = Array.from({ length: s.workers }, (_, w) => ({
    buffer: filter.bits.data.buffer as SharedArrayBuffer,
    bits: filter.bitSize,
    hashes: filter.hashes,
    funnel: filter.funnel,
    strategy: filter.strategy,
    // Interleave own and common keys so that the workers meet on the common ones mid-run.
    keys: interleave(owns[w]!, common),
    preloaded,
    mode: s.mode,
    gate,
  }));
  const reports = await runTogether(jobs);

  // Reference: one thread, the union of all keys (each distinct key once).
  const distinct = [...preloaded, ...common, ...owns.flat()];
  const reference = BloomFilter.create({ capacity: s.capacity, fpp: s.fpp, strategy: s.strategy });
  reference.addMany(distinct);
  return { filter, reference, jobs, reports, common, distinct, bitsBefore };
}

function interleave(a: string[], b: string[]): string[] {
  const out: string[] = [];
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (i < a.length) out.push(a[i]!);
    if (i < b.length) out.push(b[i]!);
  }
  return out;
}

describe('BloomFilter over SharedArrayBuffer, written by worker threads at once', () => {
  const scenarios: [string, Scenario][] = [
    [
      '4 workers, MITZ_64, disjoint + overlapping keys',
      {
        workers: 4,
        own: 20_000,
        common: 20_000,
        capacity: 100_000,
        fpp: 0.01,
        strategy: 'MURMUR128_MITZ_64',
        mode: 'add',
      },
    ],
    [
      '3 workers, MITZ_32',
      {
        workers: 3,
        own: 10_000,
        common: 15_000,
        capacity: 50_000,
        fpp: 0.01,
        strategy: 'MURMUR128_MITZ_32',
        mode: 'add',
      },
    ],
    [
      '4 workers hammering a saturated 2,496-bit filter (maximal contention)',
      {
        workers: 4,
        own: 3_000,
        common: 3_000,
        capacity: 400,
        fpp: 0.05,
        strategy: 'MURMUR128_MITZ_64',
        mode: 'add',
      },
    ],
  ];

  it.each(scenarios)('%s', async (_name, s) => {
    const { filter, reference, jobs, reports, common, distinct, bitsBefore } = await run(s);

    // No lost bits: exactly the single-threaded union, and no false negative for any key
    // (preloaded, common or a worker's own).
    expect(filter.bitSize).toBe(reference.bitSize);
    expect(filter.equals(reference)).toBe(true);
    expect(distinct.filter((k) => !filter.has(k))).toEqual([]);
    expect(filter.bitCount).toBe(popcountAll(filter.bits.data));

    // Each 0 → 1 transition was seen by exactly one Atomics.or, over all workers.
    const transitions = reports.reduce((n, r) => n + r.transitions, 0);
    expect(bitsBefore + transitions).toBe(filter.bitCount);

    // Reads racing the writers never missed a key added before the start.
    expect(reports.map((r) => r.missedPreloaded)).toEqual(reports.map(() => 0));

    // add() answers: a true needs at least one transition, and each transition makes at most one true.
    const trueAdds = reports.reduce((n, r) => n + r.adds.reduce((a, b) => a + b, 0), 0);
    expect(trueAdds).toBeLessThanOrEqual(transitions);

    // Per common key: at most min(N, k) trues; at least one if the key owns a bit no other key sets.
    // owners[bit]: the distinct keys mapping to it, counted up to 2 (1: the bit is one key's own).
    const owners = new Uint8Array(filter.bitSize);
    for (const k of distinct) {
      const bits = reference.indexesOf(k);
      bits.forEach((bit, j) => {
        if (bits.indexOf(bit) === j) owners[bit] = Math.min(2, owners[bit]! + 1); // once per key
      });
    }
    // Every job interleaves its own keys with the common ones alike: a common key has one index
    // in all of them (checked).
    const index = new Map(jobs[0]!.keys.map((k, i) => [k, i] as const));
    let withPrivateBit = 0;
    const wrong: string[] = []; // the first few keys whose add() answers break the bounds
    for (const k of common) {
      const i = index.get(k)!;
      let trues = 0;
      for (let w = 0; w < jobs.length; w++) {
        if (jobs[w]!.keys[i] !== k) expect.fail(`${k} is not at index ${i} of job ${w}`);
        trues += reports[w]!.adds[i]!;
      }
      if (trues > Math.min(s.workers, filter.hashes) && wrong.length < 10)
        wrong.push(`${k}: ${trues} adds returned true`);
      if (reference.indexesOf(k).some((bit) => owners[bit] === 1)) {
        withPrivateBit++;
        if (trues < 1 && wrong.length < 10)
          wrong.push(`${k} has a private bit but no add returned true`);
      }
    }
    expect(wrong).toEqual([]);
    if (s.capacity >= 50_000) expect(withPrivateBit).toBeGreaterThan(common.length / 2);
  });

  it('4 workers union private filters into the shared one at once: nothing is lost', async () => {
    const s: Scenario = {
      workers: 4,
      own: 30_000,
      common: 10_000,
      capacity: 150_000,
      fpp: 0.01,
      strategy: 'MURMUR128_MITZ_64',
      mode: 'union',
    };
    const { filter, reference, reports, distinct, bitsBefore } = await run(s);
    expect(filter.equals(reference)).toBe(true);
    const transitions = reports.reduce((n, r) => n + r.transitions, 0);
    expect(bitsBefore + transitions).toBe(filter.bitCount);
    expect(distinct.filter((k) => !filter.has(k))).toEqual([]);
    expect(reports.map((r) => r.missedPreloaded)).toEqual([0, 0, 0, 0]);
  });

  it('a worker sees keys added by the main thread through the same buffer, and vice versa', async () => {
    const filter = BloomFilter.create({ capacity: 1000, fpp: 0.01, shared: true });
    filter.add('from-main');
    const gate = new SharedArrayBuffer(4);
    const [report] = await runTogether([
      {
        buffer: filter.bits.data.buffer as SharedArrayBuffer,
        bits: filter.bitSize,
        hashes: filter.hashes,
        funnel: filter.funnel,
        strategy: filter.strategy,
        keys: ['from-worker'],
        preloaded: ['from-main'],
        mode: 'add',
        gate,
      },
    ]);
    expect(report!.missedPreloaded).toBe(0);
    expect(report!.adds[0]).toBe(1);
    expect(filter.has('from-worker')).toBe(true);
    expect(filter.add('from-worker')).toBe(false);
  });
});
