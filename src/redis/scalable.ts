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

import {
  checkPositiveInteger,
  checkProbability,
  FilterFullError,
  FormatError,
  show,
} from '../errors.js';
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import { hashKeyInto } from '../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { checkShardBits, DEFAULT_SHARD_BITS, Locator } from '../sharded/layout.js';
import {
  parseSpec,
  type RedisLayerInfo,
  type RedisLayerSpec,
  scalableLayerSpec,
  specText,
} from '../sharded/scalable-layers.js';
import type { RedisConnection } from './client.js';
import { KEY_STATUS, RedisFilterStaleError } from './errors.js';
import { checkName, layerShardKey, layerStateKey, metaKey, ShardKeys } from './keys.js';
import { createMeta } from './open.js';
import {
  CLEAR_META,
  DROP_SHARD,
  HEADER_BITS,
  REPLY,
  SCALABLE_ADD,
  SCALABLE_GROW,
  SCALABLE_SEAL,
} from './scripts.js';
import { metaFpp, metaFunnel, readExpiry } from './shape.js';
import {
  checkMetaReply,
  type Epoch,
  initShards,
  lostShard,
  readEpoch,
  readFilterMeta,
} from './sharded-filter.js';
import {
  checkKind,
  type Meta,
  type MetaFields,
  metaInt,
  type OpContext,
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

/** What a read of one layer's shard says (header first). */
type Seen = 'set' | 'clear' | 'lost' | 'newer' | 'replaced';

function seen(reply: unknown[], epoch: Epoch): Seen {
  const id = Number(reply[0]);
  if (id === 0) return 'lost';
  if (String(id) !== epoch.id) return 'replaced';
  if (Number(reply[1]) > epoch.gen) return 'newer';
  for (let i = 2; i < reply.length; i++) if (Number(reply[i]) === 0) return 'clear';
  return 'set';
}

/** Rounds of retries a window may take (growth and concurrent clears) before giving up. */
const MAX_ROUNDS = 64;

export class RedisScalableBloomFilter<K extends Key = Key> implements AsyncMembershipFilter<K> {
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
  private epoch: Epoch;
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
    this.epoch = readEpoch(name, meta);
    this.applyMeta(meta);
  }

  /** The spec layer `i` must have (`RangeError` when it cannot be made). */
  private specOf(i: number): RedisLayerSpec {
    return scalableLayerSpec(
      i,
      this.capacity,
      this.fpp,
      this.growth,
      this.ratio,
      this.maxShardBits,
    );
  }

  /**
   * Takes the layers from (newer) metadata, each checked against the spec its index gives
   * (`FormatError` for tampered metadata); layers already known are kept unless the generation
   * changed.
   */
  private applyMeta(meta: Meta): void {
    const epoch = readEpoch(this.name, meta);
    if (epoch.id !== this.epoch.id) {
      throw new RedisFilterStaleError(
        `Redis filter ${show(this.name)} was destroyed and created again since this object opened it; open it again`,
      );
    }
    const count = metaInt(meta, 'layers', this.name);
    if (count < 1) throw new FormatError(`Redis filter ${show(this.name)} has no layers`);
    const chain = epoch.gen === this.epoch.gen ? this.chain.slice(0, count) : [];
    this.epoch = epoch;
    for (let i = chain.length; i < count; i++) {
      const spec = parseSpec(this.name, i, meta[`layer:${i}`]);
      let want: string;
      try {
        want = specText(this.specOf(i));
      } catch (err) {
        throw new FormatError(
          `Redis filter ${show(this.name)} has bad parameters: ${(err as Error).message}`,
        );
      }
      if (specText(spec) !== want) {
        throw new FormatError(
          `Redis filter ${show(this.name)} has layer:${i} ${show(meta[`layer:${i}`])} in its metadata, but its parameters give ${show(want)}: the metadata was changed`,
        );
      }
      chain.push(this.layer(i, spec));
    }
    this.chain = chain;
  }

  private layer(i: number, spec: RedisLayerSpec): Layer {
    const name = this.name;
    return {
      ...spec,
      index: i,
      locator: new Locator(
        { shards: spec.shards, shardBits: spec.bits, hashes: spec.hashes },
        this.funnel,
      ),
      keys: new ShardKeys((j) => layerShardKey(name, i, j), spec.shards),
      states: new ShardKeys((j) => layerStateKey(name, i, j), spec.shards),
      shareArg: String(spec.share),
    };
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

  /** Creates (or resets to the current generation) every shard of `layer`; marks the metadata ready. */
  private initLayer(layer: Layer): Promise<void> {
    return initShards(
      this.store,
      this.name,
      this.epoch,
      this.expireAt,
      (i) => layer.keys.get(i),
      layer.shards,
      (i) => layer.states.get(i),
    );
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

  private async reload(): Promise<void> {
    this.applyMeta(await readFilterMeta(this.store, this.name));
  }

  private read(layer: Layer, h: Int32Array): Promise<unknown> {
    const shard = layer.locator.place(h);
    const offsets = layer.locator.offsets;
    const key = layer.keys.get(shard);
    const args = ['BITFIELD_RO', key, 'GET', 'u32', '0', 'GET', 'u32', '32'];
    for (let j = 0; j < layer.hashes; j++)
      args.push('GET', 'u1', String(offsets[j]! + HEADER_BITS));
    return this.store.send(key, true, args);
  }

  /** Whether the shard of `h` in `layer` is sealed. */
  private sealed(layer: Layer, h: Int32Array): Promise<unknown> {
    const state = layer.states.get(layer.locator.place(h));
    return this.store.send(state, true, ['HGET', state, 'sealed']);
  }

  private addTo(layer: Layer, h: Int32Array): Promise<unknown> {
    const shard = layer.locator.place(h);
    const offsets = layer.locator.offsets;
    const args = new Array<string>(3 + layer.hashes);
    args[0] = this.epoch.id;
    args[1] = String(this.epoch.gen);
    args[2] = layer.shareArg;
    for (let j = 0; j < layer.hashes; j++) args[j + 3] = String(offsets[j]! + HEADER_BITS);
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
      next = this.specOf(index + 1);
    } catch (err) {
      throw new FilterFullError(
        `RedisScalableBloomFilter ${show(this.name)} cannot add layer ${index + 1}: ${(err as Error).message}`,
      );
    }
    const { id, gen } = this.epoch;
    const replies = await this.store.all(layer.shards, (i) =>
      this.store.eval(SCALABLE_SEAL, [layer.keys.get(i), layer.states.get(i)], [id, String(gen)]),
    );
    if (replies.some((r) => Number(r) !== 1)) return this.reload(); // cleared, lost or replaced
    await this.initLayer(this.layer(index + 1, next));
    const reply = (await this.store.eval(
      SCALABLE_GROW,
      [metaKey(this.name)],
      [String(index + 1), specText(next), id, String(gen)],
    )) as unknown[];
    checkMetaReply(this.name, Number(reply[0]));
    this.applyMeta(toMeta(reply[1]));
  }

  /**
   * After a round met shards of a newer generation or missing ones: re-reads the metadata; a
   * missing shard in an unchanged generation is lost (`RedisFilterLostError`).
   */
  private async recover(lost: string | undefined): Promise<void> {
    const before = this.epoch;
    await this.reload();
    if (lost !== undefined && this.epoch.gen === before.gen) {
      throw await lostShard(this.store, this.name, this.epoch, lost);
    }
  }

  private hashAll(window: readonly K[]): Int32Array[] {
    return window.map((key) => {
      const h = new Int32Array(4);
      hashKeyInto(this.funnel, key, h);
      return h;
    });
  }

  /** Adds a window of keys (see the class comment); `result(j, wasNew)` for each. */
  private async addWindow(
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, added: boolean) => void,
    ctx: OpContext,
  ): Promise<void> {
    const hashes = this.hashAll(window);
    let pending = hashes.map((_, j) => j);
    for (let round = 0; pending.length > 0; round++) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (round >= MAX_ROUNDS)
        throw new RedisFilterStaleError(
          `${this.store.label}: gave up after ${round} rounds of growth and clears`,
        );
      const chain = this.chain;
      const last = chain[chain.length - 1]!;
      const retry: number[] = [];
      let lost: string | undefined;
      let absent = pending;
      if (chain.length > 1) {
        const older = chain.slice(0, -1);
        const replies = await Promise.all(
          pending.map((j) => Promise.all(older.map((l) => this.read(l, hashes[j]!)))),
        );
        absent = [];
        for (let i = 0; i < pending.length; i++) {
          const j = pending[i]!;
          const views = (replies[i] as unknown[][]).map((r) => seen(r, this.epoch));
          if (views.includes('replaced'))
            throw await lostShard(this.store, this.name, this.epoch, this.metaKey());
          const missing = views.indexOf('lost');
          if (missing >= 0 || views.includes('newer')) {
            if (missing >= 0)
              lost ??= older[missing]!.keys.get(older[missing]!.locator.place(hashes[j]!));
            retry.push(j);
          } else if (views.includes('set')) {
            status[offset + j] = KEY_STATUS.applied;
            result(j, false);
          } else absent.push(j);
        }
      }
      const sent = absent.map((j) => {
        status[offset + j] = KEY_STATUS.unknown;
        return this.addTo(last, hashes[j]!);
      });
      const replies = await Promise.all(sent);
      let full = false;
      for (let i = 0; i < absent.length; i++) {
        const j = absent[i]!;
        const r = Number(replies[i]);
        if (r === 0 || r === 1) {
          status[offset + j] = KEY_STATUS.applied;
          result(j, r === 1);
          continue;
        }
        status[offset + j] = KEY_STATUS.notApplied;
        retry.push(j);
        if (r === REPLY.full) full = true;
        else if (r === REPLY.lost) lost ??= last.keys.get(last.locator.place(hashes[j]!));
        else if (r === REPLY.replaced)
          throw await lostShard(this.store, this.name, this.epoch, this.metaKey());
        else if (r !== REPLY.cleared)
          throw new Error(`unexpected reply ${show(replies[i])} from ${SCALABLE_ADD.name}`);
      }
      if (lost !== undefined || retry.length > (full ? -1 : 0)) {
        if (full) await this.grow(last.index);
        else await this.recover(lost);
      }
      pending = retry;
    }
  }

  /** Answers a window of keys; `result(j, present)` for each. */
  private async hasWindow(
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, present: boolean) => void,
  ): Promise<void> {
    const hashes = this.hashAll(window);
    let pending = hashes.map((_, j) => j);
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS)
        throw new RedisFilterStaleError(
          `${this.store.label}: gave up after ${round} rounds of growth and clears`,
        );
      const chain = this.chain;
      const last = chain[chain.length - 1]!;
      const replies = await Promise.all(
        pending.map((j) =>
          Promise.all([
            this.sealed(last, hashes[j]!),
            ...chain.map((l) => this.read(l, hashes[j]!)),
          ]),
        ),
      );
      const retry: number[] = [];
      const recheck: number[] = [];
      let lost: string | undefined;
      for (let i = 0; i < pending.length; i++) {
        const j = pending[i]!;
        const [sealed, ...bits] = replies[i] as unknown[];
        const views = (bits as unknown[][]).map((r) => seen(r, this.epoch));
        if (views.includes('replaced'))
          throw await lostShard(this.store, this.name, this.epoch, this.metaKey());
        const missing = views.indexOf('lost');
        if (missing >= 0 || views.includes('newer')) {
          if (missing >= 0)
            lost ??= chain[missing]!.keys.get(chain[missing]!.locator.place(hashes[j]!));
          retry.push(j);
        } else if (views.includes('set')) {
          status[offset + j] = KEY_STATUS.applied;
          result(j, true);
        } else if (sealed !== null && sealed !== undefined) recheck.push(j);
        else {
          status[offset + j] = KEY_STATUS.applied;
          result(j, false);
        }
      }
      if (retry.length > 0) await this.recover(lost);
      else if (recheck.length > 0) {
        await this.reload();
        if (this.chain.length === chain.length) {
          // The newest layer is sealed but no newer one was published yet: no layer has the key.
          for (const j of recheck) {
            status[offset + j] = KEY_STATUS.applied;
            result(j, false);
          }
          recheck.length = 0;
        }
      }
      pending = [...retry, ...recheck];
    }
  }

  private metaKey(): string {
    return metaKey(this.name);
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
