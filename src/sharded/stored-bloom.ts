/**
 * `StoredBloomFilter`: a Bloom filter kept in a {@link ShardStore} (store.ts), shared by every
 * process that opens it by name; `RedisBloomFilter` is this filter in Redis.
 *
 * Guarantee: `has` is true for every key whose `add` was acknowledged, from any client, for as long
 * as the store keeps the filter (the store's errors say when it did not). For a key never added the
 * rate is that of the blocked layout (layout.ts): about the requested fpp at `capacity` keys.
 *
 * Layout: S shards of b ≤ `shardBits` bits (default 2^23 = 1 MiB), chosen by the key's hash; all k
 * positions of a key are inside its shard, so `add` is one atomic `setBits` of the store (its old
 * values say whether the key was new, so two clients adding the same key never both see it as
 * new) and `has` one `readBits` (header and bits in one read).
 *
 * `addMany`/`hasMany` take any iterable or async iterable and send a window of keys at a time
 * (ops.ts). `toBytes()` writes the native format of `ShardedBloomFilter` (same layout, same
 * bytes), and `fromBytes()` ORs such bytes into a store: build offline, serve from the store;
 * back up to a file.
 */

import { show } from '../errors.js';
import { type Saturation, saturationAt } from '../filters/base.js';
import type { AsyncMembershipFilter, KeyOf } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import { estimateCount, expectedFpp } from '../math.js';
import { lostShard } from './epoch.js';
import type { PlacedKeys } from './layout.js';
import { paramFields, shapeFields, ttlMs } from './meta.js';
import { checkName } from './names.js';
import { StoreOps, type StoreOptions } from './ops.js';
import {
  ShardedBloomFilter,
  type ShardedBloomOptions,
  type ShardedBloomShape,
  shardedShape,
} from './sharded-bloom.js';
import { decodeShardedParts, encodeSharded } from './sharded-codec.js';
import {
  type BatchCells,
  type CellBatch,
  type Epoch,
  type Meta,
  REPLY,
  type ShardRead,
  type ShardStore,
} from './store.js';
import { StoredShardedFilter, type WriteOp } from './stored-filter.js';
import {
  checkDerived,
  createMeta,
  createStored,
  openStored,
  ready,
  type StoredCreateOptions,
  type StoredFilterType,
} from './stored-open.js';

/** Options of {@link StoredBloomFilter.create}. */
export interface StoredBloomFilterOptions extends ShardedBloomOptions, StoredCreateOptions {}

/** Options of {@link StoredBloomFilter.fromBytes}. */
export interface StoredImportOptions extends StoreOptions {
  /** TTL (seconds) when the import creates the filter; must match an existing filter's. */
  ttl?: number;
}

/** The create/open descriptor of a Bloom filter class whose constructor is `make`. */
export function bloomType<F>(
  make: (ops: StoreOps, name: string, meta: Meta) => F,
): StoredFilterType<F, ShardedBloomOptions> {
  return {
    kind: 'bloom',
    shapeOf: shardedShape,
    optionsOf: (s: ShardedBloomShape) => ({
      capacity: s.capacity,
      fpp: s.fpp,
      shardBits: s.maxShardBits,
      funnel: s.funnel,
    }),
    make,
  };
}

export class StoredBloomFilter<K extends Key = Key>
  extends StoredShardedFilter<K>
  implements AsyncMembershipFilter<K>
{
  private static readonly type = bloomType(
    (ops, name, meta) => new StoredBloomFilter(ops, name, meta),
  );

  protected constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta, 'bloom');
  }

  /**
   * Creates the filter `name` in `store` sized for (capacity, fpp), or opens it if it exists with
   * the same parameters (clients racing to create it all get the same filter). Rejects with the
   * store's mismatch error if it exists with other parameters or is of another kind. Every option
   * is checked before anything is written.
   */
  static create<F extends Funnel = 'string'>(
    store: ShardStore,
    name: string,
    options: StoredBloomFilterOptions & { funnel?: F },
  ): Promise<StoredBloomFilter<KeyOf<F>>> {
    const ops = () => new StoreOps(store, `StoredBloomFilter ${show(name)}`, options);
    return createStored(StoredBloomFilter.type, ops, name, options) as Promise<
      StoredBloomFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name` in `store`; the store's not-found error if there is none. */
  static open<K extends Key = Key>(
    store: ShardStore,
    name: string,
    options: StoreOptions = {},
  ): Promise<StoredBloomFilter<K>> {
    const ops = () => new StoreOps(store, `StoredBloomFilter ${show(name)}`, options);
    return openStored(StoredBloomFilter.type, ops, name) as Promise<StoredBloomFilter<K>>;
  }

  /**
   * Loads native-format bytes of a `ShardedBloomFilter` (or of `toBytes()`) into the filter
   * `name` of `store`: creates it with the bytes' parameters if it does not exist, and ORs the bits
   * into every shard (a union: nothing already there is lost). Loading into a new filter reproduces
   * the source exactly. Each shard is merged atomically, the whole is not.
   */
  static async fromBytes(
    store: ShardStore,
    name: string,
    bytes: Uint8Array,
    options: StoredImportOptions = {},
  ): Promise<StoredBloomFilter> {
    checkName(name);
    const ops = new StoreOps(store, `StoredBloomFilter ${show(name)}`, options);
    return importBloom(StoredBloomFilter.type, ops, name, bytes, options.ttl);
  }

  /** Total bits, S·b. */
  get bitSize(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  protected writeCells(
    _op: WriteOp,
    ref: string,
    epoch: Epoch,
    offsets: Float64Array,
    base: number,
    first: boolean,
  ) {
    return this.store.setBits(ref, epoch, offsets.subarray(base, base + this.shape.hashes), first);
  }

  protected readCells(ref: string, offsets: Float64Array, base: number): Promise<ShardRead> {
    return this.store.readBits(ref, offsets.subarray(base, base + this.shape.hashes));
  }

  /** The window's bits, k per key as placed. */
  protected override batchOf(placed: PlacedKeys): { cells: BatchCells; batch: CellBatch } {
    const batch = {
      count: placed.count,
      refs: this.refsOf(placed),
      cells: placed.offsets,
      k: this.shape.hashes,
    };
    return { cells: 'bits', batch };
  }

  /** Present iff every bit of the read (header first) is 1. */
  protected present(read: ShardRead): boolean {
    for (let i = 2; i < read.length; i++) if (read[i] === 0) return false;
    return true;
  }

  /** Number of bits set, over all shards. */
  async bitCount(): Promise<number> {
    return this.ops.op('bitCount', async () => {
      const counts = await this.ops.all(this.shape.shards, (i) =>
        this.store.countBits(this.refs.get(i)),
      );
      let total = 0;
      for (const c of counts) total += c;
      return total;
    });
  }

  /** −(m/k)·ln(1 − bitCount/m): the number of distinct keys the bits imply (Guava's estimator). */
  async estimatedCount(): Promise<number> {
    return estimateCount(await this.bitCount(), this.bitSize, this.hashes);
  }

  /** (bitCount/m)^k: the rate the bits set now imply (Guava's `expectedFpp`). */
  async expectedFpp(): Promise<number> {
    return expectedFpp(await this.bitCount(), this.bitSize, this.hashes);
  }

  /**
   * How far past its design the filter is (`FilterBase.saturation` of the in-memory filters): the
   * capacity and fpp it was created with, the rate its bits imply now and their ratio, saturated
   * past 10. The same figure as `ShardedBloomFilter.saturation()` of a local copy, and what
   * `bloomkit redis add` warns with.
   */
  async saturation(): Promise<Saturation> {
    const { capacity, fpp } = this.shape;
    return saturationAt({ capacity, fpp }, await this.expectedFpp());
  }

  /**
   * A local copy with the same layout and bits (read shard by shard: every key added before the
   * call started is in it; adds made meanwhile may or may not be). The store's lost error if a
   * shard is missing.
   */
  async toLocal(): Promise<ShardedBloomFilter<K>> {
    const local = new ShardedBloomFilter<K>(this.shape);
    await this.ops.op('export', async () => {
      for (let i = 0; i < this.shape.shards; i++) {
        const ref = this.refs.get(i);
        const header = await this.store.readShard(ref, local.shard(i));
        if (header.id === 0 || String(header.id) !== this.epoch.id) {
          throw await lostShard(this.store, this.name, this.epoch, ref);
        }
      }
    });
    return local;
  }

  /** bloomkit's native format of the `ShardedBloomFilter` with the same bits (see toLocal). */
  async toBytes(): Promise<Uint8Array> {
    return encodeSharded(await this.toLocal());
  }
}

/**
 * The import of `fromBytes`, for any Bloom filter class `type` makes: creates the filter with the
 * bytes' parameters if it does not exist (or checks them against the existing one), then ORs each
 * non-zero shard in.
 */
export async function importBloom<F extends StoredBloomFilter>(
  type: StoredFilterType<F, ShardedBloomOptions>,
  ops: StoreOps,
  name: string,
  bytes: Uint8Array,
  ttlOption: number | undefined,
): Promise<F> {
  const { shape, payload } = decodeShardedParts(bytes);
  const ttl = ttlMs(ttlOption);
  return ops.op('import', async () => {
    await ops.store.checkDurability(ops.label, ttl !== undefined);
    const fields = shapeFields('bloom', shape, ttl);
    const params = {
      ...paramFields(shape, ttl),
      shards: fields.shards,
      bits: fields.bits,
      hashes: fields.hashes,
    };
    const meta = await createMeta(ops, name, fields, params, ttl);
    checkDerived(type, ops, name, meta);
    const filter = await ready(type, ops, name, meta);
    const shardBytes = shape.shardBits / 8;
    const epoch = filter.generation;
    for (let i = 0; i < shape.shards; i++) {
      const part = payload.subarray(i * shardBytes, (i + 1) * shardBytes);
      if (isZero(part)) continue;
      const ref = filter.shardKey(i);
      const r = await ops.store.orShard(ref, epoch, part);
      if (r === REPLY.lost || r === REPLY.replaced || r === REPLY.cleared) {
        throw await lostShard(ops.store, name, epoch, ref);
      }
    }
    return filter;
  });
}

function isZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}
