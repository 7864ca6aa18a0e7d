/**
 * `create` and `open` of the stored sharded filters (bloom, counting, cuckoo), over any store:
 * every argument is checked before anything is written; the metadata is created atomically
 * (racing creators get the same filter) and, on `open` as on `create`, checked: its version and
 * kind, the caller's parameters, and its shape (S, b, k) against what its own capacity, fpp and
 * shardBits give, and every field that decides hashing against the metadata's `sum` (meta.ts), so
 * tampered metadata is a `FormatError` instead of silent false negatives. The
 * store's durability is checked (`checkDurability`) and the shards are created before the filter
 * is used.
 */

import { FormatError, show } from '../errors.js';
import { initShards, readFilterMeta } from './epoch.js';
import {
  checkKind,
  checkMeta,
  checkSum,
  metaSum,
  newId,
  paramFields,
  readEpoch,
  readExpiry,
  readShape,
  shapeFields,
  ttlMs,
  who,
} from './meta.js';
import { checkName } from './names.js';
import type { StoreOps, StoreOptions } from './ops.js';
import type { ShardedBloomShape } from './sharded-bloom.js';
import type { Meta, MetaFields, ShardKind } from './store.js';

/** What `create` reads of every sharded filter's options besides the shape. */
export interface StoredCreateOptions extends StoreOptions {
  /**
   * Time to live in seconds (fractions allowed, ms precision): the filter and all its keys expire
   * together this long after it was created (store clock). Default: never.
   */
  ttl?: number;
}

/** A sharded filter class as `create` and `open` need it. */
export interface StoredFilterType<F, O> {
  /** The metadata `kind`, which is also the shard kind. */
  readonly kind: ShardKind & ('bloom' | 'counting' | 'cuckoo');
  /** Sizes the filter from its options (`RangeError` for bad ones). */
  shapeOf(options: O): ShardedBloomShape;
  /** The options that give `shape` (to recompute a stored shape). */
  optionsOf(shape: ShardedBloomShape): O;
  /** Its (protected) constructor. */
  make(ops: StoreOps, name: string, meta: Meta): F;
}

/**
 * Checks that the stored shape is what the stored parameters give; `FormatError` naming the field
 * and both values if not.
 */
export function checkDerived<F, O>(
  type: StoredFilterType<F, O>,
  ops: StoreOps,
  name: string,
  meta: Meta,
): void {
  const label = who(ops.store, name);
  const stored = readShape(label, meta);
  let derived: ShardedBloomShape;
  try {
    derived = type.shapeOf(type.optionsOf(stored));
  } catch (err) {
    throw new FormatError(`${label} has bad parameters in its metadata: ${(err as Error).message}`);
  }
  const fields: [string, number, number][] = [
    ['shards', stored.shards, derived.shards],
    ['bits', stored.shardBits, derived.shardBits],
    ['hashes', stored.hashes, derived.hashes],
  ];
  for (const [field, has, wants] of fields) {
    if (has !== wants) {
      throw new FormatError(
        `${label} has ${field} ${has} in its metadata, but its capacity ${meta.capacity}, fpp ${meta.fpp} and shardBits ${meta.shardBits} give ${wants}: the metadata was changed`,
      );
    }
  }
  readExpiry(label, meta);
  readEpoch(ops.store, name, meta);
  checkSum(ops.store, name, meta);
}

/** Creates the metadata of a new filter (or returns the existing one's) and checks it. */
export async function createMeta(
  ops: StoreOps,
  name: string,
  fields: MetaFields,
  requested: Readonly<Record<string, string | undefined>>,
  ttl: number | undefined,
): Promise<Meta> {
  const all = { v: '2', id: newId(), gen: '1', ...fields, sum: metaSum(fields) } as MetaFields;
  const { meta } = await ops.store.createMeta(name, all, ttl);
  checkKind(ops.store, name, meta, fields.kind);
  checkMeta(ops.store, name, meta, requested);
  return meta;
}

/**
 * `create` of a sharded filter in `ops`' store: checks the name and options (nothing is written
 * before), the store's durability, then creates the filter `name` or opens it if it exists with
 * the same parameters.
 */
export async function createStored<F, O>(
  type: StoredFilterType<F, O>,
  ops: () => StoreOps,
  name: string,
  options: O & StoredCreateOptions,
): Promise<F> {
  checkName(name);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const shape = type.shapeOf(options);
  const ttl = ttlMs(options.ttl);
  const run = ops();
  return run.op('create', async () => {
    await run.store.checkDurability(run.label, ttl !== undefined);
    const fields = shapeFields(type.kind, shape, ttl);
    const meta = await createMeta(run, name, fields, paramFields(shape, ttl), ttl);
    return ready(type, run, name, meta);
  });
}

/** `open` of a sharded filter: the existing filter `name`; the store's not-found error if none. */
export async function openStored<F, O>(
  type: StoredFilterType<F, O>,
  ops: () => StoreOps,
  name: string,
): Promise<F> {
  checkName(name);
  const run = ops();
  return run.op('open', async () => {
    const meta = await readFilterMeta(run.store, name);
    checkKind(run.store, name, meta, type.kind);
    await run.store.checkDurability(run.label, meta.ttl !== undefined);
    return ready(type, run, name, meta);
  });
}

/** Checks the stored shape, creates the shards if a creator has not finished, and makes the filter. */
export async function ready<F, O>(
  type: StoredFilterType<F, O>,
  ops: StoreOps,
  name: string,
  meta: Meta,
): Promise<F> {
  checkDerived(type, ops, name, meta);
  if (meta.ready !== '1') {
    const label = who(ops.store, name);
    const shape = readShape(label, meta);
    const { expireAt } = readExpiry(label, meta);
    const epoch = readEpoch(ops.store, name, meta);
    await initShards(
      ops,
      name,
      epoch,
      expireAt,
      (i) => ops.store.shardRef(type.kind, name, i),
      shape.shards,
    );
  }
  return type.make(ops, name, meta);
}
