/**
 * The layer chain of `RedisScalableBloomFilter` (scalable.ts documents the algorithm): the
 * filter's parameters and the layers this client knows, the commands that read, add to and seal a
 * layer's shards, growth, and the window algorithms of add and has with their retries after
 * growth, another client's clear, or a lost shard.
 */

import { FilterFullError, FormatError, show } from '../errors.js';
import { hashKeyInto } from '../hash/hasher.js';
import type { Funnel, Key } from '../hash/keys.js';
import { Locator } from '../sharded/layout.js';
import {
  parseSpec,
  type RedisLayerSpec,
  scalableLayerSpec,
  specText,
} from '../sharded/scalable-layers.js';
import { KEY_STATUS, RedisFilterStaleError } from './errors.js';
import { layerShardKey, layerStateKey, metaKey, ShardKeys } from './keys.js';
import { HEADER_BITS, REPLY, SCALABLE_ADD, SCALABLE_GROW, SCALABLE_SEAL } from './scripts.js';
import { metaFpp, metaFunnel, readExpiry } from './shape.js';
import {
  checkMetaReply,
  type Epoch,
  initShards,
  lostShard,
  readEpoch,
  readFilterMeta,
} from './sharded-filter.js';
import { type Meta, metaInt, type OpContext, type RedisStore, toMeta } from './store.js';

/** A layer with what it takes to address it. */
export interface Layer extends RedisLayerSpec {
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

export abstract class ScalableChain<K extends Key = Key> {
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
  protected readonly store: RedisStore;
  protected epoch: Epoch;
  protected chain: Layer[] = [];

  protected constructor(store: RedisStore, name: string, meta: Meta) {
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
  protected specOf(i: number): RedisLayerSpec {
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
  protected applyMeta(meta: Meta): void {
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

  protected layer(i: number, spec: RedisLayerSpec): Layer {
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

  /** Creates (or resets to the current generation) every shard of `layer`; marks the metadata ready. */
  protected initLayer(layer: Layer): Promise<void> {
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

  protected async reload(): Promise<void> {
    this.applyMeta(await readFilterMeta(this.store, this.name));
  }

  protected read(layer: Layer, h: Int32Array): Promise<unknown> {
    const shard = layer.locator.place(h);
    const offsets = layer.locator.offsets;
    const key = layer.keys.get(shard);
    const args = ['BITFIELD_RO', key, 'GET', 'u32', '0', 'GET', 'u32', '32'];
    for (let j = 0; j < layer.hashes; j++)
      args.push('GET', 'u1', String(offsets[j]! + HEADER_BITS));
    return this.store.send(key, true, args);
  }

  /** Whether the shard of `h` in `layer` is sealed. */
  protected sealed(layer: Layer, h: Int32Array): Promise<unknown> {
    const state = layer.states.get(layer.locator.place(h));
    return this.store.send(state, true, ['HGET', state, 'sealed']);
  }

  protected addTo(layer: Layer, h: Int32Array): Promise<unknown> {
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
  protected async grow(index: number): Promise<void> {
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
  protected async recover(lost: string | undefined): Promise<void> {
    const before = this.epoch;
    await this.reload();
    if (lost !== undefined && this.epoch.gen === before.gen) {
      throw await lostShard(this.store, this.name, this.epoch, lost);
    }
  }

  protected hashAll(window: readonly K[]): Int32Array[] {
    return window.map((key) => {
      const h = new Int32Array(4);
      hashKeyInto(this.funnel, key, h);
      return h;
    });
  }

  /** Adds a window of keys (see the class comment); `result(j, wasNew)` for each. */
  protected async addWindow(
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
  protected async hasWindow(
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

  protected metaKey(): string {
    return metaKey(this.name);
  }
}
