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
 * Each layer is sharded as layout.ts describes (keys `bk:s:{name:l:i}`), with one difference
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
 * Limits: a layer is at most 2^36 bits; when the next layer cannot be made `add` throws a
 * `FilterFullError` (and `has` keeps working).
 */

import {
  checkPositiveInteger,
  checkProbability,
  FilterFullError,
  FormatError,
  show,
} from '../errors.js';
import { hashKeyInto } from '../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { RedisFilterNotFoundError } from './errors.js';
import { checkName, layerShardKey, layerStateKey, metaKey, ShardKeys } from './keys.js';
import { checkShardBits, DEFAULT_SHARD_BITS, Locator } from '../sharded/layout.js';
import {
  parseSpec,
  type RedisLayerInfo,
  type RedisLayerSpec,
  scalableLayerSpec,
  specText,
} from '../sharded/scalable-layers.js';
import { SCALABLE_ADD, SCALABLE_GROW, SCALABLE_RESET, SCALABLE_SEAL } from './scripts.js';
import { metaFpp, metaFunnel, readExpiry } from './shape.js';
import {
  allSet,
  createFilterMeta,
  openFilterMeta,
  readBitsArgs,
  readFilterMeta,
} from './sharded-filter.js';
import {
  type Meta,
  type MetaFields,
  metaInt,
  type RedisConnection,
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

/** A layer with what it takes to address it. */
interface Layer extends RedisLayerSpec {
  readonly index: number;
  readonly locator: Locator;
  readonly keys: ShardKeys;
  readonly states: ShardKeys;
  readonly shareArg: string;
}

export class RedisScalableBloomFilter {
  readonly name: string;
  /** Keys the first layer holds (c0). */
  readonly capacity: number;
  /** Target rate P. */
  readonly fpp: number;
  readonly growth: 2 | 4;
  readonly ratio: number;
  /** Shard size limit in bits. */
  readonly maxShardBits: number;
  readonly funnel: Funnel;
  /** Time to live in ms as created, or `undefined`. */
  readonly ttlMs: number | undefined;
  /** When the filter expires (ms since the epoch, server clock), or `undefined`. */
  readonly expireAt: number | undefined;
  private readonly store: RedisStore;
  private readonly expireArg: string;
  private chain: Layer[] = [];

  private constructor(store: RedisStore, name: string, meta: Meta) {
    this.store = store;
    this.name = name;
    this.capacity = metaInt(meta, 'capacity', name);
    this.fpp = metaFpp(meta, name);
    const growth = metaInt(meta, 'growth', name);
    if (growth !== 2 && growth !== 4) {
      throw new FormatError(`Redis filter ${show(name)} has a bad growth ${show(meta.growth)}`);
    }
    this.growth = growth;
    this.ratio = Number(meta.ratio);
    if (!(this.ratio > 0 && this.ratio < 1)) {
      throw new FormatError(`Redis filter ${show(name)} has a bad ratio ${show(meta.ratio)}`);
    }
    this.maxShardBits = metaInt(meta, 'shardBits', name);
    this.funnel = metaFunnel(meta, name);
    const { ttl, expireAt } = readExpiry(name, meta);
    this.ttlMs = ttl;
    this.expireAt = expireAt;
    this.expireArg = expireAt === undefined ? '' : String(expireAt);
    this.applyMeta(meta);
  }

  /** Takes the layers from (newer) metadata; layers already known are kept. */
  private applyMeta(meta: Meta): void {
    const count = metaInt(meta, 'layers', this.name);
    if (count < 1) throw new FormatError(`Redis filter ${show(this.name)} has no layers`);
    const chain = this.chain.slice(0, count);
    for (let i = chain.length; i < count; i++) {
      const spec = parseSpec(this.name, i, meta[`layer:${i}`]);
      const name = this.name;
      chain.push({
        ...spec,
        index: i,
        locator: new Locator(
          { shards: spec.shards, shardBits: spec.bits, hashes: spec.hashes },
          this.funnel,
        ),
        keys: new ShardKeys((j) => layerShardKey(name, i, j), spec.shards),
        states: new ShardKeys((j) => layerStateKey(name, i, j), spec.shards),
        shareArg: String(spec.share),
      });
    }
    this.chain = chain;
  }

  /**
   * Creates the filter `name`, or opens it if it exists with the same parameters;
   * `RedisFilterMismatchError` if it exists with others or is of another kind.
   */
  static async create(
    client: RedisConnection,
    name: string,
    options: RedisScalableBloomFilterOptions,
  ): Promise<RedisScalableBloomFilter> {
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
      v: '1',
      kind: 'scalable',
      layers: '1',
      'layer:0': specText(first),
    };
    for (const [field, value] of Object.entries(params))
      if (value !== undefined) fields[field] = value;
    const store = new RedisStore(client, `RedisScalableBloomFilter ${show(name)}`, options);
    const meta = await createFilterMeta(store, 'create', name, fields, params, ttl);
    return new RedisScalableBloomFilter(store, name, meta);
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static async open(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisScalableBloomFilter> {
    checkName(name);
    const store = new RedisStore(client, `RedisScalableBloomFilter ${show(name)}`, options);
    return new RedisScalableBloomFilter(store, name, await openFilterMeta(store, name, 'scalable'));
  }

  /** The layers this client knows of (reloaded whenever it meets a sealed shard). */
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

  /** Reloads the layers from the metadata. */
  async refresh(): Promise<void> {
    await this.store.op('refresh', () => this.reload());
  }

  private async reload(): Promise<void> {
    this.applyMeta(await readFilterMeta(this.store, this.name));
  }

  private hash(key: Key): Int32Array {
    const h = new Int32Array(4);
    hashKeyInto(this.funnel, key, h);
    return h;
  }

  private read(layer: Layer, h: Int32Array): Promise<unknown> {
    const shard = layer.locator.place(h);
    const offsets = layer.locator.offsets;
    const key = layer.keys.get(shard);
    return this.store.send(key, true, readBitsArgs(key, offsets, 0, layer.hashes));
  }

  /** Whether the shard of `h` in `layer` is sealed. */
  private sealed(layer: Layer, h: Int32Array): Promise<unknown> {
    const state = layer.states.get(layer.locator.place(h));
    return this.store.send(state, true, ['HGET', state, 'sealed']);
  }

  private addTo(layer: Layer, h: Int32Array): Promise<unknown> {
    const shard = layer.locator.place(h);
    const offsets = layer.locator.offsets;
    const args = new Array<string>(2 + layer.hashes);
    args[0] = layer.shareArg;
    args[1] = this.expireArg;
    for (let j = 0; j < layer.hashes; j++) args[j + 2] = String(offsets[j]);
    return this.store.eval(SCALABLE_ADD, [layer.keys.get(shard), layer.states.get(shard)], args);
  }

  /**
   * Seals layer `index` and appends the next one (see the class comment); a no-op if this client
   * already knows a newer layer. `FilterFullError` if the next layer cannot be made.
   */
  private async grow(index: number): Promise<void> {
    if (this.chain.length - 1 > index) return;
    const layer = this.chain[index]!;
    let next: RedisLayerSpec;
    try {
      next = scalableLayerSpec(
        index + 1,
        this.capacity,
        this.fpp,
        this.growth,
        this.ratio,
        this.maxShardBits,
      );
    } catch (err) {
      throw new FilterFullError(
        `RedisScalableBloomFilter ${show(this.name)} cannot add layer ${index + 1}: ${(err as Error).message}`,
      );
    }
    await this.store.pipelined(
      layer.shards,
      (i) => this.store.eval(SCALABLE_SEAL, [layer.states.get(i)], [this.expireArg]),
      () => undefined,
    );
    const reply = await this.store.eval(
      SCALABLE_GROW,
      [metaKey(this.name)],
      [String(index + 1), specText(next)],
    );
    if (!Array.isArray(reply) || Number(reply[0]) !== 1) {
      throw new RedisFilterNotFoundError(`no Redis filter named ${show(this.name)}`);
    }
    this.applyMeta(toMeta(reply[1]));
  }

  private async hasHashed(h: Int32Array): Promise<boolean> {
    for (;;) {
      const chain = this.chain;
      const last = chain[chain.length - 1]!;
      const [sealed, ...bits] = await Promise.all([
        this.sealed(last, h),
        ...chain.map((l) => this.read(l, h)),
      ]);
      if (bits.some(allSet)) return true;
      if (sealed === null || sealed === undefined) return false;
      // The newest layer we know is sealed: a newer one may hold the key.
      await this.reload();
      if (this.chain.length === chain.length) return false; // none was published yet
    }
  }

  private async addHashed(h: Int32Array): Promise<boolean> {
    for (;;) {
      const chain = this.chain;
      const last = chain[chain.length - 1]!;
      if (chain.length > 1) {
        const old = await Promise.all(chain.slice(0, -1).map((l) => this.read(l, h)));
        if (old.some(allSet)) return false;
      }
      const r = Number(await this.addTo(last, h));
      if (r !== -1) return r === 1;
      await this.grow(last.index);
    }
  }

  /** Adds `key`; true iff it was certainly new (no layer had it and its bits were not all set). */
  async add(key: Key): Promise<boolean> {
    const h = this.hash(key);
    return this.store.op('add', () => this.addHashed(h));
  }

  /** False if `key` was certainly never added; true if it probably was. */
  async has(key: Key): Promise<boolean> {
    const h = this.hash(key);
    return this.store.op('has', () => this.hasHashed(h));
  }

  private hashAll(keys: Iterable<Key>): Int32Array[] {
    const list = Array.isArray(keys) ? (keys as Key[]) : Array.from(keys);
    return list.map((key) => this.hash(key));
  }

  /** `has` for every key, pipelined (all layers of all keys at once). */
  async hasMany(keys: Iterable<Key>): Promise<boolean[]> {
    const hashes = this.hashAll(keys);
    const out = new Array<boolean>(hashes.length).fill(false);
    await this.store.op('hasMany', async () => {
      let pending = hashes.map((_, i) => i);
      while (pending.length > 0) {
        const chain = this.chain;
        const last = chain[chain.length - 1]!;
        const recheck: number[] = [];
        await this.store.pipelined(
          pending.length,
          (j) => {
            const h = hashes[pending[j]!]!;
            return Promise.all([this.sealed(last, h), ...chain.map((l) => this.read(l, h))]);
          },
          (start, replies) => {
            for (let j = 0; j < replies.length; j++) {
              const [sealed, ...bits] = replies[j] as unknown[];
              const i = pending[start + j]!;
              if (bits.some(allSet)) out[i] = true;
              else if (sealed !== null && sealed !== undefined) recheck.push(i);
            }
          },
        );
        if (recheck.length === 0) break;
        await this.reload();
        if (this.chain.length === chain.length) break;
        pending = recheck;
      }
    });
    return out;
  }

  /**
   * Adds every key, pipelined: first the older layers are asked about every key, then the keys no
   * layer has go into the newest layer; keys that meet a full shard are retried after the layer
   * grows. Result i says whether key i was new (a key repeated in the batch is new at most once).
   */
  async addMany(keys: Iterable<Key>): Promise<boolean[]> {
    const hashes = this.hashAll(keys);
    const out = new Array<boolean>(hashes.length).fill(false);
    await this.store.op('addMany', async () => {
      let pending = hashes.map((_, i) => i);
      while (pending.length > 0) {
        const chain = this.chain;
        const last = chain[chain.length - 1]!;
        let absent = pending;
        if (chain.length > 1) {
          const older = chain.slice(0, -1);
          const found = new Uint8Array(pending.length);
          await this.store.pipelined(
            pending.length,
            (j) => Promise.all(older.map((l) => this.read(l, hashes[pending[j]!]!))),
            (start, replies) => {
              for (let j = 0; j < replies.length; j++) {
                if ((replies[j] as unknown[]).some(allSet)) found[start + j] = 1;
              }
            },
          );
          absent = pending.filter((_, j) => found[j] === 0);
        }
        const full: number[] = [];
        await this.store.pipelined(
          absent.length,
          (j) => this.addTo(last, hashes[absent[j]!]!),
          (start, replies) => {
            for (let j = 0; j < replies.length; j++) {
              const r = Number(replies[j]);
              if (r === -1) full.push(absent[start + j]!);
              else out[absent[start + j]!] = r === 1;
            }
          },
        );
        if (full.length > 0) await this.grow(last.index);
        pending = full;
      }
    });
    return out;
  }

  /** The layers with their key counts, read from Redis. */
  async info(): Promise<RedisLayerInfo[]> {
    return this.store.op('info', async () => {
      await this.reload();
      const out: RedisLayerInfo[] = [];
      for (const layer of this.chain) {
        let count = 0;
        let sealed = false;
        await this.store.pipelined(
          layer.shards,
          (i) =>
            this.store.send(layer.states.get(i), true, [
              'HMGET',
              layer.states.get(i),
              'n',
              'sealed',
            ]),
          (_, replies) => {
            for (const r of replies as unknown[][]) {
              count += Number(r[0] ?? 0);
              if (r[1] !== null && r[1] !== undefined) sealed = true;
            }
          },
        );
        const { capacity, fpp, shards, bits, hashes, share } = layer;
        out.push({ capacity, fpp, shards, bits, hashes, share, count, sealed });
      }
      return out;
    });
  }

  private allKeys(): string[] {
    const keys: string[] = [];
    for (const layer of this.chain) {
      for (let i = 0; i < layer.shards; i++) keys.push(layer.keys.get(i), layer.states.get(i));
    }
    return keys;
  }

  /**
   * Forgets every key: deletes every layer's keys and drops all layers but the first from the
   * metadata. Not atomic with concurrent adds.
   */
  async clear(): Promise<void> {
    await this.store.op('clear', async () => {
      await this.reload();
      await this.store.del(this.allKeys());
      await this.store.eval(SCALABLE_RESET, [metaKey(this.name)], []);
      this.chain = this.chain.slice(0, 1);
    });
  }

  /** Deletes the filter: every layer's keys and the metadata. */
  async destroy(): Promise<void> {
    await this.store.op('destroy', async () => {
      await this.reload();
      await this.store.del(this.allKeys());
      await this.store.del([metaKey(this.name)]);
    });
  }
}
