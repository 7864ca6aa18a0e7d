/**
 * `RedisScalableBloomFilter`: a scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison,
 * "Scalable Bloom Filters", IPL 101(6), 2007) in plain Redis, for when the number of keys is not
 * known in advance: a chain of sharded Bloom filters (layers) that grows as keys arrive.
 *
 * Layer i holds c_i = c0·s^i keys at rate P_i = P0·r^i with P0 = P·(1 − r): c0 = `capacity`, s =
 * `growth` (2 or 4, default 2), r = `ratio` (default 0.9, the paper advises 0.8 to 0.9; RedisBloom
 * uses 0.5), P = `fpp`. The rate of a key never added is at most Σ P_i = P·(1 − r^L) < P for any
 * number of keys (L layers). Parameters match bloomkit's in-memory `ScalableBloomFilter`.
 *
 * Each layer is sharded as layout.ts describes (keys `bk:s:{name:l:i}`, each with the 8-byte
 * header of scripts.ts: cells from bit 64), with one difference
 * that makes the bound hold per shard: shard i of layer l counts the keys it took (`n` in the hash
 * `bk:s:{name:l:i}:n`, incremented by the same Lua script that sets the bits, atomically) and
 * takes at most its share ⌈c_l / S_l⌉; its b bits are widened until (1 − e^(−k·share/b))^k ≤ P_l.
 * So every key's own shard meets the layer's rate, however unevenly the keys spread.
 *
 * Growth, without a global lock (a cluster cannot run one script over a layer's shards):
 * 1. an add whose shard is full gets -1 from the script and changes nothing;
 * 2. that client seals every shard of the full layer (`sealed` in each count hash: any later add
 *    to it also gets -1), and only then
 * 3. appends layer l+1 to the metadata with a compare-and-set on the layer count (racing clients
 *    add one layer; the layers are recorded as `layers` and `layer:i` in the metadata).
 * Any client that meets a sealed shard reloads the layers (and finishes the growth if the grower
 * died between 2 and 3). Since sealing comes before publishing, a client reading a shard of what
 * it thinks is the newest layer and finding it not sealed knows no newer layer had a key when it
 * looked; `has` reads that flag alongside the bits, so a client with an old view of the layers
 * never misses a key another client added to a newer one.
 *
 * `add` first asks the older layers (one BITFIELD_RO each, pipelined) and returns false if one has
 * the key, then adds to the newest layer; `has` asks all layers at once. Each key is hashed once;
 * every layer places it in its own shape.
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
import { checkShardBits, DEFAULT_SHARD_BITS } from '../sharded/layout.js';
import {
  type RedisLayerInfo,
  type RedisLayerSpec,
  scalableLayerSpec,
  specText,
} from '../sharded/scalable-layers.js';
import type { RedisConnection } from './client.js';
import { checkName } from './keys.js';
import { createMeta } from './open.js';
import { ScalableChain } from './scalable-chain.js';
import { CLEAR_META, DROP_SHARD } from './scripts.js';
import { checkMetaReply, type Epoch, readFilterMeta } from './sharded-filter.js';
import {
  checkKind,
  type Meta,
  type MetaFields,
  type RedisFilterConnectionOptions,
  RedisStore,
  toMeta,
  ttlMs,
} from './store.js';

/** Options of {@link RedisScalableBloomFilter.create}. */
export interface RedisScalableBloomFilterOptions extends RedisFilterConnectionOptions {
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
  /** Time to live in seconds: the filter and all its keys expire together. Default: never. */
  ttl?: number;
}

export class RedisScalableBloomFilter<K extends Key = Key>
  extends ScalableChain<K>
  implements AsyncMembershipFilter<K>
{
  private constructor(store: RedisStore, name: string, meta: Meta) {
    super(store, name, meta);
  }

  /**
   * Creates the filter `name`, or opens it if it exists with the same parameters;
   * `RedisFilterMismatchError` if it exists with others or is of another kind. Every option is
   * checked before anything is written.
   */
  static async create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisScalableBloomFilterOptions & { funnel?: F },
  ): Promise<RedisScalableBloomFilter<KeyOf<F>>> {
    checkName(name);
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
    const store = new RedisStore(client, `RedisScalableBloomFilter ${show(name)}`, options);
    return store.op('create', async () => {
      await store.checkEviction(ttl !== undefined);
      const meta = await createMeta(store, name, fields, params, ttl);
      return RedisScalableBloomFilter.ready<KeyOf<F>>(store, name, meta);
    });
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static async open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisScalableBloomFilter<K>> {
    checkName(name);
    const store = new RedisStore(client, `RedisScalableBloomFilter ${show(name)}`, options);
    return store.op('open', async () => {
      const meta = await readFilterMeta(store, name);
      checkKind(name, meta, 'scalable');
      await store.checkEviction(meta.ttl !== undefined);
      return RedisScalableBloomFilter.ready<K>(store, name, meta);
    });
  }

  private static async ready<K extends Key>(
    store: RedisStore,
    name: string,
    meta: Meta,
  ): Promise<RedisScalableBloomFilter<K>> {
    const filter = new RedisScalableBloomFilter<K>(store, name, meta);
    if (meta.ready !== '1') await filter.initLayer(filter.chain[0]!);
    return filter;
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

  /** The filter's id and the generation this object last saw (see scripts.ts). */
  get generation(): Epoch {
    return this.epoch;
  }

  /** Reloads the layers from the metadata. */
  async refresh(): Promise<void> {
    await this.store.op('refresh', () => this.reload());
  }

  /** Adds `key`; true iff it was certainly new (no layer had it and its bits were not all set). */
  add(key: K): Promise<boolean> {
    let added = false;
    return this.store
      .op('add', (ctx) => this.addWindow([key], 0, new Uint8Array(1), (_, a) => (added = a), ctx))
      .then(() => added);
  }

  /** False if `key` was certainly never added; true if it probably was. */
  has(key: K): Promise<boolean> {
    let present = false;
    return this.store
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
    await this.store.batch('addMany', keys, options, (window, offset, status, ctx) =>
      this.addWindow(window, offset, status, (_, a) => a && added++, ctx),
    );
    return added;
  }

  /** Like {@link addMany}, with whether each key was new, in order. */
  async addEach(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.store.batch('addEach', keys, options, (window, offset, status, ctx) =>
      this.addWindow(window, offset, status, (j, a) => (out[offset + j] = a), ctx),
    );
    return out;
  }

  /** `has` of every key, in order, a window at a time. */
  async hasMany(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.store.batch('hasMany', keys, options, (window, offset, status) =>
      this.hasWindow(window, offset, status, (j, p) => (out[offset + j] = p)),
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
    return this.store.op('info', async () => {
      await this.reload();
      const out: RedisLayerInfo[] = [];
      for (const layer of this.chain) {
        let count = 0;
        let sealed = false;
        const replies = await this.store.all(layer.shards, (i) =>
          this.store.send(layer.states.get(i), true, ['HMGET', layer.states.get(i), 'n', 'sealed']),
        );
        for (const r of replies as unknown[][]) {
          count += Number(r[0] ?? 0);
          if (r[1] !== null && r[1] !== undefined) sealed = true;
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
    await this.store.op('clear', async () => {
      await this.reload();
      const known = this.chain;
      const reply = (await this.store.eval(
        CLEAR_META,
        [this.metaKey()],
        [this.epoch.id, '1'],
      )) as unknown[];
      checkMetaReply(this.name, Number(reply[0]));
      this.applyMeta(toMeta(reply[1]));
      await this.initLayer(this.chain[0]!);
      const { id, gen } = this.epoch;
      for (const layer of known.slice(1)) {
        await this.store.all(layer.shards, (i) =>
          this.store.eval(DROP_SHARD, [layer.keys.get(i), layer.states.get(i)], [id, String(gen)]),
        );
      }
    });
  }

  /** Deletes the filter: the metadata first, then every layer's keys. */
  async destroy(): Promise<void> {
    await this.store.op('destroy', async () => {
      await this.reload();
      await this.store.del([this.metaKey()]);
      const keys: string[] = [];
      for (const layer of this.chain) {
        for (let i = 0; i < layer.shards; i++) keys.push(layer.keys.get(i), layer.states.get(i));
      }
      await this.store.del(keys);
    });
  }
}
