/** The blocked filter's native-format descriptor (type 5, hash scheme xxh64Blocked). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { BlockedBloomFilter } from './filter.js';
import { blockedParts, blockedSink } from './format.js';

export const blockedCodec: FilterCodec<BlockedBloomFilter> = {
  name: 'blocked',
  typeId: FILTER_TYPES.blocked,
  hashSchemes: [HASH_SCHEMES.xxh64Blocked],
  filterClass: BlockedBloomFilter,
  parts: blockedParts,
  decode: (bytes, options) => BlockedBloomFilter.fromBytes(bytes, options),
  sink: (header, params) => blockedSink(header, params, BlockedBloomFilter),
  describe: (f) => ({
    type: 'blocked',
    funnel: f.funnel,
    bits: f.bitSize,
    blocks: f.blocks,
    hashes: f.hashes,
    bitsSet: f.bitCount,
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.bitSize / 8,
  }),
};
