/**
 * What the Redis filters share: `RedisShardedFilter`, the base of the filters of one sharded
 * layout (layout.ts), `RedisBloomFilter` (cells are bits) and `RedisCountingBloomFilter` (cells
 * are 4-bit counters); the bit reads the scalable filter's layers use too; and the steps every
 * filter's `create` and `open` take on its metadata (see store.ts for the fields).
 *
 * The base holds the shape and expiry read from the metadata when the filter is created or opened
 * (never recomputed), finds a key's shard and cells (`Locator`, `ShardKeys`), runs a batch as one
 * pipelined command per key, and deletes the shards. A subclass says what each command is.
 */

import { show } from '../errors.js';
import type { Key } from '../hash/keys.js';
import { RedisFilterNotFoundError } from './errors.js';
import { checkName, metaKey, ShardKeys, type ShardKind, shardKey } from './keys.js';
import { Locator, placeAll } from '../sharded/layout.js';
import { paramFields, readExpiry, readShape, shapeFields } from './shape.js';
import type { ShardedBloomShape } from '../sharded/sharded-bloom.js';
import {
  checkKind,
  checkMeta,
  type Meta,
  type MetaFields,
  type RedisConnection,
  type RedisFilterConnectionOptions,
  RedisStore,
  ttlMs,
} from './store.js';

// Replies are arrays of integers: numbers by default, strings or bigints under a client's
// `typeMapping`, hence Number().

/** Whether every bit of a `BITFIELD ... GET u1 ...` reply is 1. */
export function allSet(reply: unknown): boolean {
  const bits = reply as number[];
  for (let i = 0; i < bits.length; i++) if (Number(bits[i]) === 0) return false;
  return true;
}

/** `BITFIELD_RO key GET u1 o₁ … GET u1 o_k` for the k offsets at offsets[base, base + k). */
export function readBitsArgs(
  key: string,
  offsets: Float64Array,
  base: number,
  k: number,
): string[] {
  const args = new Array<string>(2 + 3 * k);
  args[0] = 'BITFIELD_RO';
  args[1] = key;
  for (let j = 0, p = 2; j < k; j++, p += 3) {
    args[p] = 'GET';
    args[p + 1] = 'u1';
    args[p + 2] = String(offsets[base + j]);
  }
  return args;
}

/** The metadata of filter `name`; `RedisFilterNotFoundError` if there is none. */
export async function readFilterMeta(store: RedisStore, name: string): Promise<Meta> {
  const meta = await store.readMeta(metaKey(name));
  if (meta === undefined) throw new RedisFilterNotFoundError(`no Redis filter named ${show(name)}`);
  return meta;
}

/** Opens the existing filter `name` of `kind`: its metadata, checked. */
export async function openFilterMeta(store: RedisStore, name: string, kind: string): Promise<Meta> {
  const meta = await store.op('open', () => readFilterMeta(store, name));
  checkKind(name, meta, kind);
  return meta;
}

/**
 * Creates the metadata of filter `name` with `fields` unless it exists (atomically: racing
 * creators all get the same filter), then checks the stored filter: `FormatError` for another
 * metadata version, `RedisFilterMismatchError` if it is of another kind than `fields.kind` or any
 * of `requested` differs. `what` names the operation in errors.
 */
export async function createFilterMeta(
  store: RedisStore,
  what: string,
  name: string,
  fields: MetaFields,
  requested: Readonly<Record<string, string | undefined>>,
  ttl: number | undefined,
): Promise<Meta> {
  const { meta } = await store.op(what, () => store.createMeta(metaKey(name), fields, ttl));
  checkKind(name, meta, fields.kind);
  checkMeta(name, meta, requested);
  return meta;
}

/** What `create` reads of every sharded filter's options besides the shape. */
interface ShardedCreateOptions extends RedisFilterConnectionOptions {
  ttl?: number;
}

/** A subclass of {@link RedisShardedFilter} as `create` and `open` need it. */
export interface ShardedFilterType<F> {
  /** The class name, to name the filter in errors (`RedisBloomFilter "seen"`). */
  readonly label: string;
  /** The metadata `kind`. */
  readonly kind: 'bloom' | 'counting';
  /** Its (private) constructor. */
  make(store: RedisStore, name: string, meta: Meta): F;
}

/**
 * `create` of a sharded filter: checks the name and options (`shapeOf` sizes the filter), then
 * creates the filter `name` or opens it if it exists with the same parameters.
 */
export async function createSharded<F, O extends ShardedCreateOptions>(
  type: ShardedFilterType<F>,
  client: RedisConnection,
  name: string,
  options: O,
  shapeOf: (options: O) => ShardedBloomShape,
): Promise<F> {
  checkName(name);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const shape = shapeOf(options);
  const ttl = ttlMs(options.ttl);
  const store = new RedisStore(client, `${type.label} ${show(name)}`, options);
  const fields = shapeFields(type.kind, shape, ttl);
  const params = paramFields(shape, ttl);
  return type.make(store, name, await createFilterMeta(store, 'create', name, fields, params, ttl));
}

/** `open` of a sharded filter: the existing filter `name`; `RedisFilterNotFoundError` if none. */
export async function openSharded<F>(
  type: ShardedFilterType<F>,
  client: RedisConnection,
  name: string,
  options: RedisFilterConnectionOptions,
): Promise<F> {
  checkName(name);
  const store = new RedisStore(client, `${type.label} ${show(name)}`, options);
  return type.make(store, name, await openFilterMeta(store, name, type.kind));
}

/** A command about one key: its shard and its k cells at offsets[base, base + k). */
type KeyCommand = (shard: number, offsets: Float64Array, base: number) => Promise<unknown>;

export abstract class RedisShardedFilter {
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
  /** `expireAt` as a script argument; '' without a TTL. */
  protected readonly expireArg: string;
  private readonly kind: ShardKind;

  protected constructor(store: RedisStore, name: string, meta: Meta, kind: ShardKind) {
    this.store = store;
    this.name = name;
    this.kind = kind;
    this.shape = readShape(name, meta);
    const { ttl, expireAt } = readExpiry(name, meta);
    this.ttlMs = ttl;
    this.expireAt = expireAt;
    this.expireArg = expireAt === undefined ? '' : String(expireAt);
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

  /** The Redis key of shard `i` (for inspection and tests). */
  shardKey(i: number): string {
    return shardKey(this.kind, this.name, i);
  }

  /**
   * Places every key (each is checked before anything is sent), then issues `command` for each,
   * pipelined, and returns `result` of each reply, in order.
   */
  protected async many(
    what: string,
    keys: Iterable<Key>,
    command: KeyCommand,
    result: (reply: unknown) => boolean,
  ): Promise<boolean[]> {
    const list = Array.isArray(keys) ? (keys as Key[]) : Array.from(keys);
    const placed = placeAll(this.locator, list);
    const k = this.shape.hashes;
    const out = new Array<boolean>(list.length);
    await this.store.op(what, () =>
      this.store.pipelined(
        placed.count,
        (i) => command(placed.shards[i]!, placed.offsets, i * k),
        (start, replies) => {
          for (let i = 0; i < replies.length; i++) out[start + i] = result(replies[i]);
        },
      ),
    );
    return out;
  }

  /** Forgets every key (deletes the shards; the metadata stays). Not atomic with concurrent adds. */
  async clear(): Promise<void> {
    await this.store.op('clear', () => this.store.del(this.allShardKeys()));
  }

  /** Deletes the filter: its shards and its metadata. */
  async destroy(): Promise<void> {
    await this.store.op('destroy', async () => {
      await this.store.del(this.allShardKeys());
      await this.store.del([metaKey(this.name)]);
    });
  }

  private allShardKeys(): string[] {
    return Array.from({ length: this.shape.shards }, (_, i) => this.keys.get(i));
  }
}
