/**
 * Building and querying one filter with several worker threads (bloomkit/node).
 *
 * `buildParallel(source, { type, capacity, fpp, workers })` makes a filter on shared memory
 * (`shared: true`), starts a pool of workers on it (node/parallel-pool.ts), and feeds them the
 * keys of `source` (a file of lines, an array, or any iterable or async iterable) in chunks; the
 * workers add with atomic operations, so no bit and no count is lost. Because a Bloom filter's
 * bits are an OR over its keys (and a counting filter's counters a saturating sum), the order in
 * which the workers add does not matter: the filter equals, bit for bit, the one a single thread
 * builds from the same keys (for the classic filter, the same Guava bytes).
 *
 * Which types can be built this way, and why the others cannot: the classic, blocked and
 * split-block filters set bits (`Atomics.or`), and the counting filter changes 4-bit counters
 * with a compare-and-swap loop; each key's update is a set of independent word updates that
 * commute, so many writers need no lock. A cuckoo filter moves fingerprints between buckets
 * while inserting (a kick-out chain touching many words that must change together), and a
 * scalable filter must decide "is the newest layer full" and add a layer: both need the whole
 * structure to change at once, which atomics on single words cannot give without a lock. Build
 * those on one thread (their `addBatch` hashes a whole chunk per WebAssembly call), or build
 * per-thread filters and query them all.
 *
 * A file is read in 16 MiB chunks and split into lines in place (`splitRecords`: a line's raw
 * bytes are its key bytes, for the 'string' and 'bytes' funnels); other sources are packed with
 * `packKeys` in chunks of 262,144 keys. At most two chunks are in flight, so memory stays bounded.
 */
import { open } from 'node:fs/promises';
import { show } from '../errors.js';
import type { AbortSignalLike, PackedKeys, ProgressOptions } from '../filters/filter.js';
import { typeNamed } from '../formats/registry.js';
import type { Funnel, Key } from '../hash/keys.js';
import { packKeys, splitRecords } from '../index.js';
import { checkWorkers, FilterWorkerPool } from './parallel-pool.js';
import type { SharedFilter, SharedFilterType } from './shared-handle.js';

/** Bytes of a file read per chunk. */
const FILE_CHUNK = 16 << 20;
/** Keys packed per chunk from an array or iterable. */
const KEY_CHUNK = 262_144;

/** Options of {@link buildParallel}. */
export interface BuildParallelOptions extends ProgressOptions {
  /** The filter type: 'classic' (default; 'bloom' is another name), 'blocked', 'split-block' or 'counting'. */
  type?: SharedFilterType;
  /** Expected number of distinct keys. */
  capacity: number;
  /** Target false positive rate at `capacity` keys. */
  fpp: number;
  /** Key encoding (default 'string'); a file's lines are keys of the 'string' or 'bytes' funnel. */
  funnel?: Funnel;
  /** Worker threads (default: the number of cores). */
  workers?: number;
}

/** Where keys come from: a file of lines (a path or file URL), or keys in memory or a stream. */
export type ParallelSource = string | URL | Iterable<Key> | AsyncIterable<Key>;

/**
 * An empty filter of `type` on shared memory: a row of the codec table that can live there
 * (`openShared`), created by its row's `create`.
 */
export function createShared(
  type: SharedFilterType,
  capacity: number,
  fpp: number,
  funnel: Funnel,
): SharedFilter {
  let row: ReturnType<typeof typeNamed<'openShared'>>;
  try {
    row = typeNamed(type, 'openShared');
  } catch (error) {
    throw new RangeError(
      `${(error as Error).message}: only these types take concurrent writers (their bits are an OR over the keys)`,
    );
  }
  if (row.create === undefined) throw new RangeError(`type ${show(type)} cannot be created`);
  return row.create({ capacity, fpp, funnel, shared: true }) as SharedFilter;
}

/** The chunks of a file of lines, split in place. */
async function* fileBatches(
  path: string | URL,
  signal?: AbortSignalLike,
): AsyncGenerator<PackedKeys> {
  const file = await open(path, 'r');
  try {
    let carry = new Uint8Array(0);
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const buffer = new Uint8Array(carry.length + FILE_CHUNK);
      buffer.set(carry);
      const { bytesRead } = await file.read(buffer, carry.length, FILE_CHUNK, null);
      const filled = carry.length + bytesRead;
      const last = bytesRead === 0;
      const view = buffer.subarray(0, filled);
      const records = splitRecords(view, 0x0a, { trailing: last });
      if (records.offsets.length > 1) {
        yield { bytes: view, offsets: records.offsets, ends: records.ends };
      }
      if (last) return;
      carry = view.slice(records.rest);
    }
  } finally {
    await file.close();
  }
}

/** The chunks of keys in memory or from an (async) iterable, packed. */
async function* keyBatches(
  keys: Iterable<Key> | AsyncIterable<Key>,
  funnel: Funnel,
): AsyncGenerator<PackedKeys> {
  if (Array.isArray(keys)) {
    for (let i = 0; i < keys.length; i += KEY_CHUNK) {
      yield packKeys(funnel, keys.slice(i, i + KEY_CHUNK));
    }
    return;
  }
  let chunk: Key[] = [];
  for await (const key of keys as AsyncIterable<Key>) {
    chunk.push(key);
    if (chunk.length === KEY_CHUNK) {
      yield packKeys(funnel, chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) yield packKeys(funnel, chunk);
}

/** The batches of `source` (see {@link ParallelSource}). */
export function sourceBatches(
  source: ParallelSource,
  funnel: Funnel,
  signal?: AbortSignalLike,
): AsyncGenerator<PackedKeys> {
  if (typeof source === 'string' || source instanceof URL) {
    if (funnel !== 'string' && funnel !== 'bytes') {
      throw new RangeError(
        `a file's lines are byte keys: funnel must be 'string' or 'bytes', got ${show(funnel)}`,
      );
    }
    return fileBatches(source, signal);
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
  return keyBatches(source, funnel);
}

/**
 * Builds one filter from every key of `source` with `workers` threads adding to the same shared
 * memory (see the module comment); resolves to the filter (its storage stays shared: `share()` it
 * to more workers, or query it here). `onProgress(keysAdded)` is called as chunks complete. On
 * abort the workers stop after their current chunk and the promise rejects with `signal.reason`
 * (the partly built filter is dropped).
 */
export async function buildParallel(
  source: ParallelSource,
  options: BuildParallelOptions,
): Promise<SharedFilter> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const funnel = options.funnel ?? 'string';
  const workers = checkWorkers(options.workers);
  const filter = createShared(options.type ?? 'classic', options.capacity, options.fpp, funnel);
  const { signal, onProgress } = options;
  const batches = sourceBatches(source, funnel, signal);
  if (signal?.aborted) throw signal.reason;
  const pool = await FilterWorkerPool.start(filter.share(), workers);
  let done = 0;
  const progress = (n: number): void => {
    done += n;
    onProgress?.(done);
  };
  try {
    let previous: Promise<number> | null = null;
    for await (const batch of batches) {
      let sent = 0;
      const run: Promise<number> = pool.run('add', batch, null, {
        ...(signal === undefined ? {} : { signal }),
        onProgress: (d) => {
          progress(d - sent);
          sent = d;
        },
      });
      run.catch(() => {}); // observed below; keeps an early failure from going unhandled
      if (previous !== null) await previous;
      previous = run;
    }
    if (previous !== null) await previous;
  } finally {
    await pool.close();
  }
  return filter;
}
