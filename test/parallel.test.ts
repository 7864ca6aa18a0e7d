/**
 * Many threads, one filter: shared filters written by worker threads at once, `buildParallel`
 * and the worker pool.
 *
 * - 4 workers setting disjoint bits of shared words lose none with the atomic storage
 *   (`SharedBitArray`), while the same work with plain read-modify-writes (`BitArray` over the
 *   same kind of memory) loses some: the check can fail.
 * - The same for 4-bit counters: increments and decrements from 4 workers on counters that share
 *   bytes leave every counter at 0 with `SharedCounterArray`, and do not with `CounterArray`.
 * - A shared counting filter with adds and removes mixed from 4 workers ends with exactly the
 *   counters of one thread doing the same operations.
 * - `buildParallel` (from an array and an async iterable of three pool chunks of keys, so that
 *   several threads write at once: 4 threads, the calling one and 3 workers, for the classic
 *   filter, 2 for the blocked, split-block and counting filters; 2 from a file of more lines than
 *   one pool chunk holds)
 *   equals the filter one thread builds from the same keys, bit for bit (Guava bytes for the
 *   classic filter); the pool's `hasBatch` over several chunks equals the filter's own, in order.
 *   Each worker start costs ~0.14 s of CPU: 2 workers prove concurrent writes as well as 4.
 * - Every type from every kind of source (a file over several 1 MiB text chunks with CRLF and empty
 *   lines, an array, a Set, an async iterable), on the calling thread (`workers: 1`), 2 workers
 *   and 'auto', equals one thread's build; `type: 'classic'` and its alias 'bloom' are taken.
 * - With `workers: 2` the calling thread adds while its worker starts, and the worker then takes
 *   chunks (seen from their progress arriving later), with the bits of one thread's build.
 * - A worker holds at most three chunks handed to it whole (the caller adds a fourth itself).
 * - A build after another of the same shape, with other keys, has only its own keys' bits (the
 *   calling thread's private copy is kept between builds and cleared).
 * - Copies OR-ed into a shared filter with plain stores (`orIntoAlone`) give one thread's bits,
 *   and a copy of another shape is refused before any write.
 *
 * The workers run JavaScript bundled once for this file (test/support/worker-bundle.ts): the race
 * workers from test/support/worker-race.ts, and bloomkit/node itself from src/node.ts, whose pool
 * starts its threads on that same bundle as it does from the published dist/node.js. Compiling
 * the sources through tsx in each of the ~20 threads cost more CPU than everything checked here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { TEXT_CHUNK } from '../src/node/parallel-text.js';
import type { BloomFilter } from '../src/node.js';
import { expectBytes } from './support/bytes.js';
import { isWellFormed, mixedStrings } from './support/mixed-keys.js';
import { bundleWorker, importNodeBundle, removeBundles } from './support/worker-bundle.js';
import { releaseTogether } from './support/worker-message.js';
import type { RaceJob } from './support/worker-race.js';

const {
  BlockedBloomFilter,
  BloomFilter: Bloom,
  buildParallel,
  CountingBloomFilter,
  FilterWorkerPool,
  fromBytes,
  packKeys,
  popcount32,
  POOL_CHUNK_KEYS,
  SplitBlockBloomFilter,
} = await importNodeBundle();
const RACE = await bundleWorker(new URL('./support/worker-race.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bloomkit-parallel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterAll(removeBundles);

/** Four race workers, started once for the file: each race sends them one job each. */
let racers: Worker[] | undefined;
afterAll(async () => {
  await Promise.all((racers ?? []).map((w) => w.terminate()));
});

/** Hands one job to each worker, releases them together, and waits until all are done. */
async function race(jobs: Omit<RaceJob, 'gate'>[]): Promise<void> {
  racers ??= Array.from({ length: 4 }, () => new Worker(RACE));
  const gate = new SharedArrayBuffer(4);
  const gated = jobs.map((job) => ({ ...job, gate }));
  await releaseTogether(racers.slice(0, jobs.length), gated, gate);
}

function popcount(words: Uint32Array): number {
  let n = 0;
  for (const w of words) n += popcount32(w);
  return n;
}

describe('shared storage written by 4 workers at once', () => {
  it('loses no bit with Atomics.or, and plain read-modify-writes do lose bits', async () => {
    const words = 1 << 13;
    const run = async (atomic: boolean) => {
      const buffers = Array.from({ length: 8 }, () => new SharedArrayBuffer(words * 4));
      await race(
        [0, 1, 2, 3].map((worker) => ({
          kind: 'bits' as const,
          atomic,
          buffers,
          worker,
          workers: 4,
        })),
      );
      return buffers.reduce((lost, b) => lost + words * 32 - popcount(new Uint32Array(b)), 0);
    };
    expect(await run(true)).toBe(0);
    // Plain stores lose a bit only when two threads hit one word at the same instant: repeat
    // until it shows (the first round almost always does; on a machine whose cores are busy
    // with other work the four threads may take turns instead of meeting, and need more rounds:
    // up to 40, a few seconds, and only when the first rounds show nothing).
    let lost = 0;
    for (let round = 0; round < 40 && lost === 0; round++) lost = await run(false);
    expect(lost).toBeGreaterThan(0);
    expect(await run(true)).toBe(0);
  });

  it('keeps 4-bit counters exact with compare-and-swap, and plain updates do not', async () => {
    const run = async (atomic: boolean) => {
      const buffer = new SharedArrayBuffer(64);
      await race(
        [0, 1, 2, 3].map((worker) => ({
          kind: 'counters' as const,
          atomic,
          buffer,
          worker,
          workers: 4,
          rounds: 20000,
        })),
      );
      return new Uint8Array(buffer).some((b) => b !== 0);
    };
    expect(await run(true)).toBe(false);
    let broken = false;
    for (let round = 0; round < 40 && !broken; round++) broken = await run(false); // as above
    expect(broken).toBe(true);
    expect(await run(true)).toBe(false);
  });

  it('a shared counting filter with adds and removes mixed equals one thread doing the same', async () => {
    const keys = mixedStrings(12_000, 21, 300).filter((k) => isWellFormed(k));
    const filter = CountingBloomFilter.create({ capacity: keys.length, fpp: 0.01, shared: true });
    const handle = filter.share();
    const parts = [0, 1, 2, 3].map((w) => keys.filter((_, i) => i % 4 === w));
    await race(parts.map((part) => ({ kind: 'counting' as const, handle, keys: part })));
    const single = CountingBloomFilter.create({ capacity: keys.length, fpp: 0.01 });
    for (const part of parts) {
      single.addBatch(packKeys('string', part.slice(0, part.length >> 1)));
      for (let i = part.length >> 1; i < part.length; i++) {
        single.add(part[i]!);
        if (i % 2 === 1) single.remove(part[i - 1]!);
      }
    }
    expect(Buffer.compare(filter.toBytes(), single.toBytes())).toBe(0);
    const lost: string[] = [];
    for (const part of parts)
      for (let i = 1; i < part.length; i += 2) if (!filter.has(part[i]!)) lost.push(part[i]!);
    expect(lost).toEqual([]);
  });
});

describe('buildParallel equals the filter one thread builds', () => {
  const mixed = mixedStrings(12_000, 5, 300);
  // Three pool chunks of keys: the chunks go to different workers, which write at once.
  const more = 2 * POOL_CHUNK_KEYS + 5000 - mixed.length;
  const keys = [...mixed, ...Array.from({ length: more }, (_, i) => `many:${i}`)];
  const packed = packKeys('string', keys);
  const wellFormed = mixed.filter((k) => isWellFormed(k) && !k.includes('\n') && !k.includes('\r'));

  it('classic filter from an array: the same Guava bytes', async () => {
    const built = await buildParallel(keys, {
      type: 'classic',
      capacity: keys.length,
      fpp: 0.01,
      workers: 4,
    });
    const single = Bloom.create({ capacity: keys.length, fpp: 0.01 });
    single.addBatch(packed);
    expectBytes((built as BloomFilter).toGuava(), single.toGuava());
  });

  it('blocked and split-block filters from an async iterable, counting from an array', async () => {
    async function* stream() {
      for (const key of keys) yield key;
    }
    const blocked = await buildParallel(stream(), {
      type: 'blocked',
      capacity: keys.length,
      fpp: 0.01,
      workers: 2,
    });
    const single = BlockedBloomFilter.create({ capacity: keys.length, fpp: 0.01 });
    single.addBatch(packed);
    expectBytes(blocked.toBytes(), single.toBytes());
    const split = await buildParallel(stream(), {
      type: 'split-block',
      capacity: keys.length,
      fpp: 0.01,
      workers: 2,
    });
    const splitSingle = SplitBlockBloomFilter.create({ capacity: keys.length, fpp: 0.01 });
    splitSingle.addBatch(packed);
    expectBytes(split.toBytes(), splitSingle.toBytes());
    const counting = await buildParallel(keys, {
      type: 'counting',
      capacity: keys.length,
      fpp: 0.01,
      workers: 2,
    });
    const countingSingle = CountingBloomFilter.create({ capacity: keys.length, fpp: 0.01 });
    countingSingle.addBatch(packed);
    expectBytes(counting.toBytes(), countingSingle.toBytes());
  });

  it('from a file of lines (CRLF too), with progress; the pool answers as the filter does', async () => {
    // More lines than one pool chunk holds, so that both workers add.
    const lines = [
      ...wellFormed,
      ...Array.from({ length: POOL_CHUNK_KEYS + 5000 - wellFormed.length }, (_, i) => `line:${i}`),
    ];
    const path = join(dir, 'keys.txt');
    writeFileSync(path, lines.map((k, i) => (i % 3 === 0 ? `${k}\r\n` : `${k}\n`)).join(''));
    const seen: number[] = [];
    const built = await buildParallel(path, {
      capacity: lines.length,
      fpp: 0.01,
      workers: 2,
      onProgress: (done) => seen.push(done),
    });
    const single = Bloom.create({ capacity: lines.length, fpp: 0.01 });
    single.addBatch(packKeys('string', lines));
    expectBytes((built as BloomFilter).toGuava(), single.toGuava());
    expect(seen.at(-1)).toBe(lines.length);
    // Over two pool chunks: the answers of both workers come back in input order.
    const probe = packKeys('string', [
      ...wellFormed.slice(0, 5000),
      ...mixedStrings(4000, 99, 100),
      ...Array.from({ length: POOL_CHUNK_KEYS }, (_, i) => `probe:${i}`),
    ]);
    const pool = await FilterWorkerPool.open(built, { workers: 2 });
    try {
      const expected = single.hasBatch(probe);
      expect(expected.includes(1) && expected.includes(0)).toBe(true);
      expectBytes(await pool.hasBatch(probe), expected);
    } finally {
      await pool.close();
    }
  });

  it('a pool of private copies answers as the filter does; its added copies merge to one build', async () => {
    const filter = Bloom.create({ capacity: wellFormed.length, fpp: 0.01 });
    filter.addMany(wellFormed.slice(0, 5000));
    const probe = packKeys('string', [
      ...wellFormed.slice(0, 5000),
      ...mixedStrings(4000, 98, 100),
    ]);
    const pool = await FilterWorkerPool.withCopies(filter.toBytes(), 2);
    try {
      expectBytes(await pool.hasBatch(probe), filter.hasBatch(probe));
      // The rest of the keys go to whichever worker is free; the copies OR-ed together with the
      // filter equal one thread's build of all the keys.
      await pool.addBatch(packKeys('string', wellFormed.slice(5000)));
      const copies = await pool.copies();
      expect(copies).toHaveLength(2);
      for (const bytes of copies) filter.union(fromBytes(bytes) as BloomFilter);
    } finally {
      await pool.close();
    }
    const single = Bloom.create({ capacity: wellFormed.length, fpp: 0.01 });
    single.addMany(wellFormed);
    expectBytes(filter.toGuava(), single.toGuava());
  });

  it('every type from a file of several text chunks, an array, a Set and an async iterable, on 1, 2 and auto threads', async () => {
    // Over several 1 MiB text chunks (lines straddle each cut), CRLF on every third line, empty lines.
    const lines = Array.from({ length: 160_000 }, (_, i) =>
      i % 1000 === 999 ? '' : `https://example.com/item/${i}`,
    );
    const text = lines.map((k, i) => (i % 3 === 0 ? `${k}\r\n` : `${k}\n`)).join('');
    expect(text.length).toBeGreaterThan(TEXT_CHUNK);
    const file = join(dir, 'chunks.txt');
    writeFileSync(file, text);
    const linesPacked = packKeys('string', lines);
    async function* stream() {
      yield* lines;
    }
    const opts = { capacity: lines.length, fpp: 0.01 };
    const singles = {
      classic: Bloom.create(opts),
      blocked: BlockedBloomFilter.create(opts),
      'split-block': SplitBlockBloomFilter.create(opts),
      counting: CountingBloomFilter.create(opts),
    };
    for (const single of Object.values(singles)) single.addBatch(linesPacked);
    const runs: [keyof typeof singles, unknown, number | 'auto'][] = [];
    for (const type of Object.keys(singles) as (keyof typeof singles)[]) {
      runs.push([type, file, 2], [type, lines, 2]);
    }
    runs.push(
      ['classic', new Set(lines), 2],
      ['counting', stream(), 2],
      ['blocked', file, 1],
      ['classic', lines, 1],
      ['classic', file, 'auto'],
      ['split-block', lines, 'auto'],
      ['blocked', stream(), 'auto'],
    );
    for (const [type, source, workers] of runs) {
      const what = `${type} from ${typeof source === 'string' ? 'a file' : source?.constructor.name}, ${workers} workers`;
      const built = await buildParallel(source as string, { ...opts, type, workers });
      expectBytes(built.toBytes(), singles[type].toBytes(), what);
    }
    // 'bloom' is the classic type's other name.
    const alias = await buildParallel(lines, { ...opts, type: 'bloom', workers: 2 });
    expectBytes(alias.toBytes(), singles.classic.toBytes(), 'bloom');
  });

  it('a pool whose thread ends rejects what it sent there, and does not hang', async () => {
    const filter = Bloom.create({ capacity: 1000, fpp: 0.01, shared: true });
    const pool = await FilterWorkerPool.open(filter, { workers: 1 });
    const threads = (pool as unknown as { threads: { slots: { worker: Worker }[] } }).threads;
    await threads.slots[0]!.worker.terminate();
    await expect(pool.addBatch(packKeys('string', ['a', 'b']))).rejects.toThrow(
      /worker thread exited|closed/,
    );
    await pool.close();
  });

  it('stops on abort and names bad options', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      buildParallel(keys, { capacity: 1000, fpp: 0.01, workers: 2, signal: controller.signal }),
    ).rejects.toThrow('stop');
    await expect(buildParallel(keys, { capacity: 1000, fpp: 0.01, workers: 0 })).rejects.toThrow(
      /workers must be an integer in \[1, 256\], got 0/,
    );
    await expect(
      buildParallel(keys, { type: 'cuckoo' as 'bloom', capacity: 1000, fpp: 0.01, workers: 1 }),
    ).rejects.toThrow(
      /type must be one of classic, counting, blocked, split-block, got "cuckoo": only these types take concurrent writers \(cuckoo and scalable filters cannot be built by concurrent writers\)/,
    );
    await expect(
      buildParallel(keys, { capacity: 1000, fpp: 0.01, workers: 'many' as 'auto' }),
    ).rejects.toThrow(/workers must be an integer in \[1, 256\], got "many"/);
    expect(() => Bloom.create({ capacity: 1000, fpp: 0.01 }).share()).toThrow(
      /create it with \{ shared: true \}/,
    );
  });
});

describe('merging private copies into a shared filter without atomics', () => {
  it('orIntoAlone ORs a copy in exactly, and refuses a copy of another shape before any write', async () => {
    const { BloomFilter: SrcBloom } = await import('../src/index.js');
    const { loadSharedType, orIntoAlone, privateCopy } = await import(
      '../src/node/shared-handle.js'
    );
    const keys = Array.from({ length: 4000 }, (_, i) => `k${i}`);
    const shared = SrcBloom.create({ capacity: 4000, fpp: 0.01, shared: true });
    shared.addMany(keys.slice(0, 2000));
    // A worker thread loads the handle's type first (one type's module, not every type's).
    await loadSharedType(shared.share());
    const copy = privateCopy(shared.share());
    copy.addMany(keys.slice(2000));
    orIntoAlone(shared.share(), copy);
    const single = SrcBloom.create({ capacity: 4000, fpp: 0.01 });
    single.addMany(keys);
    expectBytes(shared.toBytes(), single.toBytes());
    const before = shared.toBytes();
    const other = SrcBloom.create({ capacity: 8000, fpp: 0.01 });
    other.addMany(['x']);
    expect(() => orIntoAlone(shared.share(), other as never)).toThrow(TypeError);
    expectBytes(shared.toBytes(), before);
  });
});

describe('buildParallel: the calling thread adds too, and its worker takes chunks', () => {
  it('a worker takes chunks once started (its progress comes later), the bits equal one thread', async () => {
    // A chunk this thread adds is counted before the source is asked for the next one; a chunk a
    // worker takes is counted when its answer arrives, later. The source pauses 50 ms between
    // chunks (the worker starts meanwhile) and stops once a worker took one, or after 40.
    let counted = 0;
    let pulledKeys = 0;
    let takenByWorker = 0;
    const yielded: string[] = [];
    async function* source() {
      for (let chunk = 0; chunk < 40 && takenByWorker === 0; chunk++) {
        if (chunk > 0) {
          if (counted < pulledKeys) takenByWorker++;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        for (let i = 0; i < POOL_CHUNK_KEYS; i++) {
          const key = `pause:${chunk}:${i}`;
          yielded.push(key);
          yield key;
        }
        pulledKeys += POOL_CHUNK_KEYS;
      }
    }
    const built = await buildParallel(source(), {
      type: 'blocked',
      capacity: 40 * POOL_CHUNK_KEYS,
      fpp: 0.01,
      workers: 2,
      onProgress: (n: number) => {
        counted = n;
      },
    });
    expect(takenByWorker).toBe(1);
    const single = BlockedBloomFilter.create({ capacity: 40 * POOL_CHUNK_KEYS, fpp: 0.01 });
    single.addBatch(packKeys('string', yielded));
    expectBytes(built.toBytes(), single.toBytes());
  });
  it('a worker queues three handed chunks and no more (the caller adds a fourth itself)', async () => {
    const filter = Bloom.create({ capacity: 1000, fpp: 0.01, shared: true });
    const pool = await FilterWorkerPool.withCopiesOf(filter.share(), 1);
    try {
      const buffer = new SharedArrayBuffer(16);
      new Uint8Array(buffer).set(new TextEncoder().encode('a\nb\n'));
      const chunk = { buffer, start: 0, length: 4, separator: 0x0a };
      // Offered at once: no answer can free a place in between.
      const taken = [1, 2, 3, 4].map(() => pool.tryAddText(chunk));
      expect(taken.map((t) => t !== null)).toEqual([true, true, true, false]);
      const done = await Promise.all(taken.slice(0, 3).map((t) => t!.done));
      expect(done.map((d) => d.records)).toEqual([2, 2, 2]);
      // A place is free again; its answer is awaited (closing the pool would reject it).
      const again = pool.tryAddText(chunk);
      expect(again).not.toBeNull();
      expect((await again!.done).records).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it("a build after one of the same shape starts blank (the calling thread's copy is reused, cleared)", async () => {
    const opts = { type: 'classic', capacity: 50_000, fpp: 0.01 } as const;
    const first = Array.from({ length: 40_000 }, (_, i) => `first:${i}`);
    const second = Array.from({ length: 30_000 }, (_, i) => `second:${i}`);
    await buildParallel(first, { ...opts, workers: 1 });
    for (const workers of [1, 2]) {
      const built = await buildParallel(second, { ...opts, workers });
      const single = Bloom.create(opts);
      single.addBatch(packKeys('string', second));
      expectBytes(built.toBytes(), single.toBytes(), `${workers} threads`);
    }
  });
});
