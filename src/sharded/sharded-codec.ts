/**
 * The sharded Bloom filter (`ShardedBloomFilter`, the layout of `RedisBloomFilter`) in bloomkit's
 * native format: filter type `shardedBloom` (see FILTER_TYPES in formats/native.ts), hash scheme
 * 1 (MURMUR128_MITZ_64, applied within the key's shard; the shard choice is part of this type).
 *
 * Parameters (40 bytes, little-endian):
 *
 * | offset | size | field                                                           |
 * |--------|------|-----------------------------------------------------------------|
 * | 0      | 8    | capacity n, u64 (as created; not used to place keys)            |
 * | 8      | 8    | fpp p, f64 (as created; not used to place keys)                 |
 * | 16     | 8    | shard size limit asked for (`shardBits` option), u64            |
 * | 24     | 8    | bits per shard b, u64, a multiple of 64, at most the limit      |
 * | 32     | 4    | number of shards S, u32                                         |
 * | 36     | 4    | hashes per key k, u32 (1..255)                                  |
 *
 * Payload: S·b/8 bytes, shard 0 first; each shard is b/8 bytes in Redis' bit order (bit o of a
 * shard is byte o >>> 3, mask 0x80 >>> (o & 7), most significant bit first), i.e. exactly what
 * `GET` returns for the shard's key, zero-padded to b/8 bytes.
 *
 * Readers take S, b and k from the parameters and never recompute them from n and p.
 *
 * The payload is the filter's own `bytes`, byte for byte, so nothing needs a copy: `shardedParts`
 * views them for the streaming writer of `bloomkit/node`, `shardedSink` allocates the filter after
 * the header and parameters are checked and lets the reader fill its bytes in place, and
 * `decodeSharded(bytes, { copy: false })` views the payload inside `bytes` at any alignment.
 */

import { FormatError } from '../errors.js';
import {
  type ContainerParts,
  checkHashCount,
  checkParamsLength,
  containerParts,
  type DecodeOptions,
  decodeContainer,
  FILTER_TYPES,
  getU64,
  HASH_SCHEMES,
  headerFunnel,
  joinContainer,
  type NativeHeader,
  type PayloadSink,
  setU64,
} from '../formats/native.js';
import { FUNNEL_IDS } from '../hash/keys.js';
import { MAX_BITS } from '../math.js';
import { MAX_SHARD_BITS } from './layout.js';
import type { ShardedBloomFilter, ShardedBloomShape } from './sharded-bloom.js';

const PARAMS_BYTES = 40;

/** The 40 parameter bytes of a shape. */
export function encodeShardedParams(shape: ShardedBloomShape): Uint8Array {
  const params = new Uint8Array(PARAMS_BYTES);
  const v = new DataView(params.buffer);
  setU64(v, 0, shape.capacity);
  v.setFloat64(8, shape.fpp, true);
  setU64(v, 16, shape.maxShardBits);
  setU64(v, 24, shape.shardBits);
  v.setUint32(32, shape.shards, true);
  v.setUint32(36, shape.hashes, true);
  return params;
}

function shardedContainerParts(
  shape: ShardedBloomShape,
  shards: readonly Uint8Array[],
): ContainerParts {
  return containerParts(
    FILTER_TYPES.shardedBloom,
    HASH_SCHEMES.murmur128Mitz64,
    FUNNEL_IDS[shape.funnel],
    encodeShardedParams(shape),
    shards,
  );
}

export function encodeSharded(filter: ShardedBloomFilter): Uint8Array {
  return joinContainer(shardedParts(filter));
}

/** The container of `filter` as parts; the payload views the filter's bytes. */
export function shardedParts(filter: ShardedBloomFilter): ContainerParts {
  return shardedContainerParts(filter.shape, [filter.bytes]);
}

/** Checks a sharded header and parameters, including that L matches S·b/8 (nothing is allocated). */
function checkSharded(header: NativeHeader, params: DataView): ShardedBloomShape {
  if (header.type !== FILTER_TYPES.shardedBloom) {
    throw new FormatError(
      `expected filter type id ${FILTER_TYPES.shardedBloom}, the bytes hold type id ${header.type}`,
    );
  }
  checkParamsLength(header, PARAMS_BYTES, 'sharded bloom filter');
  if (header.hash !== HASH_SCHEMES.murmur128Mitz64) {
    throw new FormatError(`unknown hash scheme id ${header.hash} for a sharded bloom filter`);
  }
  const funnel = headerFunnel(header);
  const capacity = getU64(params, 0, 'capacity');
  const fpp = params.getFloat64(8, true);
  const maxShardBits = getU64(params, 16, 'shard size limit');
  const shardBits = getU64(params, 24, 'bits per shard');
  const shards = params.getUint32(32, true);
  const hashes = params.getUint32(36, true);
  if (capacity < 1) throw new FormatError(`bad capacity ${capacity}: must be at least 1`);
  if (!(fpp > 0 && fpp < 1)) throw new FormatError(`bad fpp ${fpp}: must be in (0, 1)`);
  if (maxShardBits < 64 || maxShardBits > MAX_SHARD_BITS || maxShardBits % 64 !== 0) {
    throw new FormatError(
      `bad shard size limit ${maxShardBits}: must be a multiple of 64 in [64, ${MAX_SHARD_BITS}]`,
    );
  }
  if (shardBits < 64 || shardBits > maxShardBits || shardBits % 64 !== 0) {
    throw new FormatError(
      `bad bits per shard ${shardBits}: must be a multiple of 64 in [64, ${maxShardBits}]`,
    );
  }
  if (shards < 1 || shards * shardBits > MAX_BITS) {
    throw new FormatError(
      `bad number of shards ${shards}: must be at least 1 with at most ${MAX_BITS} bits in all`,
    );
  }
  checkHashCount(hashes);
  const size = (shards * shardBits) / 8;
  if (header.payloadLength !== size) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, ${shards} shards of ${shardBits} bits need ${size}`,
    );
  }
  return { capacity, fpp, maxShardBits, shardBits, shards, hashes, funnel };
}

/** Checks the container and its parameters; returns the shape and a view of the payload. */
export function decodeShardedParts(bytes: Uint8Array): {
  shape: ShardedBloomShape;
  payload: Uint8Array;
} {
  const { header, params, payload } = decodeContainer(bytes, FILTER_TYPES.shardedBloom);
  return { shape: checkSharded(header, params), payload };
}

/**
 * Reads a native sharded container. With `{ copy: false }` the filter's bytes are the payload
 * inside `bytes` (any alignment), which must then stay untouched for the filter's life (and
 * changes to the filter change `bytes`); otherwise the payload is copied.
 */
export function decodeSharded(
  bytes: Uint8Array,
  options: DecodeOptions | undefined,
  Filter: typeof ShardedBloomFilter,
): ShardedBloomFilter {
  const { shape, payload } = decodeShardedParts(bytes);
  return new Filter(shape, options?.copy === false ? payload : payload.slice());
}

/**
 * A streaming sink for a sharded container whose header and parameters were read: allocates the
 * filter (after every check) and exposes its bytes as the bytes to fill.
 */
export function shardedSink(
  header: NativeHeader,
  params: DataView,
  Filter: typeof ShardedBloomFilter,
): PayloadSink<ShardedBloomFilter> {
  const filter = new Filter(checkSharded(header, params));
  return { targets: [filter.bytes], finish: () => filter };
}
