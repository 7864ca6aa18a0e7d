/**
 * `RedisBloomFilter`: a Bloom filter in plain Redis (>= 6.2, no modules), on one server or a Redis
 * Cluster, shared by every process that opens it by name.
 *
 * Guarantee: `has` is true for every key whose `add` was acknowledged, from any client, for as long
 * as the keys exist (a server without persistence forgets everything when it restarts; run it with
 * AOF `appendfsync always` to keep every acknowledged add across a crash). For a key never added the
 * rate is that of the blocked layout (layout.ts): about the requested fpp at `capacity` keys.
 *
 * Layout: S shards (Redis strings of b ≤ `shardBits` bits, default 2^23 = 1 MiB, keys
 * `bk:b:{name:i}`), chosen by the key's hash; all k positions of a key are inside its shard, so
 * `add` is one script (scripts.ts BLOOM_ADD) that checks the shard's header and runs
 * `BITFIELD key SET u1 o₁ 1 … SET u1 o_k 1` (its old values say whether the key was new:
 * atomically, so two clients adding the same key never both see it as new), and `has` one
 * `BITFIELD_RO key GET u32 0 GET u32 32 GET u1 o₁ … GET u1 o_k` (header and bits in one read).
 * Cell o of a shard is bit 64 + o of its string (after the 8-byte header), in Redis' bit order:
 * bit p is the `0x80 >>> (p & 7)` bit of byte `p >>> 3` (most significant first).
 *
 * `addMany`/`hasMany` take any iterable or async iterable and send a window of keys at a time
 * (store.ts); on a cluster each node gets its own pipelined stream.
 *
 * `toBytes()` writes the native format of `ShardedBloomFilter` (same layout, same bytes), and
 * `fromBytes()` ORs such bytes into Redis: build offline, serve from Redis; back up to a file.
 */

import { show } from '../errors.js';
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import { estimateCount, expectedFpp } from '../math.js';
import {
  ShardedBloomFilter,
  type ShardedBloomOptions,
  type ShardedBloomShape,
  shardedShape,
} from '../sharded/sharded-bloom.js';
import { decodeShardedParts, encodeSharded } from '../sharded/sharded-codec.js';
import type { RedisConnection } from './client.js';
import { checkName } from './keys.js';
import {
  checkDerived,
  createMeta,
  createSharded,
  openSharded,
  ready,
  type ShardedFilterType,
} from './open.js';
import { BLOOM_ADD, HEADER_BITS, type LuaScript, OR_SHARD, REPLY } from './scripts.js';
import { paramFields, shapeFields } from './shape.js';
import { headerProblem, lostShard, RedisShardedFilter } from './sharded-filter.js';
import { type Meta, type RedisFilterConnectionOptions, RedisStore, ttlMs } from './store.js';

/** Options of {@link RedisBloomFilter.create}. */
export interface RedisBloomFilterOptions extends ShardedBloomOptions, RedisFilterConnectionOptions {
  /**
   * Time to live in seconds (fractions allowed, ms precision): the filter and all its keys expire
   * together this long after it was created (server clock). Default: never.
   */
  ttl?: number;
}

/** Options of {@link RedisBloomFilter.fromBytes}. */
export interface RedisImportOptions extends RedisFilterConnectionOptions {
  /** TTL (seconds) when the import creates the filter; must match an existing filter's. */
  ttl?: number;
}

/** Reads shard bytes in chunks of this many bytes (GETRANGE), so no reply is huge. */
const READ_CHUNK = 8 * 1024 * 1024;
const HEADER_BYTES = HEADER_BITS / 8;

// Replies are arrays of integers: numbers by default, strings or bigints under a client's
// `typeMapping`, hence Number().

/** Whether every bit of a read reply (header first) is 1. */
function allSet(reply: unknown[]): boolean {
  for (let i = 2; i < reply.length; i++) if (Number(reply[i]) === 0) return false;
  return true;
}

export class RedisBloomFilter<K extends Key = Key>
  extends RedisShardedFilter<K>
  implements AsyncMembershipFilter<K>
{
  private static readonly type: ShardedFilterType<RedisBloomFilter, ShardedBloomOptions> = {
    label: 'RedisBloomFilter',
    kind: 'bloom',
    letter: 'b',
    shapeOf: shardedShape,
    optionsOf: (s: ShardedBloomShape) => ({
      capacity: s.capacity,
      fpp: s.fpp,
      shardBits: s.maxShardBits,
      funnel: s.funnel,
    }),
    make: (store, name, meta) => new RedisBloomFilter(store, name, meta),
  };

  private constructor(store: RedisStore, name: string, meta: Meta) {
    super(store, name, meta, 'b');
  }

  /**
   * Creates the filter `name` sized for (capacity, fpp), or opens it if it exists with the same
   * parameters (clients racing to create it all get the same filter). Rejects with
   * `RedisFilterMismatchError` if it exists with other parameters or is of another kind, and
   * with `RedisEvictionPolicyError` if the server may evict its keys (see `allowEviction`).
   * Every option is checked before anything is written.
   */
  static create<F extends Funnel = 'string'>(
    client: RedisConnection,
    name: string,
    options: RedisBloomFilterOptions & { funnel?: F },
  ): Promise<RedisBloomFilter<KeyOf<F>>> {
    return createSharded(RedisBloomFilter.type, client, name, options) as Promise<
      RedisBloomFilter<KeyOf<F>>
    >;
  }

  /**
   * Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none, `FormatError`
   * if its metadata is inconsistent.
   */
  static open<K extends Key = Key>(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisBloomFilter<K>> {
    return openSharded(RedisBloomFilter.type, client, name, options) as Promise<
      RedisBloomFilter<K>
    >;
  }

  /**
   * Loads native-format bytes of a `ShardedBloomFilter` (or of `toBytes()`) into the filter
   * `name`: creates it with the bytes' parameters if it does not exist, and ORs the bits into
   * every shard (a union: nothing already there is lost). Loading into a new filter reproduces
   * the source exactly. Each shard is merged atomically (BITOP in a Lua script), the whole is not.
   */
  static async fromBytes(
    client: RedisConnection,
    name: string,
    bytes: Uint8Array,
    options: RedisImportOptions = {},
  ): Promise<RedisBloomFilter> {
    checkName(name);
    const { shape, payload } = decodeShardedParts(bytes);
    const ttl = ttlMs(options.ttl);
    const type = RedisBloomFilter.type;
    const store = new RedisStore(client, `RedisBloomFilter ${show(name)}`, options);
    return store.op('import', async () => {
      await store.checkEviction(ttl !== undefined);
      const fields = shapeFields('bloom', shape, ttl);
      const params = {
        ...paramFields(shape, ttl),
        shards: fields.shards,
        bits: fields.bits,
        hashes: fields.hashes,
      };
      const meta = await createMeta(store, name, fields, params, ttl);
      checkDerived(type, name, meta);
      const filter = (await ready(type, store, name, meta)) as RedisBloomFilter;
      const shardBytes = shape.shardBits / 8;
      const { id, gen } = filter.epoch;
      for (let i = 0; i < shape.shards; i++) {
        const part = payload.subarray(i * shardBytes, (i + 1) * shardBytes);
        if (isZero(part)) continue;
        const key = filter.keys.get(i);
        const value = Buffer.alloc(HEADER_BYTES + part.length);
        value.set(part, HEADER_BYTES);
        const r = Number(
          await store.eval(OR_SHARD, [key, `${key}:tmp:${id}`], [id, String(gen), value]),
        );
        if (r === REPLY.lost || r === REPLY.replaced || r === REPLY.cleared) {
          throw await lostShard(store, name, filter.epoch, key);
        }
      }
      return filter;
    });
  }

  /** Total bits, S·b. */
  get bitSize(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  protected cellArgs(offsets: Float64Array, base: number): string[] {
    const k = this.shape.hashes;
    const args = new Array<string>(k);
    for (let j = 0; j < k; j++) args[j] = String(offsets[base + j]! + HEADER_BITS);
    return args;
  }

  protected override fastArgs(
    script: LuaScript,
    key: string,
    offsets: Float64Array,
    base: number,
  ): string[] | null {
    if (script !== BLOOM_ADD) return null;
    const k = this.shape.hashes;
    const args = new Array<string>(8 + 4 * k);
    args[0] = 'BITFIELD';
    args[1] = key;
    args[2] = 'GET';
    args[3] = 'u32';
    args[4] = '0';
    args[5] = 'GET';
    args[6] = 'u32';
    args[7] = '32';
    for (let j = 0, p = 8; j < k; j++, p += 4) {
      args[p] = 'SET';
      args[p + 1] = 'u1';
      args[p + 2] = String(offsets[base + j]! + HEADER_BITS);
      args[p + 3] = '1';
    }
    return args;
  }

  /** 1 if some bit was 0 before the write (the key was new). */
  protected override fastResult(reply: unknown[]): number {
    return allSet(reply) ? 0 : 1;
  }

  protected readArgs(key: string, offsets: Float64Array, base: number): string[] {
    const k = this.shape.hashes;
    const args = new Array<string>(8 + 3 * k);
    args[0] = 'BITFIELD_RO';
    args[1] = key;
    args[2] = 'GET';
    args[3] = 'u32';
    args[4] = '0';
    args[5] = 'GET';
    args[6] = 'u32';
    args[7] = '32';
    for (let j = 0, p = 8; j < k; j++, p += 3) {
      args[p] = 'GET';
      args[p + 1] = 'u1';
      args[p + 2] = String(offsets[base + j]! + HEADER_BITS);
    }
    return args;
  }

  /** Adds `key`. True iff it was certainly new (some bit was 0), as Guava's `put`. */
  async add(key: K): Promise<boolean> {
    return (await this.writeOne('add', BLOOM_ADD, key)) === 1;
  }

  /** False if `key` was certainly never added; true if it probably was. */
  async has(key: K): Promise<boolean> {
    return (await this.readAll('has', [key], undefined, allSet))[0]!;
  }

  /**
   * Adds every key, a window at a time; resolves to how many were new (a key repeated in the
   * batch is new at most once). On failure the error's `batch` says which keys were applied;
   * adding is idempotent, so resending any of them is safe.
   */
  async addMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<number> {
    let added = 0;
    await this.writeAll('addMany', BLOOM_ADD, keys, options, (_, r) => (added += r));
    return added;
  }

  /** Like {@link addMany}, with whether each key was new, in order. */
  async addEach(
    keys: Iterable<K> | AsyncIterable<K>,
    options?: ProgressOptions,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    await this.writeAll('addEach', BLOOM_ADD, keys, options, (i, r) => (out[i] = r === 1));
    return out;
  }

  /** `has` of every key, in order, a window at a time. */
  hasMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]> {
    return this.readAll('hasMany', keys, options, allSet);
  }

  /** Number of bits set, over all shards (BITCOUNT of each after its header). */
  async bitCount(): Promise<number> {
    return this.store.op('bitCount', async () => {
      const replies = await this.store.all(this.shape.shards, (i) =>
        this.store.send(this.keys.get(i), true, [
          'BITCOUNT',
          this.keys.get(i),
          String(HEADER_BYTES),
          '-1',
        ]),
      );
      let total = 0;
      for (const r of replies) total += Number(r);
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
   * A local copy with the same layout and bits (read shard by shard: every key added before the
   * call started is in it; adds made meanwhile may or may not be). `RedisFilterLostError` if a
   * shard is missing.
   */
  async toLocal(): Promise<ShardedBloomFilter<K>> {
    const local = new ShardedBloomFilter<K>(this.shape);
    await this.store.op('export', async () => {
      const shardBytes = this.shape.shardBits / 8;
      for (let i = 0; i < this.shape.shards; i++) {
        const target = local.shard(i);
        const key = this.keys.get(i);
        const header = (await this.store.send(key, true, [
          'BITFIELD_RO',
          key,
          'GET',
          'u32',
          '0',
          'GET',
          'u32',
          '32',
        ])) as unknown[];
        if (headerProblem(header, this.epoch) !== null) {
          throw await lostShard(this.store, this.name, this.epoch, key);
        }
        for (let from = 0; from < shardBytes; from += READ_CHUNK) {
          const to = Math.min(shardBytes, from + READ_CHUNK);
          const reply = await this.store.sendBinary(key, [
            'GETRANGE',
            key,
            String(HEADER_BYTES + from),
            String(HEADER_BYTES + to - 1),
          ]);
          const chunk = reply as Buffer;
          target.set(chunk.subarray(0, to - from), from);
          if (chunk.length < to - from) break; // the rest of the string does not exist: zeros
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

function isZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}
