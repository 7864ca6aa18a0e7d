/**
 * `CacheGuard`: keeps requests for ids that exist nowhere away from the database (the "cache
 * penetration" problem: such requests miss every cache and all reach the database).
 *
 * A filter holds every id that exists. `get(id)` asks it first: when it says the id cannot be
 * there, the answer is `null` and the loader is never called; otherwise the loader runs. A guard
 * never turns away an id that exists, provided every id was either in the key scan of the last
 * `rebuild` or announced with `added(id)` (a Bloom filter has no false negatives). Of the requests
 * for absent ids, about the filter's false positive rate p still reach the loader, so the database
 * sees about `p × absent requests` of them (test/apps-cache-guard.test.ts counts them with
 * PostgreSQL's pg_stat_statements: at p = 0.01, ~1,000 of 100,000).
 *
 * Plain Bloom filters cannot delete: a deleted id stays "maybe present" (it then costs one load
 * that finds nothing, counted as a false positive) until the next `rebuild`, which scans every
 * existing id into a new filter and swaps it in at once while requests keep being served.
 *
 * Writes: call `added(id)` as soon as the insert of `id` has committed, before the id is handed to
 * anyone (the response to the client that created it). Until then a reader gets `null`, as it
 * would have a moment before the commit. During a rebuild, `added` writes to both the serving
 * filter and the one being built, and the swap waits for those writes: the scan's snapshot holds
 * every id committed before it was taken, `added` brings every id committed after, so no id is
 * refused, before or after the swap. (Announcing before the commit instead would close that short
 * window, but an id whose transaction is still open when a rebuild's snapshot is taken and whose
 * `added` finished before the rebuild began would be in neither, and be refused after the swap.)
 *
 * With an in-memory filter the guard protects one process. With a Redis filter (`bloomkit/redis`)
 * every process that opens it shares one filter: an `added` in one process is seen by all. A
 * filtered miss then costs one round trip (`get`) or one round trip per batch (`getMany`).
 */

import { show } from '../errors.js';
import type { AbortSignalLike, ProgressOptions } from '../filters/filter.js';
import type { Key } from '../hash/keys.js';
import { abortRace, closeQuietly, iteratorOf } from './abortable.js';
import {
  type AnyFilter,
  addEach,
  checkFilter,
  checkFunction,
  hasEach,
  yieldToEventLoop,
} from './membership.js';

/** Options of {@link CacheGuard}. */
export interface CacheGuardOptions<K extends Key, V> {
  /** The filter of every existing id (in memory, or shared in Redis). */
  filter: AnyFilter<K>;
  /** Loads one id from the real store; `null` (or `undefined`) when it does not exist. */
  load: (id: K) => Promise<V | null | undefined>;
  /**
   * Loads many ids at once (one query), answering in the order asked; used by `getMany`.
   * Default: `load` for each id, concurrently.
   */
  loadMany?: (ids: K[]) => Promise<readonly (V | null | undefined)[]>;
  /** Makes the empty filter a `rebuild` fills, when the call does not pass one (`into`). */
  createFilter?: () => AnyFilter<K> | Promise<AnyFilter<K>>;
}

/** What a guard has done so far (a snapshot). */
export interface CacheGuardStats {
  /** Ids asked for, through `get` and `getMany`. */
  readonly requests: number;
  /** Requests answered `null` by the filter alone: loads saved. */
  readonly filtered: number;
  /** Requests that reached the loader. */
  readonly loads: number;
  /** Loads that found the id. */
  readonly found: number;
  /**
   * Loads that found nothing: the filter's false positives (and ids deleted since the last
   * rebuild). `falsePositives / (filtered + falsePositives)` estimates the filter's rate.
   */
  readonly falsePositives: number;
  /** Ids announced with `added`. */
  readonly added: number;
  /** Completed rebuilds. */
  readonly rebuilds: number;
  /** Whether a rebuild is running now. */
  readonly rebuilding: boolean;
}

/** Options of {@link CacheGuard.rebuild}. */
export interface RebuildOptions<K extends Key> extends ProgressOptions {
  /** The empty filter to fill and swap in. Default: the guard's `createFilter()`. */
  into?: AnyFilter<K>;
  /** Keys added per `addMany` call (one Redis pipeline). Default 4096. */
  chunk?: number;
}

/** What a rebuild did. */
export interface RebuildReport {
  /** Keys read from the scan. */
  readonly scanned: number;
  /** Ids announced with `added` while the scan ran (written to the new filter as well). */
  readonly addedDuringRebuild: number;
}

/**
 * A filter in front of a loader: `get(id)` answers `null` without loading when the id cannot
 * exist. See the module comment for the guarantee and the write-through rule.
 */
export class CacheGuard<K extends Key, V> {
  #filter: AnyFilter<K>;
  #next: AnyFilter<K> | undefined;
  #nextFailure: unknown;
  #addedDuringRebuild = 0;
  /** Writes into `#next` the swap must wait for. */
  readonly #pending = new Set<Promise<unknown>>();
  /** `added` calls not finished yet. */
  readonly #inFlight = new Set<{ id: K }>();
  readonly #load: (id: K) => Promise<V | null | undefined>;
  readonly #loadMany: ((ids: K[]) => Promise<readonly (V | null | undefined)[]>) | undefined;
  readonly #createFilter: (() => AnyFilter<K> | Promise<AnyFilter<K>>) | undefined;
  #requests = 0;
  #filtered = 0;
  #loads = 0;
  #found = 0;
  #missing = 0;
  #added = 0;
  #rebuilds = 0;
  #rebuilding = false;

  constructor(options: CacheGuardOptions<K, V>) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`options must be an object, got ${show(options)}`);
    }
    this.#filter = checkFilter<K>('options.filter', options.filter);
    this.#load = checkFunction('options.load', options.load);
    if (options.loadMany !== undefined) {
      this.#loadMany = checkFunction('options.loadMany', options.loadMany);
    }
    if (options.createFilter !== undefined) {
      this.#createFilter = checkFunction('options.createFilter', options.createFilter);
    }
  }

  /** The filter serving requests now (the new one once a rebuild has swapped it in). */
  get filter(): AnyFilter<K> {
    return this.#filter;
  }

  /** The value of `id`, or `null` when it does not exist; loads only if the filter allows it. */
  async get(id: K): Promise<V | null> {
    this.#requests++;
    const maybe = this.#filter.has(id);
    if (maybe === false || (typeof maybe !== 'boolean' && !(await maybe))) {
      this.#filtered++;
      return null;
    }
    this.#loads++;
    return this.#counted(await this.#load(id));
  }

  /**
   * `get` of each id, in order: one filter query for the whole batch (one round trip with Redis),
   * then one `loadMany` (or concurrent `load`s) for the ids that pass.
   */
  async getMany(ids: readonly K[]): Promise<(V | null)[]> {
    const list = Array.isArray(ids) ? (ids as K[]) : Array.from(ids);
    this.#requests += list.length;
    const maybe = await hasEach(this.#filter, list);
    const out = new Array<V | null>(list.length).fill(null);
    const passed: number[] = [];
    for (let i = 0; i < list.length; i++) if (maybe[i]) passed.push(i);
    this.#filtered += list.length - passed.length;
    if (passed.length === 0) return out;
    this.#loads += passed.length;
    const wanted = passed.map((i) => list[i]!);
    const values =
      this.#loadMany !== undefined
        ? await this.#loadMany(wanted)
        : await Promise.all(wanted.map((id) => this.#load(id)));
    if (values.length !== wanted.length) {
      throw new RangeError(
        `options.loadMany must answer one value per id: asked ${wanted.length}, got ${values.length}`,
      );
    }
    for (let j = 0; j < passed.length; j++) out[passed[j]!] = this.#counted(values[j]);
    return out;
  }

  /**
   * Announces a new id (write-through): adds it to the serving filter and, during a rebuild, to
   * the filter being built. Resolves once both hold it.
   */
  async added(id: K): Promise<void> {
    this.#added++;
    const token = { id };
    this.#inFlight.add(token);
    try {
      const next = this.#next;
      const current = this.#filter.add(id);
      await Promise.all([current, next === undefined ? undefined : this.#intoNext(next, id)]);
    } finally {
      this.#inFlight.delete(token);
    }
  }

  /** Adds `id` to the filter being built; the swap waits for it and fails if it failed. */
  #intoNext(next: AnyFilter<K>, id: K): Promise<unknown> {
    this.#addedDuringRebuild++;
    const write = Promise.resolve()
      .then(() => next.add(id))
      .catch((err: unknown) => {
        // The new filter would miss this id: the rebuild must not swap it in.
        this.#nextFailure ??= err;
        throw err;
      })
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
    return write;
  }

  /**
   * Fills a new filter from a full scan of the existing ids and swaps it in, atomically, while
   * `get`, `getMany` and `added` keep working on the old one. `keys` yields ids, or arrays of ids
   * (pages of a server-side cursor). Ids `added` during the scan go into both filters. If the scan
   * fails or is aborted, the old filter stays and the error is thrown. An abort (an `AbortSignal`)
   * settles the rebuild at once, even while the scan waits on its source (a lock, a slow query):
   * the scan is abandoned (its iterator's `return()` is called, not awaited) and the next rebuild
   * may start. One rebuild at a time.
   *
   * The scan must see every id committed before `rebuild` was called: pass a lazy source (an
   * async generator that opens its cursor when first read, as `rebuild` does after it has started
   * sending `added` ids to the new filter), not a cursor opened beforehand.
   */
  async rebuild(
    keys: Iterable<K | readonly K[]> | AsyncIterable<K | readonly K[]>,
    options: RebuildOptions<K> = {},
  ): Promise<RebuildReport> {
    if (this.#rebuilding) {
      throw new Error('CacheGuard.rebuild: a rebuild is already running; await it first');
    }
    const chunk = options.chunk ?? 4096;
    if (!Number.isSafeInteger(chunk) || chunk < 1) {
      throw new RangeError(`options.chunk must be a positive integer, got ${show(chunk)}`);
    }
    this.#rebuilding = true;
    try {
      return await this.#rebuild(keys, chunk, options);
    } finally {
      this.#rebuilding = false;
      this.#next = undefined;
    }
  }

  async #rebuild(
    keys: Iterable<K | readonly K[]> | AsyncIterable<K | readonly K[]>,
    chunk: number,
    options: RebuildOptions<K>,
  ): Promise<RebuildReport> {
    const next =
      options.into !== undefined
        ? checkFilter<K>('options.into', options.into)
        : this.#createFilter !== undefined
          ? checkFilter<K>('createFilter()', await this.#createFilter())
          : undefined;
    if (next === undefined) {
      throw new TypeError('CacheGuard.rebuild needs options.into or the createFilter option');
    }
    if (next === this.#filter) {
      throw new RangeError('CacheGuard.rebuild: options.into must not be the serving filter');
    }
    const { signal, onProgress } = options;
    const isSync = Symbol.iterator in keys;
    this.#next = next;
    this.#nextFailure = undefined;
    this.#addedDuringRebuild = 0;
    // An `added` still writing to an async serving filter began before `#next` existed: its id
    // goes into the new filter too (the scan's snapshot may not hold it).
    for (const { id } of this.#inFlight) this.#intoNext(next, id).catch(() => undefined);
    let scanned = 0;
    let buffer: K[] = [];
    const flush = async (): Promise<void> => {
      const batch = buffer;
      buffer = [];
      await addEach(next, batch);
      scanned += batch.length;
      onProgress?.(scanned);
      checkAborted(signal);
      // A synchronous source would otherwise hold the event loop until the end.
      if (isSync) await yieldToEventLoop();
    };
    checkAborted(signal);
    const abort = abortRace(signal, () => abortReason(signal!));
    const source = iteratorOf(keys);
    let finished = false;
    try {
      for (;;) {
        // A scan stuck in the database (a lock, a slow query) must not hold an abort back.
        const step = await abort.race(source.next());
        if (step.done) break;
        const item = step.value;
        if (Array.isArray(item)) {
          for (const key of item as readonly K[]) buffer.push(key);
        } else {
          buffer.push(item as K);
        }
        if (buffer.length >= chunk) await abort.race(flush());
      }
      finished = true;
      if (buffer.length > 0) await abort.race(flush());
      // Every `added` that began before this point has reached the new filter once this loop
      // ends; the swap below runs in the same synchronous step as the final check.
      while (this.#pending.size > 0) await abort.race(Promise.allSettled([...this.#pending]));
    } finally {
      abort.dispose();
      // Abandoned (an error or an abort): let the source close its cursor when it can, without
      // waiting for it (a stuck source may never answer).
      if (!finished) closeQuietly(source);
    }
    checkAborted(signal);
    if (this.#nextFailure !== undefined) throw this.#nextFailure;
    this.#filter = next;
    this.#rebuilds++;
    return { scanned, addedDuringRebuild: this.#addedDuringRebuild };
  }

  /** A snapshot of the counters. */
  get stats(): CacheGuardStats {
    return {
      requests: this.#requests,
      filtered: this.#filtered,
      loads: this.#loads,
      found: this.#found,
      falsePositives: this.#missing,
      added: this.#added,
      rebuilds: this.#rebuilds,
      rebuilding: this.#rebuilding,
    };
  }

  #counted(value: V | null | undefined): V | null {
    if (value === null || value === undefined) {
      this.#missing++;
      return null;
    }
    this.#found++;
    return value;
  }
}

/** What an aborted rebuild throws: `signal.reason`, or an `Error` naming the abort. */
function abortReason(signal: AbortSignalLike): unknown {
  return signal.reason ?? new Error('CacheGuard.rebuild was aborted');
}

/** Throws {@link abortReason} once `signal` is aborted. */
function checkAborted(signal: AbortSignalLike | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}
