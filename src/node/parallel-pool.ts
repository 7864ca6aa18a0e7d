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
 * Besides these copied chunks, a pool takes chunks that need no copy: whole records in a shared
 * buffer that the worker splits itself ({@link addText}), and packed keys moved to the worker
 * ({@link addPacked}); `buildParallel` and the command's `--threads` feed it so.
 *
 * The threads are borrowed from a warm set (node/worker-threads.ts): `close()` gives them back
 * idle, and the next pool starts without loading bloomkit again.
 */
import { show } from '../errors.js';
import { checkOut } from '../filters/base.js';
import type { PackedKeys, ProgressOptions } from '../filters/filter.js';
import { checkPacked, packKeys } from '../filters/packed.js';
import type { Funnel, Key } from '../hash/keys.js';
import { Lane } from './parallel-lanes.js';
import type { TextChunk } from './parallel-text.js';
import type { BatchReply, WorkerFilterSource } from './parallel-worker.js';
import type { SharedFilterHandle } from './shared-handle.js';
import { checkWorkers, PoolThreads, type ThreadSlot } from './worker-threads.js';

export { checkWorkers } from './worker-threads.js';

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

/**
 * Chunks handed to a worker whole (text, packed keys: no lane) in flight on it at most: three,
 * so that a worker still has two queued while the thread that feeds it adds a chunk of its own
 * (with two it ran dry whenever that took longer than one of its chunks).
 */
export const HANDED_DEPTH = 3;

/** Worker threads that add to and test one filter (shared, or a private copy on each). */
export class FilterWorkerPool {
  /** Two lanes per thread, by the thread's index. */
  private readonly lanes: [Lane, Lane][];

  private constructor(private readonly threads: PoolThreads) {
    this.lanes = threads.slots.map((s) => [
      new Lane(2 * s.index, POOL_CHUNK_KEYS),
      new Lane(2 * s.index + 1, POOL_CHUNK_KEYS),
    ]);
  }

  /** Starts `workers` threads (default: the core count) on the filter behind `handle`. */
  static start(handle: SharedFilterHandle, workers?: number): Promise<FilterWorkerPool> {
    return FilterWorkerPool.spawn({ handle }, workers);
  }

  /**
   * Starts `workers` threads, each with its own copy of the filter whose native bytes
   * (`toBytes()`) are `bytes`: for filters that cannot live in shared memory, or that are
   * faster in their own (the classic and blocked filters add and probe in their WebAssembly
   * kernels). Memory: one copy per worker. Tests answer as the filter would; adds go to the
   * worker's copy only: gather them with {@link copies} and merge (`union`), or OR them into a
   * shared filter with {@link mergeInto}.
   */
  static async withCopies(bytes: Uint8Array, workers?: number): Promise<FilterWorkerPool> {
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`bytes must be a Uint8Array, got ${show(bytes)}`);
    }
    return FilterWorkerPool.spawn({ copy: bytes }, workers);
  }

  /**
   * Starts `workers` threads, each with a private copy of the classic, blocked or split-block
   * filter behind `handle` (made in the thread from the shared bits: no encoding, no checksum),
   * where it adds in the type's WebAssembly kernel; {@link mergeInto} ORs the copies back.
   */
  static withCopiesOf(handle: SharedFilterHandle, workers?: number): Promise<FilterWorkerPool> {
    return FilterWorkerPool.spawn({ handle, private: true }, workers);
  }

  private static async spawn(
    source: WorkerFilterSource,
    workers?: number,
  ): Promise<FilterWorkerPool> {
    const n = checkWorkers(workers);
    return new FilterWorkerPool(await PoolThreads.borrow(n, () => ({ op: 'open', source })));
  }

  /** Number of worker threads. */
  get size(): number {
    return this.threads.size;
  }

  /**
   * The native bytes of every worker's own copy (a pool made by {@link withCopies}), after the
   * batches sent so far; for a pool on shared memory, each is the shared filter's bytes.
   */
  async copies(): Promise<Uint8Array[]> {
    const t = this.threads;
    return Promise.all(t.slots.map((slot) => t.post(slot, { op: 'bytes' }).then((r) => r.bytes!)));
  }

  /**
   * ORs every worker's own copy (a pool made by {@link withCopies} or {@link withCopiesOf}) into the shared filter
   * behind `handle`, on the workers at once (`Atomics.or`, so none is lost): a Bloom filter's
   * bits are an OR over its keys, so the result equals one thread's build of every key added.
   */
  async mergeInto(handle: SharedFilterHandle): Promise<void> {
    const t = this.threads;
    await Promise.all(t.slots.map((slot) => t.post(slot, { op: 'merge', handle })));
  }

  /**
   * {@link mergeInto} one worker after another, each with plain stores instead of `Atomics.or`
   * (about 10x faster per copy): only while no other thread writes the filter behind `handle`.
   */
  async mergeAlone(handle: SharedFilterHandle): Promise<void> {
    const t = this.threads;
    for (const slot of t.slots) await t.post(slot, { op: 'merge', handle, alone: true });
  }

  /**
   * Adds the records of `chunk` (whole records in a shared buffer: node/parallel-text.ts) on
   * the next free worker, which splits them itself. Resolves once a worker took the chunk (so a
   * caller feeding chunks in a loop never has more than two per worker in flight), to `done`, a
   * promise of the keys that were new to its filter and the records the chunk held.
   */
  async addText(chunk: TextChunk): Promise<{ done: Promise<{ count: number; records: number }> }> {
    const slot = await this.threads.freeSlot();
    const done = this.threads
      .post(slot, { op: 'text', text: chunk }, { reserved: true })
      .then((reply) => ({ count: reply.count!, records: reply.records! }));
    return { done };
  }

  /**
   * {@link addText} on a worker with room now, or null (nothing sent) when every worker has
   * {@link HANDED_DEPTH} chunks in flight: for a caller that adds such a chunk itself rather than
   * wait.
   */
  tryAddText(chunk: TextChunk): { done: Promise<{ count: number; records: number }> } | null {
    const slot = this.threads.trySlot(HANDED_DEPTH);
    if (slot === null) return null;
    const done = this.threads
      .post(slot, { op: 'text', text: chunk }, { reserved: true })
      .then((reply) => ({ count: reply.count!, records: reply.records! }));
    return { done };
  }

  /**
   * Adds `batch` on the next free worker: its buffers are shared memory (read where they lie:
   * keep them unchanged until `done`), or plain memory moved to the worker (transferred, not
   * copied: `batch` is unusable afterwards). Resolves once a worker took it, to `done`, a
   * promise of the keys that were new to its filter.
   */
  async addPacked(batch: PackedKeys): Promise<{ done: Promise<number> }> {
    return { done: this.postPacked(await this.threads.freeSlot(), batch) };
  }

  /**
   * {@link addPacked} on a worker with room now, or null (nothing sent) when every worker has
   * {@link HANDED_DEPTH} chunks in flight: for a caller that adds such a chunk itself rather than
   * wait.
   */
  tryAddPacked(batch: PackedKeys): { done: Promise<number> } | null {
    const slot = this.threads.trySlot(HANDED_DEPTH);
    return slot === null ? null : { done: this.postPacked(slot, batch) };
  }

  /** Sends `batch` to `slot` (reserved): see {@link addPacked}. */
  private postPacked(slot: ThreadSlot, batch: PackedKeys): Promise<number> {
    const buffers = [batch.bytes.buffer, batch.offsets.buffer, batch.ends?.buffer];
    const transfer = [
      ...new Set(buffers.filter((b): b is ArrayBuffer => b instanceof ArrayBuffer)),
    ];
    return this.threads
      .post(slot, { op: 'packed', batch }, { reserved: true, transfer })
      .then((reply) => reply.count!);
  }

  /**
   * Copies keys [start, stop) of `batch` into a free lane of `slot` (reserved by
   * `freeSlot`) and sends them; resolves to the worker's count, once `out` (for 'has') holds
   * their answers from index `start`.
   */
  private dispatch(
    slot: ThreadSlot,
    op: 'add' | 'has',
    batch: PackedKeys,
    start: number,
    stop: number,
    out: Uint8Array | null,
  ): Promise<number> {
    const lanes = this.lanes[slot.index]!;
    const lane = lanes[0].busy ? lanes[1] : lanes[0];
    let chunk: ReturnType<Lane['load']>;
    try {
      chunk = lane.load(batch, start, stop);
    } catch (error) {
      this.threads.release(slot);
      return Promise.reject(error);
    }
    lane.busy = true;
    const settle = (reply: BatchReply): void => {
      if (out !== null && reply.error === undefined) out.set(lane.found(stop - start), start);
      lane.busy = false;
    };
    return this.threads
      .post(slot, { op, chunk }, { reserved: true, settle })
      .then((reply) => reply.count!);
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
      const slot = await this.threads.freeSlot();
      if (signal?.aborted) {
        this.threads.release(slot);
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

  /**
   * Gives the worker threads back (idle and unreferenced, for the next pool: see
   * node/worker-threads.ts); requests in flight are rejected and their threads ended.
   */
  async close(): Promise<void> {
    await this.threads.close();
  }
}
