/**
 * THE shard-store interface: everything the stored sharded filters (stored-filter.ts and its
 * subclasses) ask of the place where their shards live. The filters hold the logic (layout, shard
 * choice, windows, epochs, retries, export/import); a store holds bytes and runs each operation
 * below atomically on one shard, or on one filter's metadata. `RedisShardStore`
 * (src/redis/shard-store.ts: Lua scripts and BITFIELD) and `MemoryShardStore` (memory-store.ts)
 * implement it; another store (a SQL table, another key-value server) is one more file.
 *
 * ## What a filter is in a store
 *
 * - **Metadata** of filter `name`: a map of string fields (docs/FORMAT.md lists them) with the
 *   filter's `id` (a random u32 ≥ 1, new for every creation) and `gen` (its generation, from 1,
 *   bumped by every clear). Together they are the filter's {@link Epoch}.
 * - **Shards**, named by {@link ShardStore.shardRef}: each is an 8-byte header (the `id` and the
 *   `gen` it was last reset in) and its cells, zero until written. Cells are bits (bloom,
 *   scalable), 4-bit saturating counters (counting) or 16-bit slots (cuckoo), packed in the bytes
 *   as Redis' BITFIELD packs them: bit p is the `0x80 >>> (p & 7)` bit of byte `p >>> 3`, a
 *   counter j the bits [4j, 4j + 4), a slot s the bits [16s, 16s + 16), most significant first.
 *   `readShard` gives those bytes, so an export is the same bytes whatever the store.
 * - **Expiry**: a filter created with a TTL has an absolute `expireAt` (ms since the epoch, on the
 *   store's clock), written into its metadata by `createMeta`; `initShard` gives each new shard
 *   that same expiry, a reset keeps it. At `expireAt` the metadata and every shard vanish together
 *   (they read as missing). Writes never create a shard and never change an expiry.
 *
 * ## The epoch check (what keeps an acknowledged add)
 *
 * Every write takes the {@link Epoch} the filter object planned it for and checks the shard's
 * header in the same atomic step, writing nothing unless the shard is that filter's:
 *
 * | shard header            | reply            | meaning                                          |
 * |-------------------------|------------------|--------------------------------------------------|
 * | missing (id 0)          | `REPLY.lost`     | the shard is lost (deleted, evicted, expired)    |
 * | another id              | `REPLY.replaced` | the filter was deleted and created again         |
 * | newer gen               | `REPLY.cleared`  | cleared since the object read the metadata       |
 * | older gen               | —                | a clear is under way: reset the shard, then write|
 *
 * So a stale view, a clear, a re-creation or a TTL expiry never makes an acknowledged write vanish
 * silently: the filter re-reads the metadata and resends, or reports a typed error.
 *
 * A store may offer a cheaper first attempt for adds (`first: true`) that writes before it looks
 * at the header and says what it found, as {@link Landed}: the write then landed in a generation
 * other than the planned one (only ever setting bits or raising counters, so never a false
 * negative), and the filter decides whether that counts. A missing shard must still be reported
 * as `REPLY.lost` with nothing left behind.
 *
 * ## Windows
 *
 * Reads and writes are issued many at a time: a filter calls the operations for a whole window
 * of keys in one turn of the event loop before awaiting any of them. A store should send such a
 * burst together (Redis: one pipelined write per node) and must answer each call on its own (one
 * key's failure rejects only its own promise). Order between calls on the same shard is the order
 * of the calls.
 */

import type { StoreErrorKind } from './errors.js';

/** A filter's metadata, field → value (all strings). */
export type Meta = Record<string, string>;

/** The fields a new filter's metadata is created with (`kind` among them). */
export type MetaFields = Readonly<Record<string, string>> & { readonly kind: string };

/** A filter's identity: its `id` and generation, from the metadata. */
export interface Epoch {
  readonly id: string;
  readonly gen: number;
}

/** Which filter type a shard belongs to: each has shards of its own. */
export type ShardKind = 'bloom' | 'counting' | 'cuckoo' | 'scalable';

/** Replies of the guarded writes besides 0 and 1 (see the module comment). */
export const REPLY = { full: -1, lost: -2, replaced: -3, cleared: -4 } as const;

/** Replies of the metadata updates besides 1 (done). */
export const META_REPLY = { gone: 0, replaced: -3 } as const;

/**
 * A first-attempt add that landed in generation `gen` of the planned id, not the planned one:
 * `result` is what the write would have replied there (1 if the key was new).
 */
export interface Landed {
  readonly gen: number;
  readonly result: 0 | 1;
}

/** A `REPLY` code: full, lost, replaced or cleared. */
export type ReplyCode = (typeof REPLY)[keyof typeof REPLY];

/** A guarded write's reply: 0 or 1 (applied; 1 = the key was new) or a `REPLY` code. */
export type GuardedReply = 0 | 1 | ReplyCode;

/** A first-attempt write's reply: a {@link GuardedReply}, or where it landed instead. */
export type WriteReply = GuardedReply | Landed;

/**
 * A store's raw reply to a guarded write (a script's integer), checked: a `TypeError` naming it
 * when it is none of 0, 1 and the `REPLY` codes, so a store speaking another protocol fails
 * loudly instead of being read as "applied".
 */
export function guardedReply(value: unknown): GuardedReply {
  const n = typeof value === 'number' || typeof value === 'string' ? Number(value) : Number.NaN;
  if (n === 0 || n === 1) return n;
  for (const code of Object.values(REPLY)) if (n === code) return code;
  throw new TypeError(`a guarded write replied ${String(value)}, not 0, 1 or a REPLY code`);
}

/**
 * A read of some cells with the shard's header, in one atomic step: `[id, gen, cell values...]`
 * (id 0 when the shard is missing; its cells then read 0).
 */
export type ShardRead = readonly number[];

/**
 * The cells of a window of keys for a batch operation ({@link ShardStore.addBatch}): key i goes
 * to shard `refs[i]` with cells `cells[starts[i], starts[i + 1])`, or `cells[i·k, (i + 1)·k)`
 * when there are no `starts`.
 */
export interface CellBatch {
  readonly count: number;
  readonly refs: readonly string[];
  readonly cells: ArrayLike<number>;
  readonly k: number;
  readonly starts?: Uint32Array;
}

/** The cells [from, to) of key i of `batch` (see {@link CellBatch}). */
export function cellSpan(batch: CellBatch, i: number): [from: number, to: number] {
  const starts = batch.starts;
  const from = starts === undefined ? i * batch.k : starts[i]!;
  return [from, starts === undefined ? from + batch.k : starts[i + 1]!];
}

/** Which cells a batch operation touches: bits (`setBits`) or 4-bit counters (`addCounters`). */
export type BatchCells = 'bits' | 'counters';

/** Which cells a batch read reads: those of {@link BatchCells}, or 16-bit cuckoo slots. */
export type ReadCells = BatchCells | 'slots';

/** A shard's header: id 0 when the shard is missing. */
export interface ShardHeader {
  readonly id: number;
  readonly gen: number;
}

/** A metadata update's reply: 1 done, or a `META_REPLY` code; `meta` after a done update. */
export interface MetaUpdate {
  readonly code: number;
  readonly meta?: Meta;
}

/**
 * The storage of stored sharded filters. Every operation that names a shard is atomic on that
 * shard; every metadata operation is atomic on that filter's metadata. `cells` are cell indexes
 * in the shard (after its header), each distinct unless said otherwise; a store reads them during
 * the call only (before its first `await`), so the caller may reuse the array.
 */
export interface ShardStore {
  /** How messages name a filter of this store, e.g. `Redis filter`. */
  readonly noun: string;
  /** Null when the store can take operations now, else why not (fails the call at once). */
  notReady(): string | null;
  /** The store's error of `kind` (its class names the store, e.g. `RedisFilterLostError`). */
  error(kind: StoreErrorKind, message: string, cause?: unknown): Error;
  /** The store's error for a parameter that differs from the stored filter's. */
  mismatch(name: string, parameter: string, existing?: string, requested?: string): Error;
  /**
   * The error to report for `err`, thrown inside operation `label`: bloomkit's own errors (typed
   * errors, RangeError, TypeError) unchanged; a failure of the store's client as `error('failed')`.
   */
  wrap(label: string, err: unknown): unknown;
  /**
   * Rejects if the store may drop the filter's data on its own (Redis: an evicting
   * `maxmemory-policy`), unless the caller allowed it; `hasTtl` says the filter has a TTL, `label`
   * names it in the error.
   */
  checkDurability(label: string, hasTtl: boolean): Promise<void>;

  // Metadata, each atomic on filter `name`'s metadata.

  /**
   * Creates the metadata with `fields` unless it exists, and returns what is there (so racing
   * creators all get the same filter). With `ttl` (ms) it adds `expireAt` = now + ttl (store
   * clock) and the metadata expires then.
   */
  createMeta(
    name: string,
    fields: MetaFields,
    ttl: number | undefined,
  ): Promise<{ created: boolean; meta: Meta }>;
  /** The metadata, or `undefined` if there is none (never created, deleted, expired). */
  readMeta(name: string): Promise<Meta | undefined>;
  /** Sets `field` if the metadata is filter `id`'s: 1, or `META_REPLY.gone`/`replaced`. */
  setMetaField(name: string, id: string, field: string, value: string): Promise<number>;
  /**
   * Starts a clear if the metadata is filter `id`'s: bumps `gen` (and with `dropLayers` keeps only
   * `layer:0`, `layers` = 1); the new metadata, or a `META_REPLY` code.
   */
  newGeneration(name: string, id: string, dropLayers: boolean): Promise<MetaUpdate>;
  /**
   * Appends a layer (scalable): if the metadata is `epoch` and has exactly `count` layers, sets
   * `layer:<count>` = `spec` and `layers` = count + 1 (compare and set). The metadata then (1),
   * whether it appended or not, or a `META_REPLY` code.
   */
  appendLayer(name: string, epoch: Epoch, count: number, spec: string): Promise<MetaUpdate>;
  /** Deletes the metadata (the filter can no longer be opened). */
  deleteMeta(name: string): Promise<void>;

  // Shards, each atomic on one shard.

  /** Names shard `shard` (of layer `layer`, scalable) of filter `name` of type `kind`. */
  shardRef(kind: ShardKind, name: string, shard: number, layer?: number): string;
  /**
   * Creates the shard empty with header `epoch` (and expiry `expireAt`), or resets it to `epoch`
   * (empty, expiry kept) unless it already holds `epoch.id` at `epoch.gen` or newer. A scalable
   * shard's key count and seal go with it. True if it wrote.
   */
  initShard(ref: string, epoch: Epoch, expireAt: number | undefined): Promise<boolean>;
  /** Deletes shards (with their key counts), whatever they hold. */
  deleteShards(refs: readonly string[]): Promise<void>;
  /** Deletes a shard unless it holds `epoch.id` at `epoch.gen` or newer (a dropped layer). */
  dropShard(ref: string, epoch: Epoch): Promise<boolean>;

  /** Sets bits `cells` (epoch-guarded); 1 if one was 0 (the key was new), 0, or a code. */
  setBits(ref: string, epoch: Epoch, cells: ArrayLike<number>, first: boolean): Promise<WriteReply>;
  /** Reads bits `cells` with the header. */
  readBits(ref: string, cells: ArrayLike<number>): Promise<ShardRead>;

  /**
   * Optional batch form of the first attempt of a window of adds: what `setBits` (`'bits'`) or
   * `addCounters` (`'counters'`) with `first` true would do for every key of `batch`, in order,
   * issued in one turn, without a promise per key. Settles once every key is answered: `out[i]`
   * is key i's reply, left `undefined` if its call failed; resolves to the first failure
   * (`undefined` when none), never rejects. A store without it gets the per-key calls.
   */
  addBatch?(
    cells: BatchCells,
    batch: CellBatch,
    epoch: Epoch,
    out: (WriteReply | undefined)[],
  ): Promise<unknown>;
  /**
   * Optional batch form of `readBits` / `readCounters` / `readBuckets` for every key of `batch`
   * (as {@link addBatch}; `'slots'`: the cells are slot indexes, bucket b's slots 4b to 4b + 3):
   * `out[i]` is key i's read, or `undefined` if its call failed; resolves to the first failure.
   */
  readBatch?(cells: ReadCells, batch: CellBatch, out: (ShardRead | undefined)[]): Promise<unknown>;
  /**
   * Optional (a store with replicas): waits until `replicas` replicas hold every write sent so
   * far to the shards `refs` (Redis: `WAIT` on each shard's connection), at most `timeoutMs`
   * each; resolves to the fewest replicas that confirmed for any of them. A filter's `replicas`
   * option must be 0 on a store without it.
   */
  waitReplicas?(refs: readonly string[], replicas: number, timeoutMs: number): Promise<number>;
  /** Counts the set bits of the shard (after its header); 0 for a missing shard. */
  countBits(ref: string): Promise<number>;

  /**
   * Adds 1 to counters `cells`, saturating at 15 (epoch-guarded); 1 if one went from 0 to 1 (the
   * key was new), 0, or a code.
   */
  addCounters(
    ref: string,
    epoch: Epoch,
    cells: ArrayLike<number>,
    first: boolean,
  ): Promise<WriteReply>;
  /**
   * Removes one occurrence, all or nothing (epoch-guarded). `cells` are a key's k counters, a
   * counter repeated as often as the key uses it: if an unsaturated counter is below its
   * multiplicity, replies 0 and changes nothing; else lowers every counter below 15 by its
   * multiplicity (a saturated one never moves) and replies 1.
   */
  removeCounters(ref: string, epoch: Epoch, cells: ArrayLike<number>): Promise<GuardedReply>;
  /** Reads counters `cells` with the header. */
  readCounters(ref: string, cells: ArrayLike<number>): Promise<ShardRead>;

  /**
   * Cuckoo add of fingerprint `f` (1..65535) with buckets `i1`, `i2` of `buckets` (a power of two;
   * 4 slots each, slot s of bucket b is slot 4b + s): into a free slot of i1 or i2, else moving
   * fingerprints to their other bucket (`altBucket`, stored-cuckoo.ts) at most `maxKicks` times;
   * if no slot frees, every move is undone and the reply is `REPLY.full`. 1 if f was in neither
   * bucket.
   */
  cuckooAdd(
    ref: string,
    epoch: Epoch,
    f: number,
    i1: number,
    i2: number,
    buckets: number,
    maxKicks: number,
  ): Promise<GuardedReply>;
  /** Clears one slot of bucket i1 or i2 holding `f`: 1, or 0 (no change). Epoch-guarded. */
  cuckooRemove(ref: string, epoch: Epoch, f: number, i1: number, i2: number): Promise<GuardedReply>;
  /** Reads the 8 slots of buckets i1 and i2 with the header. */
  readBuckets(ref: string, i1: number, i2: number): Promise<ShardRead>;

  /**
   * Scalable add (epoch-guarded): unless the shard is sealed or has taken `share` keys already
   * (then `REPLY.full`, no change), sets bits `cells` and, if one was 0, counts the key; 1 if new.
   */
  scalableAdd(
    ref: string,
    epoch: Epoch,
    share: number,
    cells: ArrayLike<number>,
  ): Promise<GuardedReply>;
  /**
   * Optional batch form of `scalableAdd` for every key of `batch` (as {@link addBatch}), each key
   * answered as its own `scalableAdd` in window order would be.
   */
  scalableAddBatch?(
    batch: CellBatch,
    epoch: Epoch,
    share: number,
    out: (number | undefined)[],
  ): Promise<unknown>;
  /** Seals the shard (every later `scalableAdd` is `REPLY.full`): 1, or a code. */
  seal(ref: string, epoch: Epoch): Promise<GuardedReply>;
  /** A scalable shard's key count and seal. */
  layerState(ref: string): Promise<{ count: number; sealed: boolean }>;

  /**
   * Copies the shard's cell bytes into `into` (zeros past what exists) and returns its header. The
   * header is read first; writes made meanwhile may or may not be in the bytes.
   */
  readShard(ref: string, into: Uint8Array): Promise<ShardHeader>;
  /** ORs `bytes` into the shard's cells (epoch-guarded, atomic): 1, or a code. */
  orShard(ref: string, epoch: Epoch, bytes: Uint8Array): Promise<number>;
}
