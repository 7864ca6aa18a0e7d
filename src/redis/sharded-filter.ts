/**
 * What the Redis filters of one sharded layout (src/sharded/layout.ts) share: `RedisBloomFilter`
 * (cells are bits) and `RedisCountingBloomFilter` (cells are 4-bit counters). The base holds the
 * shape read from the metadata (checked against what capacity, fpp and shardBits give), the
 * filter's `id` and generation, finds a key's shard and cells, sends batches a window at a time,
 * and turns the scripts' refusals (scripts.ts) into retries or typed errors:
 *
 * - a shard of a newer generation (another client cleared the filter): re-read the metadata and
 *   resend the key into the new generation;
 * - a missing shard: re-read the metadata; `RedisFilterNotFoundError` if the filter is gone,
 *   `RedisFilterStaleError` if it was created again, else `RedisFilterLostError`;
 * - another `id`: `RedisFilterStaleError`.
 *
 * Reads are one plain `BITFIELD_RO` per key that also reads the shard's header, so a lost or
 * replaced shard is seen in the same round trip as the bits.
 */

import { FilterFullError, show } from '../errors.js';
import type { ProgressOptions } from '../filters/filter.js';
import type { Key } from '../hash/keys.js';
import { Locator, type PlacedKeys, placeAll } from '../sharded/layout.js';
import type { ShardedBloomShape } from '../sharded/sharded-bloom.js';
import {
  KEY_STATUS,
  RedisFilterLostError,
  RedisFilterNotFoundError,
  RedisFilterStaleError,
} from './errors.js';
import { metaKey, ShardKeys, type ShardKind, shardKey } from './keys.js';
import { CLEAR_META, DROP_ORPHAN, INIT_SHARD, type LuaScript, META_SET, REPLY } from './scripts.js';
import { readExpiry, readShape } from './shape.js';
import { type Meta, metaInt, type OpContext, type RedisStore, toMeta } from './store.js';

/** The metadata of filter `name`; `RedisFilterNotFoundError` if there is none. */
export async function readFilterMeta(store: RedisStore, name: string): Promise<Meta> {
  const meta = await store.readMeta(metaKey(name));
  if (meta === undefined) {
    throw new RedisFilterNotFoundError(
      `no Redis filter named ${show(name)} (never created, destroyed, or expired)`,
    );
  }
  return meta;
}

/** A filter's identity: its `id` and current generation, from the metadata. */
export interface Epoch {
  readonly id: string;
  readonly gen: number;
}

export function readEpoch(name: string, meta: Meta): Epoch {
  const id = metaInt(meta, 'id', name);
  const gen = metaInt(meta, 'gen', name);
  if (id < 1 || id >= 2 ** 32 || gen < 1 || gen >= 2 ** 32) {
    throw new RedisFilterLostError(
      `Redis filter ${show(name)} has a bad id or gen in its metadata: ${show(meta.id)}, ${show(meta.gen)}`,
    );
  }
  return { id: String(id), gen };
}

/**
 * Creates (or resets to the generation in `epoch`) the shards `keys` (with their count hashes
 * `counts`), pipelined, then marks the metadata ready.
 */
export async function initShards(
  store: RedisStore,
  name: string,
  epoch: Epoch,
  expireAt: number | undefined,
  keys: (i: number) => string,
  count: number,
  counts?: (i: number) => string,
): Promise<void> {
  const args = [epoch.id, String(epoch.gen), expireAt === undefined ? '' : String(expireAt)];
  await store.all(count, (i) =>
    store.eval(INIT_SHARD, counts === undefined ? [keys(i)] : [keys(i), counts(i)], args),
  );
  const reply = await store.eval(META_SET, [metaKey(name)], [epoch.id, 'ready', '1']);
  checkMetaReply(name, Number(reply));
}

/** Throws for a metadata script's 0 (gone) or -3 (another filter's). */
export function checkMetaReply(name: string, code: number): void {
  if (code === 0) {
    throw new RedisFilterNotFoundError(`Redis filter ${show(name)} was destroyed or expired`);
  }
  if (code === REPLY.replaced) {
    throw new RedisFilterStaleError(
      `Redis filter ${show(name)} was destroyed and created again since this object opened it; open it again`,
    );
  }
}

/**
 * Why a shard of filter `name` is missing, as the error to throw: re-reads the metadata (the
 * filter may be gone, or created again).
 */
export async function lostShard(
  store: RedisStore,
  name: string,
  epoch: Epoch,
  shard: string,
): Promise<Error> {
  let meta: Meta;
  try {
    meta = await readFilterMeta(store, name);
  } catch (err) {
    return err as Error;
  }
  if (meta.id !== epoch.id) {
    return new RedisFilterStaleError(
      `Redis filter ${show(name)} was destroyed and created again since this object opened it; open it again`,
    );
  }
  return new RedisFilterLostError(
    `Redis filter ${show(name)} lost shard ${show(shard)} (deleted, evicted or not persisted): keys added before may answer absent; clear() rebuilds it empty, destroy() removes the filter`,
  );
}

/** A shard's header from a read reply (`[id, gen, cells...]`): null if it is the filter's. */
export function headerProblem(reply: unknown[], epoch: Epoch): 'lost' | 'replaced' | null {
  const id = Number(reply[0]);
  if (id === 0) return 'lost';
  if (String(id) !== epoch.id) return 'replaced';
  return null;
}

export abstract class RedisShardedFilter<K extends Key = Key> {
  readonly name: string;
  /**
   * Parameters and shape (S shards of b cells, k cells per key); for a counting filter
   * `shardBits` counts counters per shard (4 bits each).
   */
  readonly shape: ShardedBloomShape;
  /** Time to live in ms as created, or `undefined`. */
  readonly ttlMs: number | undefined;
  /** When the filter expires (ms since the epoch, server clock), or `undefined`. */
  readonly expireAt: number | undefined;
  protected readonly store: RedisStore;
  protected readonly locator: Locator;
  protected readonly keys: ShardKeys;
  protected epoch: Epoch;
  private readonly kind: ShardKind;

  protected constructor(store: RedisStore, name: string, meta: Meta, kind: ShardKind) {
    this.store = store;
    this.name = name;
    this.kind = kind;
    this.shape = readShape(name, meta);
    const { ttl, expireAt } = readExpiry(name, meta);
    this.ttlMs = ttl;
    this.expireAt = expireAt;
    this.epoch = readEpoch(name, meta);
    this.locator = new Locator(this.shape, this.shape.funnel);
    this.keys = new ShardKeys((i) => shardKey(kind, name, i), this.shape.shards);
  }

  get funnel(): ShardedBloomShape['funnel'] {
    return this.shape.funnel;
  }

  /** Cells per key (k): bits, or counters for a counting filter. */
  get hashes(): number {
    return this.shape.hashes;
  }

  /** Number of shards (S). */
  get shards(): number {
    return this.shape.shards;
  }

  /** The filter's id and the generation this object last saw (see scripts.ts). */
  get generation(): Epoch {
    return this.epoch;
  }

  /** The Redis key of shard `i` (for inspection and tests). */
  shardKey(i: number): string {
    return shardKey(this.kind, this.name, i);
  }

  /** The shard that holds `key` (`TypeError` for a key of the wrong kind). */
  shardOf(key: K): number {
    return this.place([key]).shards[0]!;
  }

  /** The Redis key of the metadata hash. */
  get metaKey(): string {
    return metaKey(this.name);
  }

  /**
   * Every key's shard and numbers (its k cells for a Bloom layout), computed (and every key
   * checked) before anything is sent.
   */
  protected place(window: readonly K[]): PlacedKeys {
    return placeAll(this.locator, window);
  }

  /** The script arguments after id and gen for the key placed at offsets[base, base + k). */
  protected abstract cellArgs(offsets: Float64Array, base: number): string[];

  /** The read command (header first) for the key placed at offsets[base, base + k) in `key`. */
  protected abstract readArgs(key: string, offsets: Float64Array, base: number): string[];

  /** Re-reads the metadata's generation (after a script met a newer one). */
  protected async refresh(): Promise<void> {
    const meta = await readFilterMeta(this.store, this.name);
    if (meta.id !== this.epoch.id) {
      throw await lostShard(this.store, this.name, this.epoch, this.metaKey);
    }
    this.epoch = readEpoch(this.name, meta);
  }

  /**
   * The plain BITFIELD of `script`'s write with the header read first (see scripts.ts, "Fast
   * path"), or null if the write only goes through the script.
   */
  protected fastArgs(
    _script: LuaScript,
    _key: string,
    _offsets: Float64Array,
    _base: number,
  ): string[] | null {
    return null;
  }

  /** The 0/1 result of a fast write's reply (header first). */
  protected fastResult(_reply: unknown[]): number {
    return 0;
  }

  /**
   * Runs `script` for every key of `window` (all sent in one turn, the first time through the
   * fast path if the type has one), resending the keys that met another generation after
   * re-reading it. `result(j, reply)` gets each applied key's 0/1.
   */
  protected async writeWindow(
    script: LuaScript,
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, reply: number) => void,
    ctx: OpContext,
  ): Promise<void> {
    const placed = this.place(window);
    const k = placed.count === 0 ? 0 : placed.offsets.length / placed.count;
    let pending = Array.from(window, (_, j) => j);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const epoch = this.epoch;
      const genArg = String(epoch.gen);
      let fast = attempt === 0;
      const sent = pending.map((j) => {
        status[offset + j] = KEY_STATUS.unknown;
        const key = this.keys.get(placed.shards[j]!);
        const plain = fast ? this.fastArgs(script, key, placed.offsets, j * k) : null;
        if (plain !== null) return this.store.send(key, false, plain);
        fast = false;
        return this.store.eval(
          script,
          [key],
          [epoch.id, genArg, ...this.cellArgs(placed.offsets, j * k)],
        );
      });
      const replies = await Promise.allSettled(sent);
      const again: number[] = [];
      const orphans = new Set<string>();
      // Fast writes that landed in a newer generation: applied if it is the current one.
      const landed: [j: number, gen: number, result: number][] = [];
      let failure: unknown;
      let lost: string | undefined;
      for (let i = 0; i < replies.length; i++) {
        const j = pending[i]!;
        const settled = replies[i]!;
        if (settled.status === 'rejected') {
          failure ??= settled.reason;
          continue;
        }
        const key = this.keys.get(placed.shards[j]!);
        const r = fast ? this.fastCode(settled.value as unknown[], epoch) : Number(settled.value);
        if (r === 0 || r === 1) {
          status[offset + j] = KEY_STATUS.applied;
          result(j, fast ? this.fastResult(settled.value as unknown[]) : r);
          continue;
        }
        if (fast && r === REPLY.cleared) {
          const reply = settled.value as unknown[];
          const gen = Number(reply[1]);
          if (gen > epoch.gen) landed.push([j, gen, this.fastResult(reply)]);
          else again.push(j);
          continue;
        }
        status[offset + j] = KEY_STATUS.notApplied;
        if (r === REPLY.cleared) again.push(j);
        else if (r === REPLY.lost || r === REPLY.replaced) {
          lost ??= key;
          if (fast && r === REPLY.lost) orphans.add(key);
        } else if (r === REPLY.full) {
          failure ??= new FilterFullError(
            `Redis filter ${show(this.name)} is full: no free slot for a key within its buckets (nothing was lost)`,
          );
        } else failure ??= new Error(`unexpected reply ${show(settled.value)} from ${script.name}`);
      }
      for (const key of orphans) await this.store.eval(DROP_ORPHAN, [key], []);
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
          throw new RedisFilterStaleError(
            `Redis filter ${show(this.name)} was cleared again and again while writing; gave up after ${attempt + 1} tries`,
          );
        }
        await this.refresh();
      }
      pending = again;
    }
  }

  /**
   * A fast write's header as a script reply code: 0 when it landed in `epoch` (the caller then
   * reads the result), else lost, replaced or cleared (resend).
   */
  private fastCode(reply: unknown[], epoch: Epoch): number {
    const id = Number(reply[0]);
    if (id === 0) return REPLY.lost;
    if (String(id) !== epoch.id) return REPLY.replaced;
    return Number(reply[1]) === epoch.gen ? 0 : REPLY.cleared;
  }

  /** Reads every key of `window` (one BITFIELD_RO each, sent in one turn); `result(j, cells)`. */
  protected async readWindow(
    window: readonly K[],
    offset: number,
    status: Uint8Array,
    result: (j: number, reply: unknown[], placed: PlacedKeys) => void,
  ): Promise<void> {
    const placed = this.place(window);
    const k = placed.count === 0 ? 0 : placed.offsets.length / placed.count;
    const sent = window.map((_, j) => {
      status[offset + j] = KEY_STATUS.unknown;
      const key = this.keys.get(placed.shards[j]!);
      return this.store.send(key, true, this.readArgs(key, placed.offsets, j * k));
    });
    const replies = await Promise.all(sent);
    for (let j = 0; j < replies.length; j++) {
      const reply = replies[j] as unknown[];
      if (headerProblem(reply, this.epoch) !== null) {
        throw await lostShard(this.store, this.name, this.epoch, this.keys.get(placed.shards[j]!));
      }
      status[offset + j] = KEY_STATUS.applied;
      result(j, reply, placed);
    }
  }

  /** Runs `script` for one key; resolves to its 0/1 reply. */
  protected writeOne(what: string, script: LuaScript, key: K): Promise<number> {
    let reply = 0;
    return this.store
      .op(what, (ctx) =>
        this.writeWindow(script, [key], 0, new Uint8Array(1), (_, r) => (reply = r), ctx),
      )
      .then(() => reply);
  }

  /** Runs `script` for every key, a window at a time; `result(i, reply)` for key i. */
  protected async writeAll(
    what: string,
    script: LuaScript,
    keys: Iterable<K> | AsyncIterable<K>,
    options: ProgressOptions | undefined,
    result: (i: number, reply: number) => void,
  ): Promise<void> {
    await this.store.batch(what, keys, options, (window, offset, status, ctx) =>
      this.writeWindow(script, window, offset, status, (j, r) => result(offset + j, r), ctx),
    );
  }

  /**
   * Reads every key, a window at a time; `answer(reply, placed, j)` turns key j's reply (header
   * first) into its result.
   */
  protected async readAll<T>(
    what: string,
    keys: Iterable<K> | AsyncIterable<K>,
    options: ProgressOptions | undefined,
    answer: (reply: unknown[], placed: PlacedKeys, j: number) => T,
  ): Promise<T[]> {
    const out: T[] = [];
    await this.store.batch(what, keys, options, (window, offset, status) =>
      this.readWindow(window, offset, status, (j, r, placed) => {
        out[offset + j] = answer(r, placed, j);
      }),
    );
    return out;
  }

  /**
   * Forgets every key: starts a new generation in the metadata, then resets every shard to it
   * (recreating lost ones). Writes planned for the old generation are refused by the shards and
   * resent by their clients into the new one, so an add that was acknowledged after `clear`
   * returned is never lost.
   */
  async clear(): Promise<void> {
    await this.store.op('clear', async () => {
      const reply = (await this.store.eval(
        CLEAR_META,
        [this.metaKey],
        [this.epoch.id, '0'],
      )) as unknown[];
      checkMetaReply(this.name, Number(reply[0]));
      const meta = toMeta(reply[1]);
      this.epoch = readEpoch(this.name, meta);
      await initShards(
        this.store,
        this.name,
        this.epoch,
        this.expireAt,
        (i) => this.keys.get(i),
        this.shape.shards,
      );
    });
  }

  /** Deletes the filter: its metadata first (so no one opens it), then its shards. */
  async destroy(): Promise<void> {
    await this.store.op('destroy', async () => {
      await this.store.del([this.metaKey]);
      await this.store.del(Array.from({ length: this.shape.shards }, (_, i) => this.keys.get(i)));
    });
  }
}
