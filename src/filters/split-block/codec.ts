/** The Parquet split-block filter's native-format descriptor (type 6, xxh64SplitBlock). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { SplitBlockBloomFilter } from './filter.js';
import { splitBlockParts, splitBlockSink } from './format.js';

export const splitBlockCodec: FilterCodec<SplitBlockBloomFilter> = {
  name: 'split-block',
  typeId: FILTER_TYPES.splitBlock,
  hashSchemes: [HASH_SCHEMES.xxh64SplitBlock],
  filterClass: SplitBlockBloomFilter,
  parts: splitBlockParts,
  decode: (bytes, options) => SplitBlockBloomFilter.fromBytes(bytes, options),
  sink: (header, params) => splitBlockSink(header, params, SplitBlockBloomFilter),
  describe: (f) => ({
    type: 'split-block',
    funnel: f.funnel,
    parquetType: f.type,
    bits: f.bitSize,
    blocks: f.blocks,
    hashes: 8,
    bitsSet: f.bitCount,
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.bitSize / 8,
  }),
};
