/**
 * `Deduper`: "have I seen this key before?" for a URL frontier or any stream of keys, remembered
 * across runs and crashes in one file.
 *
 * `seen(key)` answers and marks in one step: false the first time a key comes (the caller then
 * processes it), true after that. Guarantee: a key is never answered false twice while the state
 * lives (no false negatives); a new key is answered true (a "false drop") with probability about
 * the filter's false positive rate at the time, `fpp` at `capacity` keys. Without a capacity the
 * filter is a `ScalableBloomFilter`, which grows as needed and keeps the summed rate below `fpp`.
 *
 * The state with a capacity is a blocked Bloom filter by default (`type: 'blocked'`): each key's
 * bits lie in one 64-byte block, so a key costs about one cache miss, where the classic filter's
 * k = 20 probes at fpp 1e-6 cost about twenty (it also needs about 1.34 times the classic
 * filter's memory at 1e-6). `type: 'classic'` (Guava's layout) and `'split-block'` (Parquet's)
 * are the alternatives. A state file of any of these types (and a scalable one) resumes whatever
 * `type` says: the file's own type wins.
 *
 * `seenBatch` is one pass: `addBatch(batch, out)` adds the keys in order and says which were
 * new, which also settles repeats inside the batch exactly (a later copy finds the bits the
 * earlier one set).
 *
 * Durability: `checkpoint()` writes the state to `path` atomically (a temporary file next to it,
 * fsync, rename: a crash or SIGKILL at any moment leaves either the previous checkpoint or the new
 * one, never a mix). Every key answered before `checkpoint()` was called is in the state once its
 * promise resolves: after a crash, `Deduper.open(path)` resumes from the last completed checkpoint
 * and answers true for all of them. Keys answered after it are answered again as new (at least
 * once, never lost). A checkpoint snapshots the filter first, so `seen` may go on meanwhile.
 *
 * Two Dedupers on one state file each write their own state over the other's: open them with
 * `lock: true` (the command's `dedup --state` does) so that the second waits until the first
 * is closed. A SIGKILL leaves the lock behind; the next `open` finds its process gone and takes
 * it over, and removes the temporary files of checkpoints the kill interrupted.
 */

import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import { checkOut, type FilterBase, type Saturation, saturationAt } from '../filters/base.js';
import { BlockedBloomFilter } from '../filters/blocked/filter.js';
import { blockedFalsePositiveRate } from '../filters/blocked/sizing.js';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import { packedCount } from '../filters/packed.js';
import { ScalableBloomFilter } from '../filters/scalable/filter.js';
import { SplitBlockBloomFilter } from '../filters/split-block/filter.js';
import { splitBlockFalsePositiveRate } from '../filters/split-block/sizing.js';
import { typeNamed } from '../formats/registry.js';
import type { Funnel, Key } from '../hash/keys.js';
import { removeStaleTemps } from './atomic-file.js';
import { type FileLock, lockFile } from './file-lock.js';
import { load, save } from './io.js';

/**
 * The filter a Deduper with a capacity keeps its keys in: the name of a type whose row in the
 * codec table has a `deduper` capability (`typesWith('deduper')`: classic, blocked and
 * split-block), or an alias of one (`bloom`).
 */
export type DeduperType = string;

/** The default {@link DeduperType} (the fastest in `npm run bench:cli`). */
export const DEFAULT_DEDUPER_TYPE: DeduperType = 'blocked';

export interface DeduperOptions {
  /**
   * Expected number of distinct keys. Given: a classic Bloom filter sized for it (fastest, fixed
   * memory; the rate rises past it). Omitted: a scalable filter that grows as needed.
   */
  capacity?: number;
  /**
   * The filter type with a capacity: 'blocked' (default), 'classic' or 'split-block' (the
   * latter for the 'string' and 'bytes' funnels). A resumed state keeps its own type.
   */
  type?: DeduperType;
  /** False drop rate (a new key taken for seen), in (0, 1); default 1e-6. */
  fpp?: number;
  /** Key encoding; default `'string'` (UTF-8, so packed line bytes are keys as they are). */
  funnel?: Funnel;
  /** With a path: checkpoint when this many keys were answered new since the last one. */
  checkpointKeys?: number;
  /** With a path: checkpoint when this many milliseconds passed since the last one. */
  checkpointMs?: number;
  /**
   * With a path: hold the state file's lock (file-lock.ts) from `open` until `close` or
   * `release`, so that a second Deduper on the same file (in this or another process) waits for
   * this one instead of overwriting its keys. `true` waits up to 60 s for another holder,
   * `{ timeoutMs }` as long as that; a `FileLockedError` ends the wait. Default false.
   */
  lock?: boolean | { timeoutMs?: number };
}

/** Counts since the Deduper was opened. */
export interface DeduperStats {
  /** Keys asked about. */
  readonly keys: number;
  /** Keys answered new (not seen before). */
  readonly fresh: number;
  /** Checkpoints completed. */
  readonly checkpoints: number;
  /** Expected number of new keys answered "seen" by a false positive: Σ rate at each answer. */
  readonly expectedFalseDrops: number;
}

type AnyFilter = MembershipFilter & { clone(): AnyFilter; expectedFpp?(): number };

/**
 * The false positive rate of `filter` after `added` more keys, by the type's own model: the
 * classic and scalable filters' rate of the bits set now ((bits set / m)^k per layer, kept up to
 * date by the storage, O(1)); for the blocked and split-block filters, whose exact rate needs a
 * scan of every block, the Poisson block-load model at (keys at open + keys added) / blocks.
 */
function rateModel(filter: AnyFilter): (added: number) => number {
  if (filter instanceof BlockedBloomFilter) {
    const base = filter.estimatedCount();
    const { blocks, hashes } = filter;
    return (added) => blockedFalsePositiveRate((base + added) / blocks, hashes);
  }
  if (filter instanceof SplitBlockBloomFilter) {
    const base = filter.estimatedCount();
    const blocks = filter.blocks;
    return (added) => splitBlockFalsePositiveRate((base + added) / blocks);
  }
  if (typeof filter.expectedFpp === 'function') return () => filter.expectedFpp!();
  return () => 0;
}

function createState(
  type: DeduperType,
  capacity: number | undefined,
  fpp: number,
  funnel: Funnel,
): AnyFilter {
  const row = typeNamed(type, 'deduper');
  if (capacity === undefined) {
    return ScalableBloomFilter.create({ capacity: 65536, fpp, funnel }) as unknown as AnyFilter;
  }
  return row.deduper({ capacity, fpp, funnel }) as unknown as AnyFilter;
}

export class Deduper<K extends Key = Key> {
  /** Where checkpoints go (null: in memory only). */
  readonly path: string | null;
  private filter: AnyFilter;
  private keys = 0;
  private fresh = 0;
  private checkpoints = 0;
  private falseDrops = 0;
  private freshSinceCheckpoint = 0;
  private lastCheckpoint = Date.now();
  private running: Promise<void> | null = null;
  private readonly checkpointKeys: number;
  private readonly checkpointMs: number;
  private readonly model: (added: number) => number;
  private lock: FileLock | null;
  /** The state's design point (`designPoint()`: the shape's, O(1), fixed). */
  private readonly design: { readonly capacity: number; readonly fpp: number };

  private constructor(
    path: string | null,
    filter: AnyFilter,
    options: DeduperOptions,
    lock: FileLock | null,
  ) {
    this.path = path;
    this.filter = filter;
    this.lock = lock;
    this.model = rateModel(filter);
    this.design = (filter as unknown as FilterBase).designPoint();
    this.checkpointKeys =
      options.checkpointKeys === undefined
        ? Number.POSITIVE_INFINITY
        : checkPositiveInteger('checkpointKeys', options.checkpointKeys);
    this.checkpointMs =
      options.checkpointMs === undefined
        ? Number.POSITIVE_INFINITY
        : checkPositiveInteger('checkpointMs', options.checkpointMs);
  }

  /**
   * Opens the state at `path` (resuming it when the file exists; its own shape then wins over
   * `capacity` and `fpp`), or a new empty one; `path` null keeps it in memory only. Leftover
   * temporary files of checkpoints a crash interrupted are removed.
   */
  static async open<K extends Key = string>(
    path: string | null,
    options: DeduperOptions = {},
  ): Promise<Deduper<K>> {
    if (path !== null && typeof path !== 'string') {
      throw new TypeError(`path must be a file path or null, got ${show(path)}`);
    }
    const funnel = options.funnel ?? 'string';
    const fpp = checkProbability('fpp', options.fpp ?? 1e-6);
    const lockOption = options.lock ?? false;
    const lock =
      path === null || lockOption === false
        ? null
        : await lockFile(path, lockOption === true ? {} : lockOption);
    try {
      return await Deduper.resume<K>(path, options, funnel, fpp, lock);
    } catch (error) {
      await lock?.release();
      throw error;
    }
  }

  private static async resume<K extends Key>(
    path: string | null,
    options: DeduperOptions,
    funnel: Funnel,
    fpp: number,
    lock: FileLock | null,
  ): Promise<Deduper<K>> {
    let filter: AnyFilter | null = null;
    if (path !== null) {
      await removeStaleTemps(path);
      try {
        filter = (await load(path)) as AnyFilter;
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOENT') throw error;
      }
      if (filter !== null && filter.funnel !== funnel) {
        throw new TypeError(
          `${path} holds keys of funnel '${filter.funnel}', the Deduper was asked for '${funnel}'`,
        );
      }
      if (filter !== null && typeof filter.clone !== 'function') {
        throw new TypeError(
          `${path} holds a ${filter.constructor.name}, which a Deduper cannot use`,
        );
      }
    }
    // Checked even when a state file is resumed, so a bad value is reported at once.
    const type = options.type ?? DEFAULT_DEDUPER_TYPE;
    typeNamed(type, 'deduper');
    filter ??= createState(type, options.capacity, fpp, funnel);
    return new Deduper<K>(path, filter, options, lock);
  }

  /** The filter holding the keys seen (do not change it directly). */
  get state(): MembershipFilter {
    return this.filter;
  }

  get stats(): DeduperStats {
    return {
      keys: this.keys,
      fresh: this.fresh,
      checkpoints: this.checkpoints,
      expectedFalseDrops: this.falseDrops,
    };
  }

  /** The state's false positive rate now (see {@link rateModel}). */
  private rate(): number {
    return this.model(this.fresh);
  }

  /**
   * The state's false positive rate now, by its type's rate model (O(1); see `rateModel`): the
   * rate at which a new key would be taken for seen.
   */
  get currentFpp(): number {
    return this.rate();
  }

  /**
   * The state's saturation figure (see `FilterBase.saturation`), with the rate now from the
   * Deduper's O(1) rate model ({@link currentFpp}) instead of a scan of the bits: `saturated`
   * once the false drop rate passed 10 times the rate the state's shape was made for. A state
   * without a capacity (scalable) grows and never saturates.
   */
  get saturation(): Saturation {
    return saturationAt(this.design, this.rate());
  }

  /** True if `key` was (probably) seen before; marks it seen either way. */
  seen(key: K): boolean {
    this.keys++;
    const rate = this.rate();
    if (!this.filter.add(key as never)) return true;
    this.fresh++;
    this.freshSinceCheckpoint++;
    this.falseDrops += rate;
    return false;
  }

  /**
   * `seen` of every packed key, in order: `out[i]` is 1 if key i was seen before (earlier in
   * the batch included), 0 if it is new. All keys are marked seen. One pass: `addBatch(batch,
   * out)` adds the keys in order and says which were new (see {@link MembershipFilter.addBatch}).
   */
  seenBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    // Only the shape here: addBatch checks every offset before it reads a key.
    const count = packedCount(batch);
    const result = checkOut(out, count);
    this.keys += count;
    const rate = this.rate();
    const fresh = this.filter.addBatch(batch, result);
    for (let i = 0; i < count; i++) result[i] = result[i]! ^ 1;
    this.fresh += fresh;
    this.freshSinceCheckpoint += fresh;
    // The rate rose while the batch went in: count each new key at the mean of both ends.
    this.falseDrops += (fresh * (rate + this.rate())) / 2;
    return result;
  }

  /** True when the `checkpointKeys` / `checkpointMs` options say a checkpoint is due. */
  get checkpointDue(): boolean {
    if (this.path === null) return false;
    return (
      this.freshSinceCheckpoint >= this.checkpointKeys ||
      (this.freshSinceCheckpoint > 0 && Date.now() - this.lastCheckpoint >= this.checkpointMs)
    );
  }

  /**
   * Writes the state as it is now to `path`, atomically; resolves once it is on disk. Keys
   * answered before this call survive any later crash. Concurrent calls run one after another.
   */
  async checkpoint(): Promise<void> {
    if (this.path === null) throw new TypeError('checkpoint() needs a Deduper opened with a path');
    while (this.running !== null) await this.running;
    const snapshot = this.filter.clone();
    this.freshSinceCheckpoint = 0;
    this.lastCheckpoint = Date.now();
    const path = this.path;
    this.running = (async () => {
      try {
        await save(snapshot, path);
        this.checkpoints++;
      } finally {
        this.running = null;
      }
    })();
    await this.running;
  }

  /**
   * Final checkpoint (when there is a path and anything new), then nothing more to do; the
   * state file's lock (if any) is released however the checkpoint ends.
   */
  async close(): Promise<void> {
    try {
      while (this.running !== null) await this.running;
      if (this.path !== null && (this.freshSinceCheckpoint > 0 || this.checkpoints === 0)) {
        await this.checkpoint();
      }
    } finally {
      await this.release();
    }
  }

  /**
   * Releases the state file's lock without a checkpoint (after an error: keys answered since
   * the last checkpoint are then answered new again by the next run). Idempotent.
   */
  async release(): Promise<void> {
    while (this.running !== null) await this.running.catch(() => {});
    const lock = this.lock;
    this.lock = null;
    await lock?.release();
  }
}
