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
 * {@link blockedFormat} is this type for the word-payload format (formats/word-payload.ts), as
 * for the classic filter: parts whose payload views the filter's words, the decoder (with
 * `{ copy: false }` the words view a 4-byte-aligned payload on a little-endian host) and the
 * streaming sink.
 */

import { FormatError } from '../../errors.js';
import {
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  type NativeHeader,
  setU64,
} from '../../formats/native.js';
import { wordFormat } from '../../formats/word-payload.js';
import type { Funnel } from '../../hash/keys.js';
import type { BlockedBloomFilter, BlockedBloomFilterShape } from './filter.js';
import { BLOCK_BITS, MAX_BLOCKS, MAX_PROBES } from './sizing.js';

/** Checks the parameters, including that L matches z (the header's fields are checked). */
function checkBlocked(
  header: NativeHeader,
  params: DataView,
  funnel: Funnel,
): BlockedBloomFilterShape {
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

/** The blocked filter in the native format. */
export const blockedFormat = wordFormat<BlockedBloomFilterShape, BlockedBloomFilter>({
  native: {
    typeId: FILTER_TYPES.blocked,
    what: 'blocked filter',
    paramsBytes: 16,
    schemes: { xxh64Blocked: 3 satisfies typeof HASH_SCHEMES.xxh64Blocked },
  },
  writeParams(v, filter) {
    setU64(v, 0, filter.blocks);
    v.setUint32(8, filter.hashes, true);
  },
  check: checkBlocked,
  bitsOf: (shape) => shape.blocks * BLOCK_BITS,
});
