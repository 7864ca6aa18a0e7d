/**
 * Building one filter with several worker threads (bloomkit/node).
 *
 * `buildParallel(source, { type, capacity, fpp, workers })` makes a filter on shared memory
 * (`shared: true`) from every key of `source` (a file of lines, an array, or any iterable or
 * async iterable) and resolves to it, on `workers` threads in all: the calling thread and
 * `workers - 1` worker threads. The calling thread cuts the source into chunks:
 * - a file is read in 1 MiB chunks into reused shared buffers, cut after a chunk's last line
 *   (the line that straddles the cut moves to the next chunk); whoever adds a chunk splits it
 *   into lines (node/parallel-text.ts);
 * - keys in memory are packed in chunks of 65,536 keys into reused shared buffers
 *   (node/parallel-keys.ts), which the workers read where they lie.
 * Each chunk goes to a worker with room (at most three chunks in flight per worker, so memory
 * stays bounded for any input); when none has room, or before the workers have started, the
 * calling thread adds the chunk itself ({@link buildTogether}). So it never waits for a worker,
 * and a slow (cold) worker start never makes the build slower than one thread (measured on 2
 * cores, 4M lines from a file: a first call of 2 threads, one worker start, took 0.94x the time
 * of one thread; BENCHMARKS.md).
 *
 * Where the threads add: the classic, blocked and split-block filters into a private copy on
 * each thread, through the type's WebAssembly kernel (shared memory cannot hold a kernel, and the
 * shared path's `Atomics.or` per probe measured about 2x slower per key); at the end the copies
 * are OR-ed into the shared filter one after another, with plain stores (nothing else writes it
 * then: `orIntoAlone`). A Bloom filter's bits are an OR over its keys, so the
 * result equals, bit for bit, the filter one thread builds from the same keys (for the classic
 * filter, the same Guava bytes). The counting filter's threads add to the shared counters (a
 * compare-and-swap per counter, saturating at 15): the counters are a saturating sum, whatever
 * the order, so it too equals one thread's build.
 *
 * Which types can be built this way, and why the others cannot: a cuckoo filter moves
 * fingerprints between buckets while inserting, and a scalable filter must decide "is the newest
 * layer full" and add a layer: both need the whole structure to change at once, which neither
 * merged copies nor atomics on single words can give. Build those on one thread (their
 * `addBatch` hashes a whole chunk per WebAssembly call).
 *
 * `workers` counts the threads that add, the calling one included: `1` builds on the calling
 * thread (no worker starts); `n` starts n - 1 worker threads as the call begins, borrowed from a
 * warm set that outlives the call (node/worker-threads.ts: the next call starts none); `'auto'`
 * (the default) takes one thread per core for inputs large enough that threads pay, and the
 * calling thread alone for small ones ({@link autoWorkers}).
 */
import { open, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { show } from '../errors.js';
import type { AbortSignalLike, ProgressOptions } from '../filters/filter.js';
import { typeNamed } from '../formats/registry.js';
import type { Funnel, Key } from '../hash/keys.js';
import { KEY_CHUNK, KeyChunks } from './parallel-keys.js';
import { FilterWorkerPool } from './parallel-pool.js';
import { TextChunks } from './parallel-text.js';
import { buildTogether, type Chunk, readAhead } from './parallel-together.js';
import {
  copyBits,
  mergesByOr,
  orIntoFilterAlone,
  privateCopy,
  type SharedFilter,
  type SharedFilterType,
} from './shared-handle.js';
import { checkWorkers, IDLE_MS, idleThreads, warmThreads } from './worker-threads.js';

export { buildTogether, type Chunk, type ChunkTaker } from './parallel-together.js';

/**
 * `'auto'` builds on the calling thread below these sizes (keys of an array, bytes of a file),
 * where starting threads costs more than they give back. Measured on 2 cores (4M URL keys,
 * classic filter): a cold start of 2 workers costs about 0.35 s of CPU (each thread loads
 * bloomkit; its private copy's memory is touched for the first time), as much as one thread
 * spends building the 4M keys, so cold threads are taken only above 8M keys (256 MiB of lines);
 * warm threads (idle ones left by an earlier call) add 10-20% of CPU to the build, and are
 * taken from 500,000 keys (16 MiB). These were measured when n threads meant n workers beside
 * an idle calling thread; now that the calling thread adds too, 'auto' on 2 cores starts one
 * worker, not two, and a cold start costs CPU but no waiting: the cold thresholds may come down
 * once measured on a quiet machine (kept as they are: never slower than one thread).
 */
export const AUTO_MIN = {
  keys: 8_000_000,
  bytes: 256 << 20,
  warmKeys: 500_000,
  warmBytes: 16 << 20,
} as const;

/**
 * A filter type `buildParallel` takes: a name (or alias) of a row of the codec table that can
 * live in shared memory (`openShared`): 'classic' ('bloom'), 'blocked', 'split-block', 'counting'.
 */
export type ParallelFilterType = SharedFilterType;

/** Options of {@link buildParallel}. */
export interface BuildParallelOptions extends ProgressOptions {
  /** 'classic' (default; 'bloom' is the same), 'blocked', 'split-block' or 'counting'. */
  type?: ParallelFilterType;
  /** Expected number of distinct keys. */
  capacity: number;
  /** Target false positive rate at `capacity` keys. */
  fpp: number;
  /** Key encoding (default 'string'); a file's lines are keys of the 'string' or 'bytes' funnel. */
  funnel?: Funnel;
  /**
   * Threads that add, this one included: 1 (this one alone), 2 to 256 (this one and n - 1
   * workers), or 'auto' (default: see the module comment).
   */
  workers?: number | 'auto';
}

/** Where keys come from: a file of lines (a path or file URL), or keys in memory or a stream. */
export type ParallelSource = string | URL | Iterable<Key> | AsyncIterable<Key>;

/**
 * The row of the codec table of a type name `buildParallel` takes: one that can live in shared
 * memory and be created from a sizing; a `RangeError` naming the others.
 */
function parallelRow(type: unknown) {
  try {
    return typeNamed(type, 'openShared');
  } catch (error) {
    throw new RangeError(
      `${(error as Error).message}: only these types take concurrent writers (cuckoo and scalable filters cannot be built by concurrent writers)`,
    );
  }
}

/**
 * An empty filter of `type` (a row of the codec table that can live in shared memory, created by
 * its row's `create`), on shared memory or in plain memory.
 */
export function createShared(
  type: ParallelFilterType,
  capacity: number,
  fpp: number,
  funnel: Funnel,
  shared = true,
): SharedFilter {
  const row = parallelRow(type);
  if (row.create === undefined) throw new RangeError(`type ${show(type)} cannot be created`);
  return row.create({ capacity, fpp, funnel, shared }) as SharedFilter;
}

/** Chunks of whole lines of a file (shared buffers, see node/parallel-text.ts). */
async function* fileChunks(path: string | URL, signal?: AbortSignalLike): AsyncGenerator<Chunk> {
  const file = await open(path, 'r');
  try {
    const chunks = new TextChunks(async (into) => {
      const { bytesRead } = await file.read(into, 0, into.length, null);
      return bytesRead;
    }, 0x0a);
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const chunk = await chunks.next();
      if (chunk === null) return;
      yield { text: chunk, release: () => chunks.release(chunk) };
    }
  } finally {
    await file.close();
  }
}

/** Packed chunks of keys in memory or from an (async) iterable (node/parallel-keys.ts). */
async function* keyChunks(
  keys: Iterable<Key> | AsyncIterable<Key>,
  funnel: Funnel,
  signal?: AbortSignalLike,
): AsyncGenerator<Chunk> {
  const chunks = new KeyChunks(funnel);
  const chunk = (from: readonly Key[], start: number, end: number): Chunk => {
    if (signal?.aborted) throw signal.reason;
    const packed = chunks.pack(from, start, end);
    return { packed, release: () => chunks.release(packed) };
  };
  if (Array.isArray(keys)) {
    for (let i = 0; i < keys.length; i += KEY_CHUNK) {
      yield chunk(keys, i, Math.min(keys.length, i + KEY_CHUNK));
    }
    return;
  }
  let batch: Key[] = [];
  for await (const key of keys as AsyncIterable<Key>) {
    batch.push(key);
    if (batch.length === KEY_CHUNK) {
      yield chunk(batch, 0, batch.length);
      batch = [];
    }
  }
  if (batch.length > 0) yield chunk(batch, 0, batch.length);
}

/** The chunks of `source` (see {@link ParallelSource}), checked. */
export function sourceChunks(
  source: ParallelSource,
  funnel: Funnel,
  signal?: AbortSignalLike,
): AsyncGenerator<Chunk> {
  if (typeof source === 'string' || source instanceof URL) {
    if (funnel !== 'string' && funnel !== 'bytes') {
      throw new RangeError(
        `a file's lines are byte keys: funnel must be 'string' or 'bytes', got ${show(funnel)}`,
      );
    }
    return readAhead(fileChunks(source, signal));
  }
  if (
    source === null ||
    typeof source !== 'object' ||
    (typeof (source as Iterable<Key>)[Symbol.iterator] !== 'function' &&
      typeof (source as AsyncIterable<Key>)[Symbol.asyncIterator] !== 'function')
  ) {
    throw new TypeError(
      `source must be a file path, a URL, an iterable or an async iterable of keys, got ${show(source)}`,
    );
  }
  return keyChunks(source, funnel, signal);
}

/**
 * The threads `workers: 'auto'` takes for `source`: 1 (this thread) when it is smaller than
 * {@link AUTO_MIN} (an array's length, a file's size), else one per core; for an iterable, whose
 * length is not known ahead, one per core (`buildParallel` then reads its first
 * {@link AUTO_MIN}.warmKeys keys before it starts any, and builds here if the source ends).
 */
export async function autoWorkers(source: ParallelSource, wanted: number): Promise<number> {
  const cores = availableParallelism();
  if (cores < 2) return 1;
  // Warm: the workers it would start (one per core beside this thread) are idle already.
  const warm = idleThreads() >= Math.min(wanted, cores) - 1;
  if (Array.isArray(source)) {
    return source.length < (warm ? AUTO_MIN.warmKeys : AUTO_MIN.keys) ? 1 : cores;
  }
  if (typeof source === 'string' || source instanceof URL) {
    const size = await stat(source).then(
      (s) => s.size,
      () => Number.POSITIVE_INFINITY, // the open reports it
    );
    return size < (warm ? AUTO_MIN.warmBytes : AUTO_MIN.bytes) ? 1 : cores;
  }
  return cores;
}

/**
 * The chunks of `chunks` with the first ones read ahead until `keys` keys (or the end, then
 * `ended`): the read-ahead chunks come first, then the rest.
 */
async function peek(
  chunks: AsyncGenerator<Chunk>,
  keys: number,
): Promise<{ ended: boolean; chunks: AsyncGenerator<Chunk> }> {
  const head: Chunk[] = [];
  let count = 0;
  let ended = false;
  while (count < keys) {
    const next = await chunks.next();
    if (next.done === true) {
      ended = true;
      break;
    }
    head.push(next.value);
    count += 'text' in next.value ? keys : next.value.packed.offsets.length - 1;
  }
  return {
    ended,
    chunks: (async function* () {
      yield* head;
      yield* chunks;
    })(),
  };
}

/**
 * The calling thread's private copy that the last build left, for {@link IDLE_MS} (a build of the
 * same type and shape reuses it, cleared: its pages are touched already, where a new 4.8 MB copy
 * costs about 14 ms of page faults on 2 cores), or null.
 */
let spareCopy: SharedFilter | null = null;

/** The largest private copy kept as a spare: 64 MiB (a build's memory is not held past it). */
const SPARE_MAX_BYTES = 64 << 20;

/**
 * Keeps `copy` as the spare for {@link IDLE_MS} (as long as an idle worker keeps its own), unless
 * it is over {@link SPARE_MAX_BYTES}: a larger filter's build pays the page faults again rather
 * than hold a second filter's memory after it returns.
 */
function keepSpare(copy: SharedFilter): void {
  const bytes = (copy as unknown as { bits: { data: { byteLength: number } } }).bits.data
    .byteLength;
  if (bytes > SPARE_MAX_BYTES) return;
  spareCopy = copy;
  const timer = setTimeout(() => {
    if (spareCopy === copy) spareCopy = null;
  }, IDLE_MS);
  timer.unref?.();
}

/** A blank private copy of the bit filter `filter` (the spare one when it fits). */
function takeSpareCopy(filter: SharedFilter): SharedFilter {
  const spare = spareCopy;
  spareCopy = null;
  const shape = (f: SharedFilter): string =>
    JSON.stringify((f as unknown as { shape(): object }).shape());
  if (
    spare !== null &&
    spare.constructor === filter.constructor &&
    shape(spare) === shape(filter)
  ) {
    (spare as unknown as { clear(): void }).clear();
    return spare;
  }
  return privateCopy(filter);
}

/**
 * Builds one filter from every key of `source` (see the module comment); resolves to the filter,
 * on shared memory (`share()` it to workers, or query it here). `onProgress(keysAdded)` is called
 * as chunks complete. On abort no further chunk is read, and the promise rejects with
 * `signal.reason` once the chunks in flight are done (the partly built filter is dropped).
 */
export async function buildParallel(
  source: ParallelSource,
  options: BuildParallelOptions,
): Promise<SharedFilter> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const funnel = options.funnel ?? 'string';
  const type = options.type ?? 'classic';
  const auto = options.workers === undefined || options.workers === 'auto';
  const wanted = auto ? availableParallelism() : checkWorkers(options.workers as number);
  const filter = createShared(type, options.capacity, options.fpp, funnel);
  const { signal, onProgress } = options;
  let chunks = sourceChunks(source, funnel, signal);
  if (signal?.aborted) throw signal.reason;
  // The workers start loading bloomkit now, while this thread goes on.
  if (!auto) warmThreads(wanted - 1);
  let workers = auto ? await autoWorkers(source, wanted) : wanted;
  if (auto && workers > 1 && typeof source !== 'string' && !(source instanceof URL)) {
    // An iterable's length is not known ahead: its first keys are read first, and a source that
    // ends within them is built here.
    const head = await peek(chunks, AUTO_MIN.warmKeys);
    if (head.ended) workers = 1;
    chunks = head.chunks;
  }
  if (auto) warmThreads(workers - 1);
  let done = 0;
  const progress = (n: number): void => {
    done += n;
    onProgress?.(done);
  };
  // Counters stay shared (no merge for copies); bit filters add into plain kernel memory: this
  // thread into its own copy, each worker into one of its own.
  const copies = mergesByOr(filter);
  const here = copies ? takeSpareCopy(filter) : filter;
  let pool: FilterWorkerPool | null = null;
  const starting =
    workers === 1
      ? Promise.resolve()
      : (copies
          ? FilterWorkerPool.withCopiesOf(filter.share(), workers - 1)
          : FilterWorkerPool.start(filter.share(), workers - 1)
        ).then((p) => {
          pool = p;
        });
  starting.catch(() => {}); // awaited below
  // This thread's copy goes into the (still blank) shared filter as soon as it has added its
  // last chunk, while the workers add theirs: one memcpy, and the shared filter's pages are
  // touched here rather than in a worker's merge, which the build waits for.
  let copied = false;
  const drained = (): void => {
    if (!copies) return;
    copyBits(filter, here);
    copied = true;
  };
  try {
    await buildTogether(chunks, here, () => pool, progress, workers > 1, drained);
    if (signal?.aborted) throw signal.reason;
    await starting;
    // Nothing else writes the shared filter now: the copies are OR-ed in with plain stores.
    if (copies) {
      await (pool as FilterWorkerPool | null)?.mergeAlone(filter.share());
      if (!copied) orIntoFilterAlone(filter, here);
    }
  } finally {
    await starting.catch(() => {});
    await (pool as FilterWorkerPool | null)?.close();
    if (copies) keepSpare(here);
  }
  return filter;
}
