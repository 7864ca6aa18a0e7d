/**
 * The layer chain of `StoredScalableBloomFilter` (stored-scalable.ts documents the algorithm),
 * over any shard store: the filter's parameters and the layers this client knows, reading, adding
 * to and sealing a layer's shards, growth, and the window algorithms of add and has with their
 * retries after growth, another client's clear, or a lost shard.
 */

import { FilterFullError, FormatError, show } from '../errors.js';
import { hashKeyInto } from '../hash/hasher.js';
import type { Funnel, Key } from '../hash/keys.js';
import { checkMetaReply, initShards, lostShard, readFilterMeta, ShardRefs } from './epoch.js';
import { KEY_STATUS } from './errors.js';
import { Locator } from './layout.js';
import { metaFpp, metaFunnel, metaInt, readEpoch, readExpiry, who } from './meta.js';
import type { OpContext, StoreOps } from './ops.js';
import { addLayer, type Layer, placeIn, readLayer, sealedOf } from './scalable-io.js';
import { parseSpec, type RedisLayerSpec, scalableLayerSpec, specText } from './scalable-layers.js';
import { type Epoch, type Meta, REPLY, type ShardRead, type ShardStore } from './store.js';

/** What a read of one layer's shard says (header first). */
type Seen = 'set' | 'clear' | 'lost' | 'newer' | 'replaced';

function seen(read: ShardRead, epoch: Epoch): Seen {
  const id = read[0]!;
  if (id === 0) return 'lost';
  if (String(id) !== epoch.id) return 'replaced';
  if (read[1]! > epoch.gen) return 'newer';
  for (let i = 2; i < read.length; i++) if (read[i] === 0) return 'clear';
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
  /** When the filter expires (ms since the epoch, store clock), or `undefined`. */
  readonly expireAt: number | undefined;
  protected readonly ops: StoreOps;
  protected epoch: Epoch;
  protected chain: Layer[] = [];
  /** Names the filter in messages. */
  private readonly who: string;

  protected constructor(ops: StoreOps, name: string, meta: Meta) {
    this.ops = ops;
    this.name = name;
    const label = who(ops.store, name);
    this.who = label;
    this.capacity = metaInt(meta, 'capacity', label);
    this.fpp = metaFpp(meta, label);
    const growth = metaInt(meta, 'growth', label);
    if (growth !== 2 && growth !== 4) {
      throw new FormatError(`${label} has a bad growth ${show(meta.growth)}`);
    }
    this.growth = growth;
    this.ratio = Number(meta.ratio);
    if (!(this.ratio > 0 && this.ratio < 1)) {
      throw new FormatError(`${label} has a bad ratio ${show(meta.ratio)}`);
    }
    this.maxShardBits = metaInt(meta, 'shardBits', label);
    this.funnel = metaFunnel(meta, label);
    const { ttl, expireAt } = readExpiry(label, meta);
    this.ttlMs = ttl;
    this.expireAt = expireAt;
    this.epoch = readEpoch(ops.store, name, meta);
    this.applyMeta(meta);
  }

  /** The store the filter lives in. */
  get store(): ShardStore {
    return this.ops.store;
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
    const epoch = readEpoch(this.store, this.name, meta);
    if (epoch.id !== this.epoch.id) {
      throw this.store.error(
        'stale',
        `${this.who} was destroyed and created again since this object opened it; open it again`,
      );
    }
    const count = metaInt(meta, 'layers', this.who);
    if (count < 1) throw new FormatError(`${this.who} has no layers`);
    const chain = epoch.gen === this.epoch.gen ? this.chain.slice(0, count) : [];
    this.epoch = epoch;
    for (let i = chain.length; i < count; i++) {
      const spec = parseSpec(this.who, i, meta[`layer:${i}`]);
      let want: string;
      try {
        want = specText(this.specOf(i));
      } catch (err) {
        throw new FormatError(`${this.who} has bad parameters: ${(err as Error).message}`);
      }
      if (specText(spec) !== want) {
        throw new FormatError(
          `${this.who} has layer:${i} ${show(meta[`layer:${i}`])} in its metadata, but its parameters give ${show(want)}: the metadata was changed`,
        );
      }
      chain.push(this.layer(i, spec));
    }
    this.chain = chain;
  }

  protected layer(i: number, spec: RedisLayerSpec): Layer {
    const { name, store } = this;
    return {
      ...spec,
      index: i,
      locator: new Locator(
        { shards: spec.shards, shardBits: spec.bits, hashes: spec.hashes },
        this.funnel,
      ),
      refs: new ShardRefs((j) => store.shardRef('scalable', name, j, i), spec.shards),
    };
  }

  /** Creates (or resets to the current generation) every shard of `layer`; marks the metadata ready. */
  protected initLayer(layer: Layer): Promise<void> {
    return initShards(
      this.ops,
      this.name,
      this.epoch,
      this.expireAt,
      (i) => layer.refs.get(i),
      layer.shards,
    );
  }

  protected async reload(): Promise<void> {
    this.applyMeta(await readFilterMeta(this.store, this.name));
  }

  /** The shard of hash `h` in `layer`; its cells are then in `layer.locator.offsets`. */
  protected shardOf(layer: Layer, h: Int32Array): string {
    return layer.refs.get(layer.locator.place(h));
  }

  // The stores read `cells` during the call only, so the locator's reused offsets are safe.

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
        `${this.ops.label} cannot add layer ${index + 1}: ${(err as Error).message}`,
      );
    }
    const epoch = this.epoch;
    const replies = await this.ops.all(layer.shards, (i) =>
      this.store.seal(layer.refs.get(i), epoch),
    );
    if (replies.some((r) => r !== 1)) return this.reload(); // cleared, lost or replaced
    await this.initLayer(this.layer(index + 1, next));
    const update = await this.store.appendLayer(this.name, epoch, index + 1, specText(next));
    checkMetaReply(this.store, this.name, update.code);
    this.applyMeta(update.meta!);
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
    const written: string[] = []; // the shards written (for the `replicas` option)
    for (let round = 0; pending.length > 0; round++) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (round >= MAX_ROUNDS) throw this.gaveUp(round);
      const chain = this.chain;
      const last = chain[chain.length - 1]!;
      const retry: number[] = [];
      let lost: string | undefined;
      let absent = pending;
      if (chain.length > 1) {
        const older = chain.slice(0, -1);
        const hs = pending.map((j) => hashes[j]!);
        const reads = await Promise.all(older.map((l) => readLayer(this.store, l, hs)));
        absent = [];
        for (let i = 0; i < pending.length; i++) {
          const j = pending[i]!;
          const views = reads.map((r) => seen(r[i]!, this.epoch));
          if (views.includes('replaced'))
            throw await lostShard(this.store, this.name, this.epoch, this.name);
          const missing = views.indexOf('lost');
          if (missing >= 0 || views.includes('newer')) {
            if (missing >= 0) lost ??= this.shardOf(older[missing]!, hashes[j]!);
            retry.push(j);
          } else if (views.includes('set')) {
            status[offset + j] = KEY_STATUS.applied;
            result(j, false);
          } else absent.push(j);
        }
      }
      for (const j of absent) status[offset + j] = KEY_STATUS.unknown;
      const batch = placeIn(
        last,
        absent.map((j) => hashes[j]!),
      );
      if (this.ops.replicas > 0) written.push(...batch.refs);
      const replies = await addLayer(this.store, this.epoch, last, batch);
      let full = false;
      for (let i = 0; i < absent.length; i++) {
        const j = absent[i]!;
        const r = replies[i]!;
        if (r === 0 || r === 1) {
          status[offset + j] = KEY_STATUS.applied;
          result(j, r === 1);
          continue;
        }
        status[offset + j] = KEY_STATUS.notApplied;
        retry.push(j);
        if (r === REPLY.full) full = true;
        else if (r === REPLY.lost) lost ??= this.shardOf(last, hashes[j]!);
        else if (r === REPLY.replaced)
          throw await lostShard(this.store, this.name, this.epoch, this.name);
        else if (r !== REPLY.cleared) throw new Error(`unexpected reply ${show(r)} to scalableAdd`);
      }
      if (lost !== undefined || retry.length > (full ? -1 : 0)) {
        if (full) await this.grow(last.index);
        else await this.recover(lost);
      }
      pending = retry;
    }
    await this.ops.replicated(written, 'add', status, offset, window.length);
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
      if (round >= MAX_ROUNDS) throw this.gaveUp(round);
      const chain = this.chain;
      const last = chain[chain.length - 1]!;
      const hs = pending.map((j) => hashes[j]!);
      const [seals, reads] = await Promise.all([
        sealedOf(this.store, last, hs),
        Promise.all(chain.map((l) => readLayer(this.store, l, hs))),
      ]);
      const retry: number[] = [];
      const recheck: number[] = [];
      let lost: string | undefined;
      for (let i = 0; i < pending.length; i++) {
        const j = pending[i]!;
        const sealed = seals[i]!;
        const views = reads.map((r) => seen(r[i]!, this.epoch));
        if (views.includes('replaced'))
          throw await lostShard(this.store, this.name, this.epoch, this.name);
        const missing = views.indexOf('lost');
        if (missing >= 0 || views.includes('newer')) {
          if (missing >= 0) lost ??= this.shardOf(chain[missing]!, hashes[j]!);
          retry.push(j);
        } else if (views.includes('set')) {
          status[offset + j] = KEY_STATUS.applied;
          result(j, true);
        } else if (sealed) recheck.push(j);
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

  private gaveUp(round: number): Error {
    return this.store.error(
      'stale',
      `${this.ops.label}: gave up after ${round} rounds of growth and clears`,
    );
  }
}
