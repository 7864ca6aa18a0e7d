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
 */

import { FormatError } from '../errors.js';
import { BlockedBloomFilter, MAX_BLOCKS, MAX_PROBES } from '../filters/blocked.js';
import { FUNNEL_IDS, funnelFromId } from '../hash/keys.js';
import {
  bytesToWords,
  decodeContainer,
  encodeContainer,
  FILTER_TYPES,
  getU64,
  HASH_SCHEMES,
  setU64,
  wordsToBytes,
} from './native.js';

export function encodeBlocked(filter: BlockedBloomFilter): Uint8Array {
  const params = new Uint8Array(16);
  const v = new DataView(params.buffer);
  setU64(v, 0, filter.blocks);
  v.setUint32(8, filter.hashes, true);
  return encodeContainer(
    FILTER_TYPES.blocked,
    HASH_SCHEMES.xxh64Blocked,
    FUNNEL_IDS[filter.funnel],
    params,
    [wordsToBytes(filter.bits.data)],
  );
}

export function decodeBlocked(bytes: Uint8Array): BlockedBloomFilter {
  const { header, params, payload } = decodeContainer(bytes, FILTER_TYPES.blocked);
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
  if (payload.length !== blocks * 64) {
    throw new FormatError(
      `payload has ${payload.length} bytes, ${blocks} blocks need ${blocks * 64}`,
    );
  }
  const filter = new BlockedBloomFilter({ blocks, hashes, funnel });
  bytesToWords(payload, filter.bits.data);
  filter.bits.recount();
  return filter;
}
