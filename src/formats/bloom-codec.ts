/**
 * The classic Bloom filter in bloomkit's native format (filter type id 1).
 *
 * Parameters (16 bytes, little-endian):
 *
 * | offset | size | field                                   |
 * |--------|------|-----------------------------------------|
 * | 0      | 8    | bit size m, u64, a multiple of 64        |
 * | 8      | 4    | number of hash functions k, u32 (1..255) |
 * | 12     | 4    | reserved, 0                              |
 *
 * Hash scheme: 0 (MURMUR128_MITZ_32) or 1 (MURMUR128_MITZ_64). Payload: m/8 bytes, the 64-bit
 * words as little-endian (bit i is bit i & 7 of byte i >>> 3).
 */

import { FormatError } from '../errors.js';
import { BloomFilter } from '../filters/bloom.js';
import { FUNNEL_IDS, funnelFromId } from '../hash/keys.js';
import { STRATEGY_ORDINALS, strategyFromOrdinal } from '../hash/strategies.js';
import { MAX_BITS } from '../math.js';
import {
  bytesToWords,
  decodeContainer,
  encodeContainer,
  FILTER_TYPES,
  getU64,
  setU64,
  wordsToBytes,
} from './native.js';

export function encodeBloom(filter: BloomFilter): Uint8Array {
  const params = new Uint8Array(16);
  const v = new DataView(params.buffer);
  setU64(v, 0, filter.bitSize);
  v.setUint32(8, filter.hashes, true);
  return encodeContainer(
    FILTER_TYPES.bloom,
    STRATEGY_ORDINALS[filter.strategy],
    FUNNEL_IDS[filter.funnel],
    params,
    [wordsToBytes(filter.bits.data)],
  );
}

export function decodeBloom(bytes: Uint8Array): BloomFilter {
  const { header, params, payload } = decodeContainer(bytes, FILTER_TYPES.bloom);
  if (header.paramsLength !== 16) {
    throw new FormatError(`bloom filter params must be 16 bytes, got ${header.paramsLength}`);
  }
  const strategy = strategyFromOrdinal(header.hash);
  if (strategy === undefined)
    throw new FormatError(`unknown hash scheme id ${header.hash} for a bloom filter`);
  const funnel = funnelFromId(header.funnel);
  if (funnel === undefined) throw new FormatError(`unknown funnel id ${header.funnel}`);
  const bits = getU64(params, 0, 'bit size');
  const hashes = params.getUint32(8, true);
  if (bits === 0 || bits % 64 !== 0 || bits > MAX_BITS) {
    throw new FormatError(
      `bad bit size ${bits}: must be a positive multiple of 64 up to ${MAX_BITS}`,
    );
  }
  if (hashes < 1 || hashes > 255)
    throw new FormatError(`bad number of hash functions ${hashes}: must be 1..255`);
  if (params.getUint32(12, true) !== 0)
    throw new FormatError('reserved bloom parameter bytes are not zero');
  if (payload.length !== bits / 8) {
    throw new FormatError(
      `payload has ${payload.length} bytes, a ${bits}-bit filter needs ${bits / 8}`,
    );
  }
  const filter = new BloomFilter({ bits, hashes, funnel, strategy });
  bytesToWords(payload, filter.bits.data);
  filter.bits.recount();
  return filter;
}
