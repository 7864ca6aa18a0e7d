/**
 * A stored filter's metadata (store.ts; fields in docs/FORMAT.md): creating its fields from a
 * shape, reading them back (checked: `FormatError` naming the field for anything malformed),
 * comparing them with what a caller asked for, its version, ids, generations and TTLs. Readers
 * take the shape (S, b, k) from the metadata and never recompute it.
 *
 * `who` names the filter in messages, e.g. `Redis filter "seen"` ({@link who}).
 */

import { FormatError, show } from '../errors.js';
import { crc32cOf } from '../formats/crc32c.js';
import { checkFunnel, type Funnel } from '../hash/keys.js';
import { checkLayout } from './layout.js';
import type { ShardedBloomShape } from './sharded-bloom.js';
import type { Epoch, Meta, MetaFields, ShardStore } from './store.js';

/** How messages name filter `name` of `store`. */
export function who(store: ShardStore, name: string): string {
  return `${store.noun} ${show(name)}`;
}

/** Reads an integer field of the metadata, or throws `FormatError`. */
export function metaInt(meta: Meta, field: string, who: string): number {
  const raw = meta[field];
  const value = raw === undefined ? Number.NaN : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || String(value) !== raw) {
    throw new FormatError(`${who} has a bad ${field} in its metadata: ${show(raw)}`);
  }
  return value;
}

/**
 * Throws the store's mismatch error for the first field of `requested` whose value differs from
 * the stored one (a missing value is `undefined`).
 */
export function checkMeta(
  store: ShardStore,
  name: string,
  meta: Meta,
  requested: Readonly<Record<string, string | undefined>>,
): void {
  for (const [field, value] of Object.entries(requested)) {
    if (meta[field] !== value) throw store.mismatch(name, field, meta[field], value);
  }
}

/** The metadata version this bloomkit writes and reads. */
export const META_VERSION = '2';

/** Checks the metadata version and kind of an existing filter. */
export function checkKind(store: ShardStore, name: string, meta: Meta, kind: string): void {
  if (meta.v !== META_VERSION) {
    throw new FormatError(
      `${who(store, name)} has metadata version ${show(meta.v)}; this bloomkit reads version ${META_VERSION}`,
    );
  }
  checkMeta(store, name, meta, { kind });
}

/**
 * The fields of a filter's metadata that its `sum` covers: every field written once at creation
 * that decides how keys are hashed or placed (`funnel` above all: it cannot be derived from the
 * others, so an edited funnel would otherwise hash every key to other cells and answer false).
 * `layers` and `layer:i` change as a scalable filter grows and are checked against the spec their
 * index gives instead; `id`, `gen`, `ready` and `expireAt` are the store's.
 */
const SUMMED = [
  'kind',
  'funnel',
  'capacity',
  'fpp',
  'shardBits',
  'shards',
  'bits',
  'hashes',
  'growth',
  'ratio',
  'ttl',
] as const;

/**
 * The `sum` field of metadata `meta`: CRC-32C (8 hex digits) of `field=value\n` for each field of
 * {@link SUMMED} in that order (`field\n` when absent), so that changing, adding or deleting any of
 * them is seen.
 */
export function metaSum(meta: Readonly<Record<string, string | undefined>>): string {
  let text = '';
  for (const field of SUMMED) {
    const value = meta[field];
    text += value === undefined ? `${field}\n` : `${field}=${value}\n`;
  }
  return crc32cOf(new TextEncoder().encode(text)).toString(16).padStart(8, '0');
}

/**
 * `FormatError` when the metadata's `sum` does not match its fields (one was edited). Metadata
 * written before bloomkit kept a `sum` has none and is not checked.
 */
export function checkSum(store: ShardStore, name: string, meta: Meta): void {
  if (meta.sum === undefined) return;
  const sum = metaSum(meta);
  if (meta.sum !== sum) {
    throw new FormatError(
      `${who(store, name)} has metadata whose fields do not match its sum (${show(meta.sum)}, the fields give ${show(sum)}): a field that decides hashing (${SUMMED.join(', ')}) was changed`,
    );
  }
}

/** A new filter id: a random u32 ≥ 1 (0 marks a missing shard). */
export function newId(): string {
  const word = new Uint32Array(1);
  do globalThis.crypto.getRandomValues(word);
  while (word[0] === 0 || word[0] === 2 ** 32 - 1);
  return String(word[0]);
}

/** Converts a `ttl` option (seconds, may be fractional) to whole ms, or throws `RangeError`. */
export function ttlMs(ttl: unknown): number | undefined {
  if (ttl === undefined) return undefined;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || Math.round(ttl * 1000) < 1) {
    throw new RangeError(
      `ttl must be a positive number of seconds (at least 0.001), got ${show(ttl)}`,
    );
  }
  return Math.round(ttl * 1000);
}

/** The filter's id and generation from its metadata; the store's lost error if they are bad. */
export function readEpoch(store: ShardStore, name: string, meta: Meta): Epoch {
  const id = metaInt(meta, 'id', who(store, name));
  const gen = metaInt(meta, 'gen', who(store, name));
  if (id < 1 || id >= 2 ** 32 || gen < 1 || gen >= 2 ** 32) {
    throw store.error(
      'lost',
      `${who(store, name)} has a bad id or gen in its metadata: ${show(meta.id)}, ${show(meta.gen)}`,
    );
  }
  return { id: String(id), gen };
}

/** The metadata fields that describe `shape` for a filter of `kind`. */
export function shapeFields(
  kind: string,
  shape: ShardedBloomShape,
  ttl: number | undefined,
): MetaFields {
  const fields: Record<string, string> & MetaFields = {
    kind,
    funnel: shape.funnel,
    capacity: String(shape.capacity),
    fpp: String(shape.fpp),
    shardBits: String(shape.maxShardBits),
    shards: String(shape.shards),
    bits: String(shape.shardBits),
    hashes: String(shape.hashes),
  };
  if (ttl !== undefined) fields.ttl = String(ttl);
  return fields;
}

/** The parameters a caller chose (compared with an existing filter's on create/open). */
export function paramFields(
  shape: ShardedBloomShape,
  ttl: number | undefined,
): Record<string, string | undefined> {
  return {
    funnel: shape.funnel,
    capacity: String(shape.capacity),
    fpp: String(shape.fpp),
    shardBits: String(shape.maxShardBits),
    ttl: ttl === undefined ? undefined : String(ttl),
  };
}

/** Reads the fpp field. */
export function metaFpp(meta: Meta, who: string): number {
  const fpp = Number(meta.fpp);
  if (!(fpp > 0 && fpp < 1)) {
    throw new FormatError(`${who} has a bad fpp in its metadata: ${show(meta.fpp)}`);
  }
  return fpp;
}

/** Reads the funnel field. */
export function metaFunnel(meta: Meta, who: string): Funnel {
  try {
    return checkFunnel(meta.funnel);
  } catch {
    throw new FormatError(`${who} has an unknown funnel ${show(meta.funnel)}`);
  }
}

/** The shape stored in the metadata of a bloom, counting or cuckoo filter. */
export function readShape(who: string, meta: Meta): ShardedBloomShape {
  const funnel = metaFunnel(meta, who);
  const shape: ShardedBloomShape = {
    capacity: metaInt(meta, 'capacity', who),
    fpp: metaFpp(meta, who),
    maxShardBits: metaInt(meta, 'shardBits', who),
    shards: metaInt(meta, 'shards', who),
    shardBits: metaInt(meta, 'bits', who),
    hashes: metaInt(meta, 'hashes', who),
    funnel,
  };
  try {
    checkLayout(shape);
  } catch (err) {
    throw new FormatError(`${who} has a bad shape: ${(err as Error).message}`);
  }
  return shape;
}

/** The TTL (ms) and expiry time (ms since the epoch) in the metadata, if any. */
export function readExpiry(
  who: string,
  meta: Meta,
): { ttl: number | undefined; expireAt: number | undefined } {
  if (meta.ttl === undefined) return { ttl: undefined, expireAt: undefined };
  return { ttl: metaInt(meta, 'ttl', who), expireAt: metaInt(meta, 'expireAt', who) };
}
