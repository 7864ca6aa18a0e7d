/**
 * `StoredCuckooFilter`: a cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter:
 * Practically Better Than Bloom", CoNEXT 2014) kept in a {@link ShardStore}, with deletes;
 * `RedisCuckooFilter` is this filter in Redis (what RedisBloom's `CF.*` commands give, without the
 * module).
 *
 * Layout: S shards, each nb buckets (a power of two) of 4 slots of 16-bit fingerprints; slot s of
 * bucket b is slot 4b + s of the shard. A key's hash h (MurmurHash3_x64_128 of its funnel bytes)
 * gives its shard ⌊(h1 >>> 32)·S/2^32⌋, its fingerprint f = ((h2 mod 2^32) mod 65535) + 1 (never
 * 0, the empty slot), its bucket i1 = (h1 mod 2^32) mod nb and the other bucket
 * i2 = i1 XOR ((f · 0x5bd1e995) mod 2^32 mod nb).
 *
 * - `add`: one atomic `cuckooAdd` puts f in a free slot of i1 or i2, or moves fingerprints to
 *   their other bucket, at most 500 moves; if that finds no free slot every move is undone and the
 *   add rejects with `FilterFullError`: a full filter never loses a key it holds.
 * - `has`: one `readBuckets` of the header and the 8 slots; true iff one holds f. `hasMany` reads
 *   a window's slots as one `readBatch` where the store has it (Redis: one command per shard).
 * - `remove`: one atomic `cuckooRemove` clears one slot holding f (false and no change if none
 *   does). Remove only keys you added: removing a key never added may remove another key's equal
 *   fingerprint.
 *
 * Rate (the cuckoo filter's model, `cuckooFalsePositiveRate` at 16 bits): a key never added
 * matches one of 8 slots with probability at most 1 − (1 − 1/65535)^8 ≈
 * 1.22e-4 (less while the buckets are not full), so `fpp` must be at least that. Sizing: each of
 * the S shards has room for its mean share μ = capacity/S plus 4√μ (keys spread binomially, and a
 * full shard cannot overflow into another) at a 95% load: nb = the power of two ≥ (μ + 4√μ)/3.8,
 * at least 64 and at most shardBits/64 buckets (S grows until it fits).
 * A key added twice takes two slots (as `CF.ADD`), so it can be removed twice.
 */

import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import { cuckooFalsePositiveRate } from '../filters/cuckoo/sizing.js';
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import { hashKeyInto } from '../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { altBucket, bucketSlots } from './cells.js';
import { checkShardBits, DEFAULT_SHARD_BITS, multiplyShift, type PlacedKeys } from './layout.js';
import { StoreOps, type StoreOptions } from './ops.js';
import type { ShardedBloomShape } from './sharded-bloom.js';
import type {
  CellBatch,
  Epoch,
  Meta,
  ReadCells,
  ShardRead,
  ShardStore,
  WriteReply,
} from './store.js';
import { StoredShardedFilter, type WriteOp } from './stored-filter.js';
import {
  createStored,
  openStored,
  type StoredCreateOptions,
  type StoredFilterType,
} from './stored-open.js';

/** Options of {@link StoredCuckooFilter.create}. */
export interface StoredCuckooFilterOptions extends StoredCreateOptions {
  /** Keys the filter holds (at a 95% load): a positive safe integer. */
  capacity: number;
  /** Target false positive probability, in [1.23e-4, 1). */
  fpp: number;
  /** Most bits per shard (64 per bucket): a multiple of 64, at least 4096; default 2^23. */
  shardBits?: number;
  /** Key encoding; default `'string'`. */
  funnel?: Funnel;
}

const SLOTS = 4;
const LOAD = 0.95;
const MAX_KICKS = 500;
/** Fingerprint bits: a fingerprint is one of 2^16 − 1 values (never 0, the empty slot). */
const FINGERPRINT_BITS = 16;
/** The rate of 16-bit fingerprints compared against 8 full slots (the cuckoo model at load 1). */
export const CUCKOO_MIN_FPP = cuckooFalsePositiveRate(1, FINGERPRINT_BITS);

/**
 * The shape of a cuckoo filter as a sharded shape: `shardBits` is buckets per shard (nb) and
 * `hashes` the 2 buckets a key may live in.
 */
function cuckooShape(options: StoredCuckooFilterOptions): ShardedBloomShape {
  checkPositiveInteger('capacity', options.capacity);
  checkProbability('fpp', options.fpp);
  if (options.fpp < CUCKOO_MIN_FPP) {
    throw new RangeError(
      `fpp must be at least ${CUCKOO_MIN_FPP.toPrecision(3)} for 16-bit fingerprints in 2 buckets of 4, got ${show(options.fpp)}`,
    );
  }
  const limit = checkShardBits('shardBits', options.shardBits ?? DEFAULT_SHARD_BITS);
  if (limit < 4096)
    throw new RangeError(`shardBits must be at least 4096 (64 buckets), got ${limit}`);
  const funnel = checkFunnel(options.funnel ?? 'string');
  const perShard = 2 ** Math.floor(Math.log2(limit / 64));
  // Keys spread binomially over the shards, and a cuckoo shard cannot overflow into another: each
  // shard gets room for its mean share plus 4 standard deviations at a 95% load.
  let shards = Math.ceil(options.capacity / (SLOTS * LOAD * perShard));
  let buckets: number;
  for (;;) {
    const mean = options.capacity / shards;
    const room = Math.ceil((mean + 4 * Math.sqrt(mean)) / (SLOTS * LOAD));
    buckets = Math.max(64, 2 ** Math.ceil(Math.log2(room)));
    if (buckets <= perShard) break;
    shards++;
  }
  return {
    capacity: options.capacity,
    fpp: options.fpp,
    maxShardBits: limit,
    shards,
    shardBits: buckets,
    hashes: 2,
    funnel,
  };
}

/** The create/open descriptor of a cuckoo filter class whose constructor is `make`. */
export function cuckooType<F>(
  make: (ops: StoreOps, name: string, meta: Meta) => F,
): StoredFilterType<F, StoredCuckooFilterOptions> {
  return {
    kind: 'cuckoo',
    shapeOf: cuckooShape,
    optionsOf: (s: ShardedBloomShape) => ({
      capacity: s.capacity,
      fpp: s.fpp,
      shardBits: s.maxShardBits,
      funnel: s.funnel,
    }),
    make,
  };
}

export { altBucket } from './cells.js';

/** Whether a read (header, then 8 slots) holds key j's fingerprint. */
function holds(read: ShardRead, placed: PlacedKeys, j: number): boolean {
  const f = placed.offsets[3 * j]!;
  for (let i = 2; i < read.length; i++) if (read[i] === f) return true;
  return false;
}

export class StoredCuckooFilter<K extends Key = Key>
  extends StoredShardedFilter<K>
  implements AsyncMembershipFilter<K>
{
  private static readonly type = cuckooType(
    (ops, name, meta) => new StoredCuckooFilter(ops, name, meta),
  );

  private readonly hash = new Int32Array(4);

  protected constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta, 'cuckoo');
  }

  /**
   * Creates the filter `name` in `store` for `capacity` keys, or opens it if it exists with the
   * same parameters; the store's mismatch error if it exists with others or is of another kind.
   */
  static create<F extends Funnel = 'string'>(
    store: ShardStore,
    name: string,
    options: StoredCuckooFilterOptions & { funnel?: F },
  ): Promise<StoredCuckooFilter<KeyOf<F>>> {
    const ops = () => new StoreOps(store, `StoredCuckooFilter ${show(name)}`, options);
    return createStored(StoredCuckooFilter.type, ops, name, options) as Promise<
      StoredCuckooFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name` in `store`; the store's not-found error if there is none. */
  static open<K extends Key = Key>(
    store: ShardStore,
    name: string,
    options: StoreOptions = {},
  ): Promise<StoredCuckooFilter<K>> {
    const ops = () => new StoreOps(store, `StoredCuckooFilter ${show(name)}`, options);
    return openStored(StoredCuckooFilter.type, ops, name) as Promise<StoredCuckooFilter<K>>;
  }

  /** Buckets per shard (nb). */
  get buckets(): number {
    return this.shape.shardBits;
  }

  /** Each key's shard and [f, i1, i2]. */
  protected override place(window: readonly K[]): PlacedKeys {
    const n = window.length;
    const shards = new Uint32Array(n);
    const offsets = new Float64Array(3 * n);
    const nb = this.shape.shardBits;
    const h = this.hash;
    for (let i = 0; i < n; i++) {
      hashKeyInto(this.funnel, window[i]!, h);
      shards[i] = multiplyShift(h[1]!, this.shape.shards);
      const f = ((h[2]! >>> 0) % 65535) + 1;
      const i1 = (h[0]! >>> 0) % nb;
      offsets[3 * i] = f;
      offsets[3 * i + 1] = i1;
      offsets[3 * i + 2] = altBucket(i1, f, nb);
    }
    return { count: n, shards, offsets };
  }

  protected writeCells(
    op: WriteOp,
    ref: string,
    epoch: Epoch,
    offsets: Float64Array,
    base: number,
  ): Promise<WriteReply> {
    const f = offsets[base]!;
    const i1 = offsets[base + 1]!;
    const i2 = offsets[base + 2]!;
    if (op === 'remove') return this.store.cuckooRemove(ref, epoch, f, i1, i2);
    return this.store.cuckooAdd(ref, epoch, f, i1, i2, this.shape.shardBits, MAX_KICKS);
  }

  protected readCells(ref: string, offsets: Float64Array, base: number): Promise<ShardRead> {
    return this.store.readBuckets(ref, offsets[base + 1]!, offsets[base + 2]!);
  }

  /**
   * A window's reads as one batch of slots (one command per shard on Redis): each key's 8 slots,
   * bucket i1's 4 then bucket i2's, as `readBuckets` reads them. Adds stay one script per key
   * (a kick moves fingerprints between buckets).
   */
  protected override readBatchOf(placed: PlacedKeys): { cells: ReadCells; batch: CellBatch } {
    const n = placed.count;
    const cells = new Float64Array(8 * n);
    const o = placed.offsets;
    for (let j = 0; j < n; j++) bucketSlots(o[3 * j + 1]!, o[3 * j + 2]!, cells, 8 * j);
    return { cells: 'slots', batch: { count: n, refs: this.refsOf(placed), cells, k: 8 } };
  }

  /** Present iff one of the key's 8 slots holds its fingerprint. */
  protected present(read: ShardRead, placed: PlacedKeys, j: number): boolean {
    return holds(read, placed, j);
  }

  /** Removes one occurrence of `key`; false (and no change) if none is there. */
  remove(key: K): Promise<boolean> {
    return this.removeOne(key);
  }

  /** `remove` of every key, a window at a time (see `removeEach`: each key sent at most once). */
  removeMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]> {
    return this.removeEach(keys, options);
  }

  /**
   * The rate the occupancy implies: the cuckoo filter's one model (`cuckooFalsePositiveRate`, what
   * `CuckooFilter.expectedFpp()` gives) at load α with 16-bit fingerprints,
   * 1 − (1 − 1/65535)^(8α).
   */
  async expectedFpp(): Promise<number> {
    const load = (await this.estimatedCount()) / (this.shape.shards * this.shape.shardBits * SLOTS);
    return cuckooFalsePositiveRate(load, FINGERPRINT_BITS);
  }

  /** Number of fingerprints stored (occupied slots), over all shards. */
  async estimatedCount(): Promise<number> {
    return this.ops.op('estimatedCount', async () => {
      let used = 0;
      await this.eachShard(this.shape.shardBits * SLOTS * 2, (_, id, b) => {
        if (id === 0) return;
        for (let i = 0; i + 1 < b.length; i += 2) if (b[i] !== 0 || b[i + 1] !== 0) used++;
      });
      return used;
    });
  }
}
