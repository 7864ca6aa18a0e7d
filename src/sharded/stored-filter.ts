/**
 * What the stored filters of one sharded layout (layout.ts) share over any {@link ShardStore}
 * (bloom: bits, counting: 4-bit counters, cuckoo: 16-bit slots): the shape from the metadata,
 * the epoch, a key's shard and cells, windows of keys (ops.ts), and the store's refusals turned
 * into retries or typed errors. A shard of a newer generation (another client cleared): re-read
 * the metadata, resend. A missing shard: the store's not-found error if the filter is gone, its
 * stale error if it was created again, else its lost error. Another `id`: the stale error. Reads
 * return the header with the cells, so a lost or replaced shard is seen in the same round trip.
 */

import { FilterFullError, show } from '../errors.js';
import type { ProgressOptions } from '../filters/filter.js';
import type { Key } from '../hash/keys.js';
import {
  checkMetaReply,
  headerProblem,
  initShards,
  lostShard,
  readFilterMeta,
  ShardRefs,
  staleError,
} from './epoch.js';
import { KEY_STATUS } from './errors.js';
import { Locator, type PlacedKeys, placeAll } from './layout.js';
import { readEpoch, readExpiry, readShape, who } from './meta.js';
import type { OpContext, StoreOps } from './ops.js';
import type { ShardedBloomShape } from './sharded-bloom.js';
import {
  type Epoch,
  type Meta,
  REPLY,
  type ShardKind,
  type ShardRead,
  type ShardStore,
  type WriteReply,
} from './store.js';

/** What a write does to a key's cells. */
export type WriteOp = 'add' | 'remove';

export abstract class StoredShardedFilter<K extends Key = Key> {
  readonly name: string;
  /** S shards of b cells, k per key (`shardBits`: counters for counting, buckets for cuckoo). */
  readonly shape: ShardedBloomShape;
  /** Time to live in ms as created, or `undefined`. */
  readonly ttlMs: number | undefined;
  /** When the filter expires (ms since the epoch, store clock), or `undefined`. */
  readonly expireAt: number | undefined;
  protected readonly ops: StoreOps;
  protected readonly locator: Locator;
  protected readonly refs: ShardRefs;
  protected epoch: Epoch;

  protected constructor(ops: StoreOps, name: string, meta: Meta, kind: ShardKind) {
    this.ops = ops;
    this.name = name;
    const label = who(ops.store, name);
    this.shape = readShape(label, meta);
    const { ttl, expireAt } = readExpiry(label, meta);
    this.ttlMs = ttl;
    this.expireAt = expireAt;
    this.epoch = readEpoch(ops.store, name, meta);
    this.locator = new Locator(this.shape, this.shape.funnel);
    this.refs = new ShardRefs((i) => ops.store.shardRef(kind, name, i), this.shape.shards);
  }

  /** The store the filter lives in. */
  get store(): ShardStore {
    return this.ops.store;
  }

  get funnel(): ShardedBloomShape['funnel'] {
    return this.shape.funnel;
  }

  /** Cells per key (k): bits, or counters for a counting filter. */
  get hashes(): number {
    return this.shape.hashes;
  }

  /** Number of shards (S). */
  get shards(): number {
    return this.shape.shards;
  }

  /** The filter's id and the generation this object last saw (see store.ts). */
  get generation(): Epoch {
    return this.epoch;
  }

  /** The store's name of shard `i` (the Redis key for a Redis filter). */
  shardKey(i: number): string {
    return this.refs.get(i);
  }

  /** The shard that holds `key` (`TypeError` for a key of the wrong kind). */
  shardOf(key: K): number {
    return this.place([key]).shards[0]!;
  }

  /** Every key's shard and cells, computed (every key checked) before anything is sent. */
  protected place(window: readonly K[]): PlacedKeys {
    return placeAll(this.locator, window);
  }

  /** Sends the write `op` of the key placed at offsets[base, base + k) to shard `ref`. */
  protected abstract writeCells(
    op: WriteOp,
    ref: string,
    epoch: Epoch,
    offsets: Float64Array,
    base: number,
    first: boolean,
  ): Promise<WriteReply>;

  /** Reads the cells (header first) of the key placed at offsets[base, base + k) in `ref`. */
  protected abstract readCells(
    ref: string,
    offsets: Float64Array,
    base: number,
  ): Promise<ShardRead>;

  /** Whether a read of key j (header first) says the key is present. */
  protected abstract present(read: ShardRead, placed: PlacedKeys, j: number): boolean;

  /** Adds `key`; true iff it was certainly new (Guava's `put`); counting, cuckoo: counted again. */
  async add(key: K): Promise<boolean> {
    return (await this.writeOne('add', 'add', key)) === 1;
  }

  /** False if `key` was certainly never added; true if it probably was. */
  async has(key: K): Promise<boolean> {
    return this.readOne('has', key, (r, p, j) => this.present(r, p, j));
  }

  /**
   * Adds every key, a window at a time; resolves to how many were new (a key repeated in the
   * batch is new at most once). On failure the error's `batch` says which keys were applied.
   */
  async addMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<number> {
    let added = 0;
    await this.writeAll('addMany', 'add', keys, options, (_, r) => (added += r));
    return added;
  }

  /** Like {@link addMany}, with whether each key was new, in order. */
  async addEach(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.writeAll('addEach', 'add', keys, options, (i, r) => (out[i] = r === 1));
    return out;
  }

  /** `has` of every key, in order, a window at a time. */
  hasMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]> {
    return this.readAll('hasMany', keys, options, (r, p, j) => this.present(r, p, j));
  }

  /** `remove` of one key (for the types that delete): true iff it was there. */
  protected async removeOne(key: K): Promise<boolean> {
    return (await this.writeOne('remove', 'remove', key)) === 1;
  }

  /**
   * `remove` of every key, a window at a time, each sent at most once; on failure the error's
   * `batch` says which were applied (resend only those `notApplied`).
   */
  protected async removeEach(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.writeAll('removeMany', 'remove', keys, options, (i, r) => (out[i] = r === 1));
    return out;
  }

  /** Re-reads the metadata's generation (after a write met a newer one). */
  protected async refresh(): Promise<void> {
    const meta = await readFilterMeta(this.store, this.name);
    if (meta.id !== this.epoch.id) throw staleError(this.store, this.name);
    this.epoch = readEpoch(this.store, this.name, meta);
  }

  /**
   * Writes `op` for every key of `window` (all sent in one turn; the first time with `first`, see
   * store.ts), resending the keys that met another generation after re-reading it. `result(j,
   * reply)` gets each applied key's 0/1.
   */
  protected async writeWindow(
    op: WriteOp,
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, reply: number) => void,
    ctx: OpContext,
  ): Promise<void> {
    const placed = this.place(window);
    const k = placed.count === 0 ? 0 : placed.offsets.length / placed.count;
    let pending = Array.from(window, (_, j) => j);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const epoch = this.epoch;
      const sent = pending.map((j) => {
        status[offset + j] = KEY_STATUS.unknown;
        const ref = this.refs.get(placed.shards[j]!);
        return this.writeCells(op, ref, epoch, placed.offsets, j * k, attempt === 0);
      });
      const replies = await Promise.allSettled(sent);
      const again: number[] = [];
      // First writes that landed in a newer generation: applied if it is the current one.
      const landed: [j: number, gen: number, result: number][] = [];
      let failure: unknown;
      let lost: string | undefined;
      for (let i = 0; i < replies.length; i++) {
        const j = pending[i]!;
        const settled = replies[i]!;
        if (settled.status === 'rejected') {
          failure ??= settled.reason;
          continue;
        }
        const r = settled.value;
        if (typeof r === 'object') {
          // Landed elsewhere: its status stays unknown until the generation is known.
          if (r.gen > epoch.gen) landed.push([j, r.gen, r.result]);
          else again.push(j);
          continue;
        }
        if (r === 0 || r === 1) {
          status[offset + j] = KEY_STATUS.applied;
          result(j, r);
          continue;
        }
        status[offset + j] = KEY_STATUS.notApplied;
        if (r === REPLY.cleared) again.push(j);
        else if (r === REPLY.lost || r === REPLY.replaced) {
          lost ??= this.refs.get(placed.shards[j]!);
        } else if (r === REPLY.full) {
          failure ??= new FilterFullError(
            `${who(this.store, this.name)} is full: no free slot for a key within its buckets (nothing was lost)`,
          );
        } else failure ??= new Error(`unexpected reply ${show(r)} to ${op}`);
      }
      if (failure !== undefined) throw failure;
      if (lost !== undefined) throw await lostShard(this.store, this.name, this.epoch, lost);
      if (landed.length > 0) {
        await this.refresh();
        for (const [j, gen, r] of landed) {
          if (gen === this.epoch.gen) {
            status[offset + j] = KEY_STATUS.applied;
            result(j, r);
          } else again.push(j);
        }
      }
      if (again.length > 0) {
        if (attempt >= 3) {
          throw this.store.error(
            'stale',
            `${who(this.store, this.name)} was cleared again and again while writing; gave up after ${attempt + 1} tries`,
          );
        }
        await this.refresh();
      }
      pending = again;
    }
  }

  /** Reads every key of `window` (sent in one turn); `result(j, read, placed)`. */
  protected async readWindow(
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, read: ShardRead, placed: PlacedKeys) => void,
  ): Promise<void> {
    const placed = this.place(window);
    const k = placed.count === 0 ? 0 : placed.offsets.length / placed.count;
    const sent = window.map((_, j) => {
      status[offset + j] = KEY_STATUS.unknown;
      return this.readCells(this.refs.get(placed.shards[j]!), placed.offsets, j * k);
    });
    const replies = await Promise.all(sent);
    for (let j = 0; j < replies.length; j++) {
      const read = replies[j]!;
      if (headerProblem(read, this.epoch) !== null) {
        throw await lostShard(this.store, this.name, this.epoch, this.refs.get(placed.shards[j]!));
      }
      status[offset + j] = KEY_STATUS.applied;
      result(j, read, placed);
    }
  }

  /** Writes `op` for one key; resolves to its 0/1 reply. */
  protected writeOne(what: string, op: WriteOp, key: K): Promise<number> {
    let reply = 0;
    return this.ops
      .op(what, (ctx) =>
        this.writeWindow(op, [key], 0, new Uint8Array(1), (_, r) => (reply = r), ctx),
      )
      .then(() => reply);
  }

  /** Reads one key; `answer(read, placed, 0)` turns its read (header first) into the result. */
  protected readOne<T>(
    what: string,
    key: K,
    answer: (read: ShardRead, placed: PlacedKeys, j: number) => T,
  ): Promise<T> {
    let out: T | undefined;
    return this.ops
      .op(what, () =>
        this.readWindow([key], 0, new Uint8Array(1), (j, r, placed) => {
          out = answer(r, placed, j);
        }),
      )
      .then(() => out as T);
  }

  /** Writes `op` for every key, a window at a time; `result(i, reply)` for key i. */
  protected async writeAll(
    what: string,
    op: WriteOp,
    keys: Iterable<K> | AsyncIterable<K>,
    options: ProgressOptions | undefined,
    result: (i: number, reply: number) => void,
  ): Promise<void> {
    await this.ops.batch(what, keys, options, (window, offset, status, ctx) =>
      this.writeWindow(op, window, offset, status, (j, r) => result(offset + j, r), ctx),
    );
  }

  /**
   * Reads every key, a window at a time; `answer(read, placed, j)` turns key j's read (header
   * first) into its result.
   */
  protected async readAll<T>(
    what: string,
    keys: Iterable<K> | AsyncIterable<K>,
    options: ProgressOptions | undefined,
    answer: (read: ShardRead, placed: PlacedKeys, j: number) => T,
  ): Promise<T[]> {
    const out: T[] = [];
    await this.ops.batch(what, keys, options, (window, offset, status) =>
      this.readWindow(window, offset, status, (j, r, placed) => {
        out[offset + j] = answer(r, placed, j);
      }),
    );
    return out;
  }

  /**
   * Reads every shard's `bytes` cell bytes (`readShard`, a window of shards at a time) and hands
   * each to `visit` with its header's id (0: missing).
   */
  protected async eachShard(
    bytes: number,
    visit: (i: number, id: number, data: Uint8Array) => void,
  ): Promise<void> {
    await this.ops.all(this.shape.shards, async (i) => {
      const data = new Uint8Array(bytes);
      const { id } = await this.store.readShard(this.refs.get(i), data);
      visit(i, id, data);
    });
  }

  /**
   * Forgets every key: starts a new generation in the metadata, then resets every shard to it
   * (recreating lost ones). Writes planned for the old generation are refused by the shards and
   * resent by their clients into the new one, so an add that was acknowledged after `clear`
   * returned is never lost.
   */
  async clear(): Promise<void> {
    await this.ops.op('clear', async () => {
      const update = await this.store.newGeneration(this.name, this.epoch.id, false);
      checkMetaReply(this.store, this.name, update.code);
      this.epoch = readEpoch(this.store, this.name, update.meta!);
      await initShards(
        this.ops,
        this.name,
        this.epoch,
        this.expireAt,
        (i) => this.refs.get(i),
        this.shape.shards,
      );
    });
  }

  /** Deletes the filter: its metadata first (so no one opens it), then its shards. */
  async destroy(): Promise<void> {
    await this.ops.op('destroy', async () => {
      await this.store.deleteMeta(this.name);
      await this.ops.deleteShards(
        Array.from({ length: this.shape.shards }, (_, i) => this.refs.get(i)),
      );
    });
  }
}
