/**
 * `RedisCuckooFilter`: a cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter:
 * Practically Better Than Bloom", CoNEXT 2014) in plain Redis, with deletes: what RedisBloom's
 * `CF.*` commands give, without the module, on one server or a Redis Cluster.
 *
 * Layout: S shards (keys `bk:k:{name:i}`, the 8-byte header of scripts.ts first), each nb buckets
 * (a power of two) of 4 slots of 16-bit fingerprints; slot s of bucket b is `u16 #(4 + 4b + s)`.
 * A key's hash h (MurmurHash3_x64_128 of its funnel bytes) gives its shard ⌊(h1 >>> 32)·S/2^32⌋,
 * its fingerprint f = ((h2 mod 2^32) mod 65535) + 1 (never 0, the empty slot), its bucket
 * i1 = (h1 mod 2^32) mod nb and the other bucket i2 = i1 XOR ((f · 0x5bd1e995) mod 2^32 mod nb).
 *
 * - `add`: one script (CUCKOO_ADD) puts f in a free slot of i1 or i2, or moves fingerprints to
 *   their other bucket, at most 500 moves; if that finds no free slot every move is undone and the
 *   add rejects with `FilterFullError`: a full filter never loses a key it holds.
 * - `has`: one `BITFIELD_RO` of the header and the 8 slots; true iff one holds f.
 * - `remove`: one script clears one slot holding f (false and no change if none does). Remove only
 *   keys you added: removing a key never added may remove another key's equal fingerprint.
 *
 * Rate: a key never added matches one of 8 slots with probability at most 1 − (1 − 1/65535)^8 ≈
 * 1.22e-4 (less while the buckets are not full), so `fpp` must be at least that. Sizing: each of
 * the S shards has room for its mean share μ = capacity/S plus 4√μ (keys spread binomially, and a
 * full shard cannot overflow into another) at a 95% load: nb = the power of two ≥ (μ + 4√μ)/3.8,
 * at least 64 and at most shardBits/64 buckets (S grows until it fits).
 * A key added twice takes two slots (as `CF.ADD`), so it can be removed twice.
 */

import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import { hashKeyInto } from '../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import {
  checkShardBits,
  DEFAULT_SHARD_BITS,
  multiplyShift,
  type PlacedKeys,
} from '../sharded/layout.js';
import type { ShardedBloomShape } from '../sharded/sharded-bloom.js';
import type { RedisConnection } from './client.js';
import { createSharded, openSharded, type ShardedFilterType } from './open.js';
import { CUCKOO_ADD, CUCKOO_REMOVE } from './scripts.js';
import { RedisShardedFilter } from './sharded-filter.js';
import type { Meta, RedisFilterConnectionOptions, RedisStore } from './store.js';

/** Options of {@link RedisCuckooFilter.create}. */
export interface RedisCuckooFilterOptions extends RedisFilterConnectionOptions {
  /** Keys the filter holds (at a 95% load): a positive safe integer. */
  capacity: number;
  /** Target false positive probability, in [1.23e-4, 1). */
  fpp: number;
  /** Most bits per shard (64 per bucket): a multiple of 64, at least 4096; default 2^23. */
  shardBits?: number;
  /** Key encoding; default `'string'`. */
  funnel?: Funnel;
  /** Time to live in seconds: the filter and all its keys expire together. Default: never. */
  ttl?: number;
}

const SLOTS = 4;
const LOAD = 0.95;
const MAX_KICKS = 500;
/** The rate of 16-bit fingerprints compared against 8 slots. */
export const CUCKOO_MIN_FPP = 1 - (1 - 1 / 65535) ** (2 * SLOTS);

/**
 * The shape of a cuckoo filter as a sharded shape: `shardBits` is buckets per shard (nb) and
 * `hashes` the 2 buckets a key may live in.
 */
function cuckooShape(options: RedisCuckooFilterOptions): ShardedBloomShape {
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

/** The other bucket of fingerprint `f` in bucket `b` of `nb` (a power of two). */
export function altBucket(b: number, f: number, nb: number): number {
  return (b ^ (((f * 1540483477) % 4294967296) % nb)) >>> 0;
}

export class RedisCuckooFilter<K extends Key = Key>
  extends RedisShardedFilter<K>
  implements AsyncMembershipFilter<K>
{
  private static readonly type: ShardedFilterType<RedisCuckooFilter, RedisCuckooFilterOptions> = {
    label: 'RedisCuckooFilter',
    kind: 'cuckoo',
    letter: 'k',
    shapeOf: cuckooShape,
    optionsOf: (s: ShardedBloomShape) => ({
      capacity: s.capacity,
      fpp: s.fpp,
      shardBits: s.maxShardBits,
      funnel: s.funnel,
    }),
    make: (store, name, meta) => new RedisCuckooFilter(store, name, meta),
  };

  private readonly hash = new Int32Array(4);

  private constructor(store: RedisStore, name: string, meta: Meta) {
    super(store, name, meta, 'k');
  }

  /**
   * Creates the filter `name` for `capacity` keys, or opens it if it exists with the same
   * parameters; `RedisFilterMismatchError` if it exists with others or is of another kind.
   */
  static create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisCuckooFilterOptions & { funnel?: F },
  ): Promise<RedisCuckooFilter<KeyOf<F>>> {
    return createSharded(RedisCuckooFilter.type, client, name, options) as Promise<
      RedisCuckooFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisCuckooFilter<K>> {
    return openSharded(RedisCuckooFilter.type, client, name, options) as Promise<
      RedisCuckooFilter<K>
    >;
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

  protected cellArgs(offsets: Float64Array, base: number): string[] {
    return [
      String(offsets[base]),
      String(offsets[base + 1]),
      String(offsets[base + 2]),
      String(this.shape.shardBits),
      String(MAX_KICKS),
    ];
  }

  protected readArgs(key: string, offsets: Float64Array, base: number): string[] {
    const args = ['BITFIELD_RO', key, 'GET', 'u32', '0', 'GET', 'u32', '32'];
    for (const b of [offsets[base + 1]!, offsets[base + 2]!]) {
      for (let s = 0; s < SLOTS; s++) args.push('GET', 'u16', `#${4 + b * SLOTS + s}`);
    }
    return args;
  }

  /** Whether a read reply (header, then 8 slots) holds key j's fingerprint. */
  private static holds(reply: unknown[], placed: PlacedKeys, j: number): boolean {
    const f = placed.offsets[3 * j]!;
    for (let i = 2; i < reply.length; i++) if (Number(reply[i]) === f) return true;
    return false;
  }

  /** Adds `key`; true iff it was certainly new. `FilterFullError` (nothing lost) when full. */
  async add(key: K): Promise<boolean> {
    return (await this.writeOne('add', CUCKOO_ADD, key)) === 1;
  }

  /** False if `key` is certainly absent; true if it is probably present. */
  async has(key: K): Promise<boolean> {
    return (await this.readAll('has', [key], undefined, RedisCuckooFilter.holds))[0]!;
  }

  /** Removes one occurrence of `key`; false (and no change) if none is there. */
  async remove(key: K): Promise<boolean> {
    return (await this.writeOne('remove', CUCKOO_REMOVE, key)) === 1;
  }

  /** Adds every key, a window at a time; resolves to how many were new. */
  async addMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<number> {
    let added = 0;
    await this.writeAll('addMany', CUCKOO_ADD, keys, options, (_, r) => (added += r));
    return added;
  }

  /** `has` of every key, in order, a window at a time. */
  hasMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]> {
    return this.readAll('hasMany', keys, options, RedisCuckooFilter.holds);
  }

  /** `remove` of every key, a window at a time; each key is sent at most once. */
  async removeMany(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.writeAll('removeMany', CUCKOO_REMOVE, keys, options, (i, r) => (out[i] = r === 1));
    return out;
  }

  /**
   * The rate the occupancy implies: a key never added meets 8 slots, each holding its fingerprint
   * with probability α/65535 at load α, so 1 − (1 − α/65535)^8.
   */
  async expectedFpp(): Promise<number> {
    const load = (await this.estimatedCount()) / (this.shape.shards * this.shape.shardBits * SLOTS);
    return 1 - (1 - load / 65535) ** (2 * SLOTS);
  }

  /** Number of fingerprints stored (occupied slots), over all shards. */
  async estimatedCount(): Promise<number> {
    return this.store.op('estimatedCount', async () => {
      const replies = await this.store.all(this.shape.shards, (i) =>
        this.store.sendBinary(this.keys.get(i), ['GET', this.keys.get(i)]),
      );
      let used = 0;
      for (const r of replies) {
        const b = r as Buffer | null;
        if (b === null) continue;
        for (let i = 8; i + 1 < b.length; i += 2) if (b[i] !== 0 || b[i + 1] !== 0) used++;
      }
      return used;
    });
  }
}
