/**
 * A pool of worker threads around one filter on shared memory: batches of packed keys are cut
 * into chunks, and each chunk goes to the next free worker, which adds or tests its keys on the
 * same bits (`filter.share()` / `fromShared`). Adds from many workers lose nothing: the shared
 * storages set bits with `Atomics.or` and change counters with a compare-and-swap loop.
 *
 * Each worker has two lanes of shared chunk buffers (node/parallel-lanes.ts), so at most two
 * chunks in flight and memory bounded for any input: the main thread copies a chunk into a free
 * lane (two `memcpy`s), the worker runs it and answers `has` in the lane. A chunk is at most
 * {@link POOL_CHUNK_KEYS} keys and {@link POOL_CHUNK_BYTES} bytes (or one longer key).
 *
 * Workers run bloomkit's own code: the bootstrap imports the module this file was bundled into
 * (dist/node.js or node.cjs) and calls its `runParallelWorker`; from TypeScript sources (tests,
 * tsx) it loads node/parallel-worker.ts through tsx, which is then installed.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { show } from '../errors.js';
import { checkOut } from '../filters/base.js';
import type { PackedKeys, ProgressOptions } from '../filters/filter.js';
import { checkPacked, packKeys } from '../filters/packed.js';
import type { Funnel, Key } from '../hash/keys.js';
import { Lane } from './parallel-lanes.js';
import type { BatchMessage, BatchReply, WorkerFilterSource } from './parallel-worker.js';
import type { SharedFilterHandle } from './shared-handle.js';

declare const __filename: string | undefined;

/** Keys per chunk sent to a worker: large enough to amortize a message, small enough to balance. */
export const POOL_CHUNK_KEYS = 65536;

/** Bytes of keys per chunk at most (a chunk holds at least one key, however long). */
export const POOL_CHUNK_BYTES = 4 << 20;

/** The end of the chunk that begins at key `start`: key and byte limits, at least one key. */
function chunkEnd(batch: PackedKeys, start: number, n: number): number {
  const offsets = batch.offsets;
  let stop = Math.min(n, start + POOL_CHUNK_KEYS);
  const limit = offsets[start]! + POOL_CHUNK_BYTES;
  if (offsets[stop]! <= limit) return stop;
  // The last key boundary within the byte limit (binary search; offsets never decrease).
  let lo = start + 1;
  while (lo < stop) {
    const mid = (lo + stop + 1) >>> 1;
    if (offsets[mid]! <= limit) lo = mid;
    else stop = mid - 1;
  }
  return lo;
}

/** The URL of the module this code runs from (ESM, CJS bundle, or TypeScript source). */
function selfUrl(): string {
  if (typeof __filename === 'string') return pathToFileURL(__filename).href;
  return import.meta.url;
}

/**
 * The eval'd bootstrap that loads bloomkit in a worker and starts its loop. The worker module is
 * the first that exists of: parallel-worker.js beside this file (the one-file-per-module ESM
 * build), cli-worker.js (beside the bundled `bloomkit` command), node.js / node.cjs (a bundle
 * whose entry exports `runParallelWorker`).
 */
function bootstrap(): string {
  const self = selfUrl();
  if (self.endsWith('.ts')) {
    const worker = new URL('./parallel-worker.ts', self).href;
    const require = createRequire(self);
    const tsxPkg = require.resolve('tsx/package.json');
    const api = pathToFileURL(tsxPkg.replace(/package\.json$/, 'dist/esm/api/index.mjs')).href;
    return `import(${JSON.stringify(api)}).then(({ tsImport }) => tsImport(${JSON.stringify(worker)}, ${JSON.stringify(self)})).then((m) => m.runParallelWorker())`;
  }
  const names = self.endsWith('.cjs')
    ? ['./node.cjs']
    : ['./parallel-worker.js', './cli-worker.js', './node.js'];
  const urls = names.map((name) => new URL(name, self));
  const entry = (urls.find((url) => self.startsWith('file:') && existsSync(url)) ?? urls.at(-1)!)
    .href;
  return `import(${JSON.stringify(entry)}).then((m) => m.runParallelWorker())`;
}

/** Throws `RangeError` unless `workers` is an integer in [1, 256]; defaults to the core count. */
export function checkWorkers(workers: number | undefined): number {
  const n = workers ?? availableParallelism();
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    throw new RangeError(`workers must be an integer in [1, 256], got ${show(workers)}`);
  }
  return n;
}

interface Pending {
  resolve(reply: BatchReply): void;
  reject(error: Error): void;
  /**
   * Run on the reply before the slot is released: frees the chunk's lane (copying its answers
   * out first), so no chunk can be loaded into a lane whose answers are still to be read.
   */
  settle?(reply: BatchReply): void;
}

interface Slot {
  worker: Worker;
  inFlight: number;
  lanes: [Lane, Lane];
}

/** Worker threads that add to and test one shared filter. */
export class FilterWorkerPool {
  private readonly slots: Slot[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;
  private waiters: (() => void)[] = [];

  private constructor(slots: Slot[]) {
    this.slots = slots;
  }

  /** Starts `workers` threads (default: the core count) on the filter behind `handle`. */
  static start(handle: SharedFilterHandle, workers?: number): Promise<FilterWorkerPool> {
    return FilterWorkerPool.spawn({ handle }, workers);
  }

  /**
   * Starts `workers` threads, each with its own copy of the filter whose native bytes
   * (`toBytes()`) are `bytes`: for filters that cannot live in shared memory, or that are
   * faster in their own (a classic filter probes in its WebAssembly kernel). Memory: one copy
   * per worker. Tests answer as the filter would; adds go to the worker's copy only: gather them
   * with {@link copies} and merge (`union`).
   */
  static async withCopies(bytes: Uint8Array, workers?: number): Promise<FilterWorkerPool> {
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`bytes must be a Uint8Array, got ${show(bytes)}`);
    }
    return FilterWorkerPool.spawn({ copy: bytes }, workers);
  }

  private static async spawn(
    workerData: WorkerFilterSource,
    workers?: number,
  ): Promise<FilterWorkerPool> {
    const n = checkWorkers(workers);
    const code = bootstrap();
    const slots: Slot[] = [];
    const ready: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const worker = new Worker(code, { eval: true, workerData });
      slots.push({
        worker,
        inFlight: 0,
        lanes: [new Lane(2 * i, POOL_CHUNK_KEYS), new Lane(2 * i + 1, POOL_CHUNK_KEYS)],
      });
      ready.push(
        new Promise<void>((resolve, reject) => {
          worker.once('message', (m) => (m === 'ready' ? resolve() : reject(new Error(String(m)))));
          worker.once('error', reject);
        }),
      );
    }
    const pool = new FilterWorkerPool(slots);
    try {
      await Promise.all(ready);
    } catch (e) {
      await pool.close();
      throw e;
    }
    for (const slot of slots) {
      slot.worker.on('message', (reply: BatchReply) => pool.onReply(slot, reply));
      slot.worker.on('error', (e) => pool.failAll(e));
    }
    return pool;
  }

  /** Number of worker threads. */
  get size(): number {
    return this.slots.length;
  }

  /** Gives back a slot's reservation, and wakes whoever waits for room. */
  private release(slot: Slot): void {
    slot.inFlight--;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private onReply(slot: Slot, reply: BatchReply): void {
    const p = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    p?.settle?.(reply);
    this.release(slot);
    if (p === undefined) return;
    if (reply.error !== undefined) {
      const Ctor =
        reply.error.name === 'RangeError'
          ? RangeError
          : reply.error.name === 'TypeError'
            ? TypeError
            : Error;
      p.reject(new Ctor(reply.error.message));
    } else p.resolve(reply);
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  /**
   * The least busy worker with room, waiting for one when all have two chunks in flight. The
   * slot is reserved (its count of chunks in flight raised) before this resolves, so runs going
   * on at once never put a third chunk on a worker, whose two lanes are then both taken.
   */
  private async freeSlot(): Promise<Slot> {
    for (;;) {
      if (this.closed) throw new Error('the worker pool is closed');
      let best: Slot | null = null;
      for (const s of this.slots)
        if (s.inFlight < 2 && (best === null || s.inFlight < best.inFlight)) best = s;
      if (best !== null) {
        best.inFlight++;
        return best;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /**
   * The native bytes of every worker's own copy (a pool made by {@link withCopies}), after the
   * batches sent so far; for a pool on shared memory, each is the shared filter's bytes.
   */
  async copies(): Promise<Uint8Array[]> {
    return Promise.all(
      this.slots.map((slot) => {
        const message: BatchMessage = { id: this.nextId++, op: 'bytes' };
        slot.inFlight++;
        return new Promise<BatchReply>((resolve, reject) => {
          this.pending.set(message.id, { resolve, reject });
          slot.worker.postMessage(message);
        }).then((reply) => reply.bytes!);
      }),
    );
  }

  /**
   * Copies keys [start, stop) of `batch` into a free lane of `slot` (reserved by
   * {@link freeSlot}) and sends them; resolves to
   * the worker's count, once `out` (for 'has') holds their answers from index `start`.
   */
  private dispatch(
    slot: Slot,
    op: 'add' | 'has',
    batch: PackedKeys,
    start: number,
    stop: number,
    out: Uint8Array | null,
  ): Promise<number> {
    const lane = slot.lanes[0].busy ? slot.lanes[1] : slot.lanes[0];
    let message: BatchMessage;
    try {
      message = { id: this.nextId++, op, chunk: lane.load(batch, start, stop) };
    } catch (error) {
      this.release(slot);
      return Promise.reject(error);
    }
    lane.busy = true;
    const settle = (reply: BatchReply): void => {
      if (out !== null && reply.error === undefined) out.set(lane.found(stop - start), start);
      lane.busy = false;
    };
    return new Promise<BatchReply>((resolve, reject) => {
      this.pending.set(message.id, { resolve, reject, settle });
      slot.worker.postMessage(message);
    }).then((reply) => reply.count!);
  }

  /**
   * Runs `op` over every key of `batch`, a chunk per message (see `chunkEnd`), on
   * whichever worker is free. For 'has', `out[i]` gets key i's answer (1/0). Resolves to the number of
   * keys that were new ('add') or found ('has'). `onProgress(done, total)` is called as chunks
   * complete. On abort no further chunk is sent and the promise rejects with `signal.reason`
   * once the chunks in flight are done; for 'add', keys of those chunks stay added (a Bloom
   * filter cannot take keys back), and `onProgress` has counted them.
   */
  async run(
    op: 'add' | 'has',
    batch: PackedKeys,
    out: Uint8Array | null,
    options: ProgressOptions = {},
  ): Promise<number> {
    const n = batch.offsets.length - 1;
    const { signal, onProgress } = options;
    let done = 0;
    let total = 0;
    let failure: { error: unknown } | null = null;
    const inFlight = new Set<Promise<void>>();
    for (let start = 0, stop = 0; start < n && failure === null; start = stop) {
      const slot = await this.freeSlot();
      if (signal?.aborted) {
        this.release(slot);
        failure = { error: signal.reason };
        break;
      }
      stop = chunkEnd(batch, start, n);
      const keys = stop - start;
      const p: Promise<void> = this.dispatch(slot, op, batch, start, stop, out).then(
        (count) => {
          total += count;
          done += keys;
          onProgress?.(done, n);
        },
        (error: unknown) => {
          failure ??= { error };
        },
      );
      inFlight.add(p);
      void p.then(() => inFlight.delete(p));
    }
    await Promise.all(inFlight);
    if (failure !== null) throw (failure as { error: unknown }).error;
    return total;
  }

  /**
   * A pool of `workers` threads (default: the core count) on `filter`, which must keep its bits
   * in shared memory (made with `{ shared: true }`, or by `buildParallel`): every worker opens
   * it with `fromShared` and reads and writes the same memory as this thread.
   */
  static async open(
    filter: { share(): SharedFilterHandle },
    options: { workers?: number } = {},
  ): Promise<FilterWorkerPool> {
    if (filter === null || typeof filter !== 'object' || typeof filter.share !== 'function') {
      throw new TypeError(
        `filter must be a filter that can share() its memory, got ${show(filter)}`,
      );
    }
    return FilterWorkerPool.start(filter.share(), options.workers);
  }

  /** `has` of every packed key, on the workers: `out[i]` is 1 or 0 (a new array when not given). */
  async hasBatch(
    batch: PackedKeys,
    options: ProgressOptions & { out?: Uint8Array } = {},
  ): Promise<Uint8Array> {
    const n = checkPacked(batch);
    const out = checkOut(options.out, n);
    await this.run('has', batch, out, options);
    return out;
  }

  /** Adds every packed key, on the workers; resolves to how many were new (see {@link run}). */
  addBatch(batch: PackedKeys, options: ProgressOptions = {}): Promise<number> {
    checkPacked(batch);
    return this.run('add', batch, null, options);
  }

  /** `has` of every key of `keys` (encoded with `funnel`), on the workers: 1 or 0 per key. */
  hasMany(
    funnel: Funnel,
    keys: readonly Key[],
    options: ProgressOptions = {},
  ): Promise<Uint8Array> {
    return this.hasBatch(packKeys(funnel, keys), options);
  }

  /** Stops every worker thread. */
  async close(): Promise<void> {
    this.closed = true;
    this.failAll(new Error('the worker pool was closed'));
    for (const w of this.waiters) w();
    this.waiters = [];
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
