/**
 * The blocked (cache-local) Bloom filter in bloomkit's native format (filter type id 5, hash
 * scheme 3 = `xxh64Blocked`; see native.ts for the container).
 *
 * Parameters (16 bytes, little-endian):
 *
 * | offset | size | field                                       |
 * |--------|------|---------------------------------------------|
 * | 0      | 8    | number of 512-bit blocks z, u64 (1..2^27)   |
 * | 8      | 4    | probes per key k, u32 (1..32)               |
 * | 12     | 4    | reserved, 0                                 |
 *
 * Payload: 64·z bytes, the filter's 32-bit words little-endian; block b is bytes [64b, 64b + 64)
 * and its bit i is bit i & 7 of byte 64b + (i >>> 3).
 *
 * Three ways in and out, as for the classic filter: whole buffers (`encodeBlocked` /
 * `decodeBlocked`; with `{ copy: false }` the filter's words view a 4-byte-aligned payload on a
 * little-endian host, always the case for a container at offset 0 of its buffer since the payload
 * sits at offset 40), and, for the streaming reader and writer of `bloomkit/node`, parts
 * (`blockedParts`: the payload is a view of the filter's words) and a sink (`blockedSink`: the
 * filter is allocated after the header and parameters are checked, and the reader fills its words
 * in place).
 */

import { FormatError } from '../../errors.js';
import {
  type ContainerParts,
  containerParts,
  type DecodeOptions,
  FILTER_TYPES,
  getU64,
  HASH_SCHEMES,
  type NativeHeader,
  type PayloadSink,
  setU64,
  wordsToBytes,
} from '../../formats/native.js';
import {
  decodeWordFilter,
  type WordFilterType,
  wordFilterSink,
} from '../../formats/word-payload.js';
import { FUNNEL_IDS, funnelFromId } from '../../hash/keys.js';
import type { BlockedBloomFilter, BlockedBloomFilterShape } from './filter.js';
import { BLOCK_BITS, MAX_BLOCKS, MAX_PROBES } from './sizing.js';

function blockedParams(filter: BlockedBloomFilter): Uint8Array {
  const params = new Uint8Array(16);
  const v = new DataView(params.buffer);
  setU64(v, 0, filter.blocks);
  v.setUint32(8, filter.hashes, true);
  return params;
}

/** The container of `filter` as parts; the payload views the filter's words (on LE hosts). */
export function blockedParts(filter: BlockedBloomFilter): ContainerParts {
  return containerParts(
    FILTER_TYPES.blocked,
    HASH_SCHEMES.xxh64Blocked,
    FUNNEL_IDS[filter.funnel],
    blockedParams(filter),
    [wordsToBytes(filter.bits.data)],
  );
}

/** Checks a blocked header and parameters, including that L matches z (nothing is allocated). */
function checkBlocked(header: NativeHeader, params: DataView): BlockedBloomFilterShape {
  if (header.type !== FILTER_TYPES.blocked) {
    throw new FormatError(
      `expected filter type id ${FILTER_TYPES.blocked}, the bytes hold type id ${header.type}`,
    );
  }
  if (header.paramsLength !== 16) {
    throw new FormatError(`blocked filter params must be 16 bytes, got ${header.paramsLength}`);
  }
  if (header.hash !== HASH_SCHEMES.xxh64Blocked) {
    throw new FormatError(
      `unknown hash scheme id ${header.hash} for a blocked filter (expected ${HASH_SCHEMES.xxh64Blocked})`,
    );
  }
  const funnel = funnelFromId(header.funnel);
  if (funnel === undefined) throw new FormatError(`unknown funnel id ${header.funnel}`);
  const blocks = getU64(params, 0, 'block count');
  const hashes = params.getUint32(8, true);
  if (blocks < 1 || blocks > MAX_BLOCKS) {
    throw new FormatError(`bad block count ${blocks}: must be 1..${MAX_BLOCKS}`);
  }
  if (hashes < 1 || hashes > MAX_PROBES) {
    throw new FormatError(`bad number of probes ${hashes}: must be 1..${MAX_PROBES}`);
  }
  if (params.getUint32(12, true) !== 0) {
    throw new FormatError('reserved blocked-filter parameter bytes are not zero');
  }
  if (header.payloadLength !== blocks * 64) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, ${blocks} blocks need ${blocks * 64}`,
    );
  }
  return { blocks, hashes, funnel };
}

/**
 * Reads a native blocked container. With `{ copy: false }` the filter's words view the payload
 * inside `bytes` when it starts at a 4-byte-aligned address on a little-endian host; `bytes` must
 * then stay untouched for the filter's life (and changes to the filter change `bytes`). Otherwise
 * the payload is copied.
 */
export function decodeBlocked(
  bytes: Uint8Array,
  options: DecodeOptions | undefined,
  Filter: typeof BlockedBloomFilter,
): BlockedBloomFilter {
  return decodeWordFilter(bytes, options, wordType(Filter));
}

/**
 * A streaming sink for a blocked container whose header and parameters were read: allocates the
 * filter (after every check) and exposes its words as the bytes to fill.
 */
export function blockedSink(
  header: NativeHeader,
  params: DataView,
  Filter: typeof BlockedBloomFilter,
): PayloadSink<BlockedBloomFilter> {
  return wordFilterSink(header, params, wordType(Filter));
}

/** This type as the word-payload decoders see it. */
function wordType(
  Filter: typeof BlockedBloomFilter,
): WordFilterType<ReturnType<typeof checkBlocked>, BlockedBloomFilter> {
  return {
    typeId: FILTER_TYPES.blocked,
    check: checkBlocked,
    bitsOf: (shape) => shape.blocks * BLOCK_BITS,
    make: (shape, storage) => new Filter(shape, storage),
  };
}
