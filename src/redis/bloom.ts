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
 * `add` is one `BITFIELD key SET u1 o₁ 1 … SET u1 o_k 1` (its old values say whether the key was
 * new: atomically, so two clients adding the same key never both see it as new) and `has` one
 * `BITFIELD_RO key GET u1 o₁ … GET u1 o_k`. Offsets are Redis' bit order: bit o is the
 * `0x80 >>> (o & 7)` bit of byte `o >>> 3` (most significant first).
 * With a TTL, adds go through a Lua script that also gives a new shard the filter's expiry.
 *
 * `addMany`/`hasMany` hash every key first (a bad key throws before anything is sent), then
 * pipeline one command per key; on a cluster each node gets its own pipelined stream.
 *
 * `toBytes()` writes the native format of `ShardedBloomFilter` (same layout, same bytes), and
 * `fromBytes()` ORs such bytes into Redis: build offline, serve from Redis; back up to a file.
 */

import { show } from '../errors.js';
import type { Key } from '../hash/keys.js';
import { estimateCount, expectedFpp } from '../math.js';
import { checkName, metaKey } from './keys.js';
import { BLOOM_ADD_EXPIRING, OR_SHARD } from './scripts.js';
import { paramFields, shapeFields } from './shape.js';
import { ShardedBloomFilter, type ShardedBloomOptions, shardedShape } from '../sharded/sharded-bloom.js';
import { decodeShardedParts, encodeSharded } from '../sharded/sharded-codec.js';
import {
  allSet,
  createFilterMeta,
  createSharded,
  openSharded,
  RedisShardedFilter,
  readBitsArgs,
  type ShardedFilterType,
} from './sharded-filter.js';
import {
  type Meta,
  type RedisConnection,
  type RedisFilterConnectionOptions,
  RedisStore,
  ttlMs,
} from './store.js';

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

export class RedisBloomFilter extends RedisShardedFilter {
  private static readonly type: ShardedFilterType<RedisBloomFilter> = {
    label: 'RedisBloomFilter',
    kind: 'bloom',
    make: (store, name, meta) => new RedisBloomFilter(store, name, meta),
  };

  private constructor(store: RedisStore, name: string, meta: Meta) {
    super(store, name, meta, 'b');
  }

  /**
   * Creates the filter `name` sized for (capacity, fpp), or opens it if it exists with the same
   * parameters (clients racing to create it all get the same filter). Rejects with
   * `RedisFilterMismatchError` if it exists with other parameters or is of another kind.
   */
  static create(
    client: RedisConnection,
    name: string,
    options: RedisBloomFilterOptions,
  ): Promise<RedisBloomFilter> {
    return createSharded(RedisBloomFilter.type, client, name, options, shardedShape);
  }

  /** Opens the existing filter `name`; `RedisFilterNotFoundError` if there is none. */
  static open(
    client: RedisConnection,
    name: string,
    options: RedisFilterConnectionOptions = {},
  ): Promise<RedisBloomFilter> {
    return openSharded(RedisBloomFilter.type, client, name, options);
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
    const store = new RedisStore(client, `RedisBloomFilter ${show(name)}`, options);
    const fields = shapeFields('bloom', shape, ttl);
    const params = {
      ...paramFields(shape, ttl),
      shards: fields.shards,
      bits: fields.bits,
      hashes: fields.hashes,
    };
    const meta = await createFilterMeta(store, 'import', name, fields, params, ttl);
    const filter = new RedisBloomFilter(store, name, meta);
    const shardBytes = shape.shardBits / 8;
    await store.op('import', async () => {
      for (let i = 0; i < shape.shards; i++) {
        const part = payload.subarray(i * shardBytes, (i + 1) * shardBytes);
        if (isZero(part)) continue;
        const key = filter.keys.get(i);
        await store.eval(
          OR_SHARD,
          [key, store.scratchKey(key)],
          [Buffer.from(part.buffer, part.byteOffset, part.byteLength), filter.expireArg],
        );
      }
    });
    return filter;
  }

  /** Total bits, S·b. */
  get bitSize(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  /** The Redis key of the metadata hash. */
  get metaKey(): string {
    return metaKey(this.name);
  }

  private addCommand(shard: number, offsets: Float64Array, base: number): Promise<unknown> {
    const k = this.shape.hashes;
    const key = this.keys.get(shard);
    if (this.expireArg !== '') {
      const args = new Array<string>(k + 1);
      args[0] = this.expireArg;
      for (let j = 0; j < k; j++) args[j + 1] = String(offsets[base + j]);
      return this.store.eval(BLOOM_ADD_EXPIRING, [key], args);
    }
    const args = new Array<string>(2 + 4 * k);
    args[0] = 'BITFIELD';
    args[1] = key;
    for (let j = 0, p = 2; j < k; j++, p += 4) {
      args[p] = 'SET';
      args[p + 1] = 'u1';
      args[p + 2] = String(offsets[base + j]);
      args[p + 3] = '1';
    }
    return this.store.send(key, false, args);
  }

  private hasCommand(shard: number, offsets: Float64Array, base: number): Promise<unknown> {
    const key = this.keys.get(shard);
    return this.store.send(key, true, readBitsArgs(key, offsets, base, this.shape.hashes));
  }

  private wasNew(reply: unknown): boolean {
    return this.expireArg !== '' ? Number(reply) === 1 : !allSet(reply);
  }

  /** Adds `key`. True iff it was certainly new (some bit was 0), as Guava's `put`. */
  async add(key: Key): Promise<boolean> {
    const shard = this.locator.locate(key);
    const command = this.addCommand(shard, this.locator.offsets, 0);
    return this.wasNew(await this.store.op('add', () => command));
  }

  /** False if `key` was certainly never added; true if it probably was. */
  async has(key: Key): Promise<boolean> {
    const shard = this.locator.locate(key);
    const command = this.hasCommand(shard, this.locator.offsets, 0);
    return allSet(await this.store.op('has', () => command));
  }

  /**
   * Adds every key, pipelined; result i says whether key i was new (a key repeated in the batch is
   * new at most once). Every key is checked before anything is sent. If the call fails, some keys
   * may have been added: retrying the whole batch is safe.
   */
  addMany(keys: Iterable<Key>): Promise<boolean[]> {
    return this.many(
      'addMany',
      keys,
      (s, o, b) => this.addCommand(s, o, b),
      (r) => this.wasNew(r),
    );
  }

  /** `has` for every key, pipelined. */
  hasMany(keys: Iterable<Key>): Promise<boolean[]> {
    return this.many('hasMany', keys, (s, o, b) => this.hasCommand(s, o, b), allSet);
  }

  /** Number of bits set, over all shards (BITCOUNT each). */
  async bitCount(): Promise<number> {
    let total = 0;
    await this.store.op('bitCount', () =>
      this.store.pipelined(
        this.shape.shards,
        (i) => this.store.send(this.keys.get(i), true, ['BITCOUNT', this.keys.get(i)]),
        (_, replies) => {
          for (const r of replies) total += Number(r);
        },
      ),
    );
    return total;
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
   * call started is in it; adds made meanwhile may or may not be).
   */
  async toLocal(): Promise<ShardedBloomFilter> {
    const local = new ShardedBloomFilter(this.shape);
    await this.store.op('export', async () => {
      const shardBytes = this.shape.shardBits / 8;
      for (let i = 0; i < this.shape.shards; i++) {
        const target = local.shard(i);
        const key = this.keys.get(i);
        for (let from = 0; from < shardBytes; from += READ_CHUNK) {
          const to = Math.min(shardBytes, from + READ_CHUNK);
          const reply = await this.store.sendBinary(key, [
            'GETRANGE',
            key,
            String(from),
            String(to - 1),
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
