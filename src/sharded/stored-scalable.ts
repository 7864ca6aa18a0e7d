/**
 * `StoredScalableBloomFilter`: a scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison,
 * "Scalable Bloom Filters", IPL 101(6), 2007) kept in a shard store (store.ts), for when the number
 * of keys is not known in advance: a chain of sharded Bloom filters (layers) that grows as keys
 * arrive. `RedisScalableBloomFilter` is this filter in Redis.
 *
 * Layer i holds c_i = c0·s^i keys at rate P_i = P0·r^i with P0 = P·(1 − r): c0 = `capacity`, s =
 * `growth` (2 or 4, default 2), r = `ratio` (default 0.9, the paper advises 0.8 to 0.9; RedisBloom
 * uses 0.5), P = `fpp`. The rate of a key never added is at most Σ P_i = P·(1 − r^L) < P for any
 * number of keys (L layers). Parameters match bloomkit's in-memory `ScalableBloomFilter`.
 *
 * Each layer is sharded as layout.ts describes, with one difference that makes the bound hold per
 * shard: shard i of layer l counts the keys it took (incremented by the same atomic
 * `scalableAdd` that sets the bits; in Redis `n` in the hash `bk:s:{name:l:i}:n`) and takes at
 * most its share ⌈c_l / S_l⌉; its b bits are widened until (1 − e^(−k·share/b))^k ≤ P_l.
 * So every key's own shard meets the layer's rate, however unevenly the keys spread.
 *
 * Growth, without a global lock (a store is atomic per shard only: a Redis Cluster cannot run one script over a layer's shards):
 * 1. an add whose shard is full gets -1 from the script and changes nothing;
 * 2. that client seals every shard of the full layer (any later add to it also gets -1), and
 *    only then
 * 3. appends layer l+1 to the metadata with a compare-and-set on the layer count (racing clients
 *    add one layer; the layers are recorded as `layers` and `layer:i` in the metadata).
 * Any client that meets a sealed shard reloads the layers (and finishes the growth if the grower
 * died between 2 and 3). Since sealing comes before publishing, a client reading a shard of what
 * it thinks is the newest layer and finding it not sealed knows no newer layer had a key when it
 * looked; `has` reads that flag alongside the bits (once per distinct shard of the newest layer
 * in a window: every shard of a layer is sealed before the next layer exists), so a client with an
 * old view of the layers never misses a key another client added to a newer one.
 *
 * `add` first asks the older layers (one batch read per layer, in one window) and returns false
 * if one has the key, then adds to the newest layer; `has` asks all layers at once. Each key is
 * hashed once; every layer places it in its own shape.
 *
 * Clear: bumps the generation and drops the layers in the metadata, resets layer 0's shards and
 * deletes the other layers' (unless grown again in the new generation). A client with an older
 * view meets a shard of a newer generation, or a missing one, re-reads the metadata and resends
 * the key into the current layers, so no add acknowledged after a clear lands in a dropped layer.
 *
 * Limits: a layer is at most 2^36 bits; when the next layer cannot be made `add` throws a
 * `FilterFullError` (and `has` keeps working).
 */

import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { checkMetaReply, readFilterMeta } from './epoch.js';
import { checkShardBits, DEFAULT_SHARD_BITS } from './layout.js';
import { checkKind, checkSum, ttlMs } from './meta.js';
import { checkName } from './names.js';
import { StoreOps, type StoreOptions } from './ops.js';
import { ScalableChain } from './scalable-chain.js';
import {
  type RedisLayerInfo,
  type RedisLayerSpec,
  scalableLayerSpec,
  specText,
} from './scalable-layers.js';
import type { Epoch, Meta, MetaFields, ShardStore } from './store.js';
import { createMeta, type StoredCreateOptions } from './stored-open.js';

/**
 * Keys per window of a scalable batch: 512, twice the other filters' (ops.ts). Which layer a key
 * lands in depends on how its window's rounds interleave with the chain's growth; with 512 keys a
 * window, a batch of up to 2,048 keys goes out in one burst, as it always did.
 */
const SCALABLE_WINDOW = 512;

/** Options of {@link StoredScalableBloomFilter.create}. */
export interface StoredScalableBloomFilterOptions extends StoredCreateOptions {
  /** Keys the first layer holds (c0): a positive safe integer. */
  capacity: number;
  /** Target false positive rate P for any number of keys, in (0, 1). */
  fpp: number;
  /** Growth factor s: each layer holds s times the keys of the previous one; 2 (default) or 4. */
  growth?: 2 | 4;
  /** Tightening ratio r in (0, 1): each layer's rate is r times the previous one's; default 0.9. */
  ratio?: number;
  /** Most bits per shard: a multiple of 64 in [64, 2^32]; default 2^23 (1 MiB). */
  shardBits?: number;
  /** Key encoding; default `'string'`. */
  funnel?: Funnel;
}

/** The metadata fields and the parameters to compare of a new scalable filter. */
function scalableFields(options: StoredScalableBloomFilterOptions): {
  fields: MetaFields;
  params: Record<string, string | undefined>;
  ttl: number | undefined;
} {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  checkPositiveInteger('capacity', options.capacity);
  checkProbability('fpp', options.fpp);
  const growth = options.growth ?? 2;
  if (growth !== 2 && growth !== 4) {
    throw new RangeError(`growth must be 2 or 4, got ${show(growth)}`);
  }
  const ratio = options.ratio ?? 0.9;
  checkProbability('ratio', ratio);
  const maxShardBits = checkShardBits('shardBits', options.shardBits ?? DEFAULT_SHARD_BITS);
  const funnel = checkFunnel(options.funnel ?? 'string');
  const ttl = ttlMs(options.ttl);
  const first = scalableLayerSpec(0, options.capacity, options.fpp, growth, ratio, maxShardBits);
  const params: Record<string, string | undefined> = {
    funnel,
    capacity: String(options.capacity),
    fpp: String(options.fpp),
    growth: String(growth),
    ratio: String(ratio),
    shardBits: String(maxShardBits),
    ttl: ttl === undefined ? undefined : String(ttl),
  };
  const fields: Record<string, string> & MetaFields = {
    kind: 'scalable',
    layers: '1',
    'layer:0': specText(first),
  };
  for (const [field, value] of Object.entries(params)) {
    if (value !== undefined) fields[field] = value;
  }
  return { fields, params, ttl };
}

/** The constructor of a scalable filter class, as `createScalable` and `openScalable` take it. */
export type ScalableMaker<F> = (ops: StoreOps, name: string, meta: Meta) => F;

/**
 * `create` of a scalable filter in `ops`' store: every option is checked before anything is
 * written; then the filter `name` is created, or opened if it exists with the same parameters.
 */
export async function createScalable<F extends StoredScalableBloomFilter>(
  make: ScalableMaker<F>,
  ops: () => StoreOps,
  name: string,
  options: StoredScalableBloomFilterOptions,
): Promise<F> {
  checkName(name);
  const { fields, params, ttl } = scalableFields(options);
  const run = ops();
  return run.op('create', async () => {
    await run.store.checkDurability(run.label, ttl !== undefined);
    const meta = await createMeta(run, name, fields, params, ttl);
    return readyScalable(make(run, name, meta), meta);
  });
}

/** `open` of a scalable filter: the existing filter `name`; the store's not-found error if none. */
export async function openScalable<F extends StoredScalableBloomFilter>(
  make: ScalableMaker<F>,
  ops: () => StoreOps,
  name: string,
): Promise<F> {
  checkName(name);
  const run = ops();
  return run.op('open', async () => {
    const meta = await readFilterMeta(run.store, name);
    checkKind(run.store, name, meta, 'scalable');
    await run.store.checkDurability(run.label, meta.ttl !== undefined);
    return readyScalable(make(run, name, meta), meta);
  });
}

/** Creates the first layer's shards if a creator has not finished. */
async function readyScalable<F extends StoredScalableBloomFilter>(
  filter: F,
  meta: Meta,
): Promise<F> {
  checkSum(filter.store, filter.name, meta);
  if (meta.ready !== '1') await filter.initFirst();
  return filter;
}

export class StoredScalableBloomFilter<K extends Key = Key>
  extends ScalableChain<K>
  implements AsyncMembershipFilter<K>
{
  protected constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta);
  }

  /**
   * Creates the filter `name` in `store`, or opens it if it exists with the same parameters; the
   * store's mismatch error if it exists with others or is of another kind. Every option is
   * checked before anything is written.
   */
  static create<F extends Funnel = 'string'>(
    store: ShardStore,
    name: string,
    options: StoredScalableBloomFilterOptions & { funnel?: F },
  ): Promise<StoredScalableBloomFilter<KeyOf<F>>> {
    const ops = () => new StoreOps(store, `StoredScalableBloomFilter ${show(name)}`, options);
    const make = (o: StoreOps, n: string, m: Meta) =>
      new StoredScalableBloomFilter<KeyOf<F>>(o, n, m);
    return createScalable(make, ops, name, options);
  }

  /** Opens the existing filter `name` in `store`; the store's not-found error if there is none. */
  static open<K extends Key = Key>(
    store: ShardStore,
    name: string,
    options: StoreOptions = {},
  ): Promise<StoredScalableBloomFilter<K>> {
    const ops = () => new StoreOps(store, `StoredScalableBloomFilter ${show(name)}`, options);
    const make = (o: StoreOps, n: string, m: Meta) => new StoredScalableBloomFilter<K>(o, n, m);
    return openScalable(make, ops, name);
  }

  /** Creates (or resets) the first layer's shards and marks the filter ready. */
  initFirst(): Promise<void> {
    return this.initLayer(this.chain[0]!);
  }

  /** The layers this client knows of (reloaded whenever it meets a sealed or newer shard). */
  get layers(): readonly RedisLayerSpec[] {
    return this.chain.map(({ capacity, fpp, shards, bits, hashes, share }) => ({
      capacity,
      fpp,
      shards,
      bits,
      hashes,
      share,
    }));
  }

  /** The filter's id and the generation this object last saw (see store.ts). */
  get generation(): Epoch {
    return this.epoch;
  }

  /** Reloads the layers from the metadata. */
  async refresh(): Promise<void> {
    await this.ops.op('refresh', () => this.reload());
  }

  /** Adds `key`; true iff it was certainly new (no layer had it and its bits were not all set). */
  add(key: K): Promise<boolean> {
    let added = false;
    return this.ops
      .op('add', (ctx) => this.addWindow([key], 0, new Uint8Array(1), (_, a) => (added = a), ctx))
      .then(() => added);
  }

  /** False if `key` was certainly never added; true if it probably was. */
  has(key: K): Promise<boolean> {
    let present = false;
    return this.ops
      .op('has', () => this.hasWindow([key], 0, new Uint8Array(1), (_, p) => (present = p)))
      .then(() => present);
  }

  /**
   * Adds every key, a window at a time: the older layers are asked first, then the keys no layer
   * has go into the newest; keys that meet a full shard are resent after the layer grows.
   * Resolves to how many keys were new.
   */
  async addMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<number> {
    let added = 0;
    await this.ops.batch(
      'addMany',
      keys,
      options,
      (window, offset, status, ctx) =>
        this.addWindow(window, offset, status, (_, a) => a && added++, ctx),
      SCALABLE_WINDOW,
    );
    return added;
  }

  /** Like {@link addMany}, with whether each key was new, in order. */
  async addEach(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.ops.batch(
      'addEach',
      keys,
      options,
      (window, offset, status, ctx) =>
        this.addWindow(window, offset, status, (j, a) => (out[offset + j] = a), ctx),
      SCALABLE_WINDOW,
    );
    return out;
  }

  /** `has` of every key, in order, a window at a time. */
  async hasMany(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.ops.batch(
      'hasMany',
      keys,
      options,
      (window, offset, status) =>
        this.hasWindow(window, offset, status, (j, p) => (out[offset + j] = p)),
      SCALABLE_WINDOW,
    );
    return out;
  }

  /** Estimated number of distinct keys: the sum of the layers' key counts. */
  async estimatedCount(): Promise<number> {
    let total = 0;
    for (const layer of await this.info()) total += layer.count;
    return total;
  }

  /** The layers with their key counts, read from Redis. */
  async info(): Promise<RedisLayerInfo[]> {
    return this.ops.op('info', async () => {
      await this.reload();
      const out: RedisLayerInfo[] = [];
      for (const layer of this.chain) {
        let count = 0;
        let sealed = false;
        const states = await this.ops.all(layer.shards, (i) =>
          this.store.layerState(layer.refs.get(i)),
        );
        for (const state of states) {
          count += state.count;
          if (state.sealed) sealed = true;
        }
        const { capacity, fpp, shards, bits, hashes, share } = layer;
        out.push({ capacity, fpp, shards, bits, hashes, share, count, sealed });
      }
      return out;
    });
  }

  /**
   * Forgets every key: a new generation with one layer in the metadata, layer 0's shards reset,
   * the other layers' deleted (see the class comment).
   */
  async clear(): Promise<void> {
    await this.ops.op('clear', async () => {
      await this.reload();
      const known = this.chain;
      const update = await this.store.newGeneration(this.name, this.epoch.id, true);
      checkMetaReply(this.store, this.name, update.code);
      this.applyMeta(update.meta!);
      await this.initLayer(this.chain[0]!);
      const epoch = this.epoch;
      for (const layer of known.slice(1)) {
        await this.ops.all(layer.shards, (i) => this.store.dropShard(layer.refs.get(i), epoch));
      }
    });
  }

  /** Deletes the filter: the metadata first, then every layer's keys. */
  async destroy(): Promise<void> {
    await this.ops.op('destroy', async () => {
      await this.reload();
      await this.store.deleteMeta(this.name);
      const refs: string[] = [];
      for (const layer of this.chain) {
        for (let i = 0; i < layer.shards; i++) refs.push(layer.refs.get(i));
      }
      await this.ops.deleteShards(refs);
    });
  }
}
