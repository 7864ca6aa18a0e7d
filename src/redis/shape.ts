/**
 * A sharded filter's parameters and shape as metadata fields, and back (see store.ts for the
 * fields). Readers take the shape (S, b, k) from the metadata and never recompute it.
 */

import { FormatError, show } from '../errors.js';
import { checkFunnel, type Funnel } from '../hash/keys.js';
import { checkLayout } from '../sharded/layout.js';
import type { ShardedBloomShape } from '../sharded/sharded-bloom.js';
import { type Meta, type MetaFields, metaInt } from './store.js';

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
export function metaFpp(meta: Meta, name: string): number {
  const fpp = Number(meta.fpp);
  if (!(fpp > 0 && fpp < 1)) {
    throw new FormatError(
      `Redis filter ${show(name)} has a bad fpp in its metadata: ${show(meta.fpp)}`,
    );
  }
  return fpp;
}

/** Reads the funnel field. */
export function metaFunnel(meta: Meta, name: string): Funnel {
  try {
    return checkFunnel(meta.funnel);
  } catch {
    throw new FormatError(`Redis filter ${show(name)} has an unknown funnel ${show(meta.funnel)}`);
  }
}

/** The shape stored in the metadata of a bloom or counting filter. */
export function readShape(name: string, meta: Meta): ShardedBloomShape {
  const funnel = metaFunnel(meta, name);
  const shape: ShardedBloomShape = {
    capacity: metaInt(meta, 'capacity', name),
    fpp: metaFpp(meta, name),
    maxShardBits: metaInt(meta, 'shardBits', name),
    shards: metaInt(meta, 'shards', name),
    shardBits: metaInt(meta, 'bits', name),
    hashes: metaInt(meta, 'hashes', name),
    funnel,
  };
  try {
    checkLayout(shape);
  } catch (err) {
    throw new FormatError(`Redis filter ${show(name)} has a bad shape: ${(err as Error).message}`);
  }
  return shape;
}

/** The TTL (ms) and expiry time (ms since the epoch) in the metadata, if any. */
export function readExpiry(
  name: string,
  meta: Meta,
): { ttl: number | undefined; expireAt: number | undefined } {
  if (meta.ttl === undefined) return { ttl: undefined, expireAt: undefined };
  return { ttl: metaInt(meta, 'ttl', name), expireAt: metaInt(meta, 'expireAt', name) };
}
