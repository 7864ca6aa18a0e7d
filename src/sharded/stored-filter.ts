/**
 * What the stored filters of one sharded layout (layout.ts) share over any {@link ShardStore}
 * (bloom: bits, counting: 4-bit counters, cuckoo: 16-bit slots): single keys and batches (any
 * iterable or async iterable, sent a window at a time by ops.ts, each window by windows.ts),
 * export of the shards, clear and destroy.
 */

import type { ProgressOptions } from '../filters/filter.js';
import type { Key } from '../hash/keys.js';
import { checkMetaReply, initShards } from './epoch.js';
import type { PlacedKeys } from './layout.js';
import { readEpoch } from './meta.js';
import type { StoreOps } from './ops.js';
import type { ShardedBloomShape } from './sharded-bloom.js';
import type { Epoch, Meta, ShardKind, ShardRead } from './store.js';
import { ShardWindows, type WriteOp } from './windows.js';

export type { WriteOp } from './windows.js';

export abstract class StoredShardedFilter<K extends Key = Key> extends ShardWindows<K> {
  protected constructor(ops: StoreOps, name: string, meta: Meta, kind: ShardKind) {
    super(ops, name, meta, kind);
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
