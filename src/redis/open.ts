/**
 * `create` and `open` of the sharded Redis filters (bloom, counting): every argument is checked
 * before anything is written; the metadata is created atomically (racing creators get the same
 * filter) and, on `open` as on `create`, checked: its version and kind, the caller's parameters,
 * and its shape (S, b, k) against what its own capacity, fpp and shardBits give, so tampered
 * metadata is a `FormatError` instead of silent false negatives. The server's eviction policy is
 * checked (store.ts) and the shards are created before the filter is used (sharded-filter.ts).
 */

import { FormatError, show } from '../errors.js';
import type { ShardedBloomShape } from '../sharded/sharded-bloom.js';
import type { RedisConnection } from './client.js';
import { RedisFilterNotFoundError } from './errors.js';
import { checkName, metaKey, shardKey } from './keys.js';
import { paramFields, readExpiry, readShape, shapeFields } from './shape.js';
import { initShards, readEpoch } from './sharded-filter.js';
import {
  checkKind,
  checkMeta,
  type Meta,
  type MetaFields,
  newId,
  type RedisFilterConnectionOptions,
  RedisStore,
  ttlMs,
} from './store.js';

/** What `create` reads of every sharded filter's options besides the shape. */
export interface ShardedCreateOptions extends RedisFilterConnectionOptions {
  ttl?: number;
}

/** A sharded filter class as `create` and `open` need it. */
export interface ShardedFilterType<F, O> {
  /** The class name, to name the filter in errors (`RedisBloomFilter "seen"`). */
  readonly label: string;
  /** The metadata `kind`. */
  readonly kind: 'bloom' | 'counting' | 'cuckoo';
  /** The shard key letter. */
  readonly letter: 'b' | 'c' | 'k';
  /** Sizes the filter from its options (`RangeError` for bad ones). */
  shapeOf(options: O): ShardedBloomShape;
  /** The options that give `shape` (to recompute a stored shape). */
  optionsOf(shape: ShardedBloomShape): O;
  /** Its (private) constructor. */
  make(store: RedisStore, name: string, meta: Meta): F;
}

/**
 * Checks that the stored shape is what the stored parameters give; `FormatError` naming the field
 * and both values if not.
 */
export function checkDerived<F, O>(type: ShardedFilterType<F, O>, name: string, meta: Meta): void {
  const stored = readShape(name, meta);
  let derived: ShardedBloomShape;
  try {
    derived = type.shapeOf(type.optionsOf(stored));
  } catch (err) {
    throw new FormatError(
      `Redis filter ${show(name)} has bad parameters in its metadata: ${(err as Error).message}`,
    );
  }
  const fields: [string, number, number][] = [
    ['shards', stored.shards, derived.shards],
    ['bits', stored.shardBits, derived.shardBits],
    ['hashes', stored.hashes, derived.hashes],
  ];
  for (const [field, has, wants] of fields) {
    if (has !== wants) {
      throw new FormatError(
        `Redis filter ${show(name)} has ${field} ${has} in its metadata, but its capacity ${meta.capacity}, fpp ${meta.fpp} and shardBits ${meta.shardBits} give ${wants}: the metadata was changed`,
      );
    }
  }
  readExpiry(name, meta);
  readEpoch(name, meta);
}

/** Creates the metadata of a new filter (or returns the existing one's) and checks it. */
export async function createMeta(
  store: RedisStore,
  name: string,
  fields: MetaFields,
  requested: Readonly<Record<string, string | undefined>>,
  ttl: number | undefined,
): Promise<Meta> {
  const all = { v: '2', id: newId(), gen: '1', ...fields } as MetaFields;
  const { meta } = await store.createMeta(metaKey(name), all, ttl);
  checkKind(name, meta, fields.kind);
  checkMeta(name, meta, requested);
  return meta;
}

/**
 * `create` of a sharded filter: checks the name and options (nothing is written before), the
 * server's eviction policy, then creates the filter `name` or opens it if it exists with the same
 * parameters.
 */
export async function createSharded<F, O>(
  type: ShardedFilterType<F, O>,
  client: RedisConnection,
  name: string,
  options: O & ShardedCreateOptions,
): Promise<F> {
  checkName(name);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const shape = type.shapeOf(options);
  const ttl = ttlMs(options.ttl);
  const store = new RedisStore(client, `${type.label} ${show(name)}`, options);
  return store.op('create', async () => {
    await store.checkEviction(ttl !== undefined);
    const fields = shapeFields(type.kind, shape, ttl);
    const meta = await createMeta(store, name, fields, paramFields(shape, ttl), ttl);
    return ready(type, store, name, meta);
  });
}

/** `open` of a sharded filter: the existing filter `name`; `RedisFilterNotFoundError` if none. */
export async function openSharded<F, O>(
  type: ShardedFilterType<F, O>,
  client: RedisConnection,
  name: string,
  options: RedisFilterConnectionOptions,
): Promise<F> {
  checkName(name);
  const store = new RedisStore(client, `${type.label} ${show(name)}`, options);
  return store.op('open', async () => {
    const meta = await store.readMeta(metaKey(name));
    if (meta === undefined) {
      throw new RedisFilterNotFoundError(
        `no Redis filter named ${show(name)} (never created, destroyed, or expired)`,
      );
    }
    checkKind(name, meta, type.kind);
    await store.checkEviction(meta.ttl !== undefined);
    return ready(type, store, name, meta);
  });
}

/** Checks the stored shape, creates the shards if a creator has not finished, and makes the filter. */
export async function ready<F, O>(
  type: ShardedFilterType<F, O>,
  store: RedisStore,
  name: string,
  meta: Meta,
): Promise<F> {
  checkDerived(type, name, meta);
  if (meta.ready !== '1') {
    const shape = readShape(name, meta);
    const { expireAt } = readExpiry(name, meta);
    const epoch = readEpoch(name, meta);
    await initShards(
      store,
      name,
      epoch,
      expireAt,
      (i) => shardKey(type.letter, name, i),
      shape.shards,
    );
  }
  return type.make(store, name, meta);
}
