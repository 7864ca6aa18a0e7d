/**
 * How a stored filter (stored-filter.ts) sends a window of keys to its {@link ShardStore}: the
 * filter's state (shape, epoch, shard names), every key placed (and checked) before anything is
 * sent, the window's writes or reads issued in one turn (as one `addBatch` / `readBatch` of the
 * store when it has them, else a call per key), and the store's refusals turned into re-reads
 * and resends or typed errors. A shard of a newer generation (another client cleared): re-read
 * the metadata, resend. A missing shard: the store's not-found error if the filter is gone, its
 * stale error if it was created again, else its lost error. Another `id`: the stale error. Reads
 * return the header with the cells, so a lost or replaced shard is seen in the same round trip.
 */

import { FilterFullError, show } from '../errors.js';
import type { Key } from '../hash/keys.js';
import { lostShard, readFilterMeta, ShardRefs, staleError } from './epoch.js';
import { KEY_STATUS } from './errors.js';
import { Locator, type PlacedKeys, placeAll } from './layout.js';
import { readEpoch, readExpiry, readShape, who } from './meta.js';
import { type OpContext, type StoreOps, settleAll } from './ops.js';
import type { ShardedBloomShape } from './sharded-bloom.js';
import {
  type BatchCells,
  type CellBatch,
  type Epoch,
  type Meta,
  REPLY,
  type ReadCells,
  type ShardKind,
  type ShardRead,
  type ShardStore,
  type WriteReply,
} from './store.js';

/** What a write does to a key's cells. */
export type WriteOp = 'add' | 'remove';

export abstract class ShardWindows<K extends Key = Key> {
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

  /** Re-reads the metadata's generation (after a write met a newer one). */
  protected async refresh(): Promise<void> {
    const meta = await readFilterMeta(this.store, this.name);
    if (meta.id !== this.epoch.id) throw staleError(this.store, this.name);
    this.epoch = readEpoch(this.store, this.name, meta);
  }

  /**
   * The window's keys as a `CellBatch` for the store's batch operations (`addBatch`,
   * `readBatch`), or null to send them key by key (`writeCells`, `readCells`).
   */
  protected batchOf(_placed: PlacedKeys): { cells: BatchCells; batch: CellBatch } | null {
    return null;
  }

  /**
   * The window's keys as a `CellBatch` for the store's `readBatch`, or null to read them
   * key by key (`readCells`): {@link batchOf} unless a type reads other cells than it writes.
   */
  protected readBatchOf(placed: PlacedKeys): { cells: ReadCells; batch: CellBatch } | null {
    return this.batchOf(placed);
  }

  /** The shard name of every placed key. */
  protected refsOf(placed: PlacedKeys): string[] {
    const refs = new Array<string>(placed.count);
    for (let j = 0; j < placed.count; j++) refs[j] = this.refs.get(placed.shards[j]!);
    return refs;
  }

  /**
   * Writes `op` for every key of `window` (all sent in one turn; the first time with `first`, see
   * store.ts, and as one `addBatch` when the store has it), resending the keys that met another
   * generation after re-reading it. `result(j, reply)` gets each applied key's 0/1.
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
    let pending: number[] | null = null; // null: every key of the window
    for (let attempt = 0; ; attempt++) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const epoch = this.epoch;
      const count = pending === null ? placed.count : pending.length;
      if (count === 0) break;
      const keys = pending;
      const key = (i: number) => (keys === null ? i : keys[i]!);
      for (let i = 0; i < count; i++) status[offset + key(i)] = KEY_STATUS.unknown;
      const replies = new Array<WriteReply | undefined>(count);
      const spec =
        keys === null && op === 'add' && this.store.addBatch ? this.batchOf(placed) : null;
      let failure =
        spec !== null
          ? await this.store.addBatch!(spec.cells, spec.batch, epoch, replies)
          : await settleAll(
              count,
              (i) => {
                const ref = this.refs.get(placed.shards[key(i)]!);
                return this.writeCells(op, ref, epoch, placed.offsets, key(i) * k, attempt === 0);
              },
              replies,
            );
      const again: number[] = [];
      // First writes that landed in a newer generation: applied if it is the current one.
      const landed: [j: number, gen: number, result: number][] = [];
      let lost: string | undefined;
      for (let i = 0; i < count; i++) {
        const j = key(i);
        const r = replies[i];
        if (r === undefined) continue; // failed: its status stays unknown
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
    // With the `replicas` option: not acknowledged until the replicas hold the window.
    await this.ops.replicated(this.refsOf(placed), op, status, offset, placed.count);
  }

  /**
   * Reads every key of `window` (sent in one turn, as one `readBatch` when the store has it);
   * `result(j, read, placed)`.
   */
  protected async readWindow(
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, read: ShardRead, placed: PlacedKeys) => void,
  ): Promise<void> {
    const placed = this.place(window);
    const n = placed.count;
    const k = n === 0 ? 0 : placed.offsets.length / n;
    status.fill(KEY_STATUS.unknown, offset, offset + n);
    const reads = new Array<ShardRead | undefined>(n);
    const spec = this.store.readBatch ? this.readBatchOf(placed) : null;
    const failure =
      spec !== null
        ? await this.store.readBatch!(spec.cells, spec.batch, reads)
        : await settleAll(
            n,
            (j) => this.readCells(this.refs.get(placed.shards[j]!), placed.offsets, j * k),
            reads,
          );
    if (failure !== undefined) throw failure;
    const id = Number(this.epoch.id);
    for (let j = 0; j < n; j++) {
      const read = reads[j]!;
      if (read[0] !== id) {
        throw await lostShard(this.store, this.name, this.epoch, this.refs.get(placed.shards[j]!));
      }
      status[offset + j] = KEY_STATUS.applied;
      result(j, read, placed);
    }
  }
}
