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
 * Durability: `checkpoint()` writes the state to `path` atomically (a temporary file next to it,
 * fsync, rename: a crash or SIGKILL at any moment leaves either the previous checkpoint or the new
 * one, never a mix). Every key answered before `checkpoint()` was called is in the state once its
 * promise resolves: after a crash, `Deduper.open(path)` resumes from the last completed checkpoint
 * and answers true for all of them. Keys answered after it are answered again as new (at least
 * once, never lost). A checkpoint snapshots the filter first, so `seen` may go on meanwhile.
 */

import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import { checkPacked, keyEnd } from '../filters/packed.js';
import { ScalableBloomFilter } from '../filters/scalable/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import { load, save } from './io.js';

export interface DeduperOptions {
  /**
   * Expected number of distinct keys. Given: a classic Bloom filter sized for it (fastest, fixed
   * memory; the rate rises past it). Omitted: a scalable filter that grows as needed.
   */
  capacity?: number;
  /** False drop rate (a new key taken for seen), in (0, 1); default 1e-6. */
  fpp?: number;
  /** Key encoding; default `'string'` (UTF-8, so packed line bytes are keys as they are). */
  funnel?: Funnel;
  /** With a path: checkpoint when this many keys were answered new since the last one. */
  checkpointKeys?: number;
  /** With a path: checkpoint when this many milliseconds passed since the last one. */
  checkpointMs?: number;
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

/** FNV-1a over `bytes[s, e)`: the exact in-batch duplicate check's table hash. */
function fnv1a(bytes: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

function sameBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let i = 0; i < aEnd - a; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
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
  // Scratch for seenBatch: the in-batch table and the new keys' views.
  private table = new Int32Array(0);
  private newStarts = new Uint32Array(0);
  private newEnds = new Uint32Array(0);

  private constructor(path: string | null, filter: AnyFilter, options: DeduperOptions) {
    this.path = path;
    this.filter = filter;
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
    if (filter === null) {
      filter = (options.capacity === undefined
        ? ScalableBloomFilter.create({ capacity: 65536, fpp, funnel })
        : BloomFilter.create({ capacity: options.capacity, fpp, funnel })) as unknown as AnyFilter;
    }
    return new Deduper<K>(path, filter, options);
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

  private rate(): number {
    return typeof this.filter.expectedFpp === 'function' ? this.filter.expectedFpp() : 0;
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
   * the batch included), 0 if it is new. All keys are marked seen.
   *
   * One `hasBatch` over all keys finds those certainly new; among them, repeats inside the batch
   * are found exactly (a hash table over their bytes, then a byte comparison), and the first of
   * each goes to one `addBatch`.
   */
  seenBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const count = checkPacked(batch);
    const result = out ?? new Uint8Array(count);
    if (!(result instanceof Uint8Array) || result.length < count) {
      throw new RangeError(`out must be a Uint8Array of at least ${count} bytes, got ${show(out)}`);
    }
    this.keys += count;
    const rate = this.rate();
    this.filter.hasBatch(batch, result);
    const { bytes, offsets } = batch;
    let size = 1024;
    while (size < count * 2) size *= 2;
    if (this.table.length < size) this.table = new Int32Array(size);
    if (this.newStarts.length < count + 1) {
      this.newStarts = new Uint32Array(count + 1);
      this.newEnds = new Uint32Array(count + 1);
    }
    const table = this.table;
    table.fill(-1, 0, size);
    const mask = size - 1;
    const starts = this.newStarts;
    const ends = this.newEnds;
    let fresh = 0;
    for (let i = 0; i < count; i++) {
      if (result[i] === 1) continue;
      const s = offsets[i]!;
      const e = keyEnd(batch, i);
      let slot = fnv1a(bytes, s, e) & mask;
      let repeat = false;
      for (;;) {
        const j = table[slot]!;
        if (j < 0) break;
        if (sameBytes(bytes, starts[j]!, ends[j]!, s, e)) {
          repeat = true;
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (repeat) {
        result[i] = 1;
        continue;
      }
      table[slot] = fresh;
      starts[fresh] = s;
      ends[fresh] = e;
      fresh++;
    }
    if (fresh > 0) {
      starts[fresh] = ends[fresh - 1]!;
      this.filter.addBatch({
        bytes,
        offsets: starts.subarray(0, fresh + 1),
        ends: ends.subarray(0, fresh),
      });
    }
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

  /** Final checkpoint (when there is a path and anything new), then nothing more to do. */
  async close(): Promise<void> {
    while (this.running !== null) await this.running;
    if (this.path !== null && (this.freshSinceCheckpoint > 0 || this.checkpoints === 0)) {
      await this.checkpoint();
    }
  }
}

/** Removes `<file>.<pid>.<random>.tmp` files that a killed `save` left next to `path`. */
async function removeStaleTemps(path: string): Promise<void> {
  const dir = dirname(path);
  const base = basename(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(base.length + 1).split('.')[0]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    await unlink(join(dir, name)).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
