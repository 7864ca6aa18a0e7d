/** The classic filter's native-format descriptor (type 1; Guava strategy ordinals as hash ids). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES } from '../../formats/native.js';
import { STRATEGY_ORDINALS } from '../../hash/strategies.js';
import { BloomFilter } from './filter.js';
import { bloomParts, bloomSink } from './format.js';

export const bloomCodec: FilterCodec<BloomFilter> = {
  name: 'classic',
  typeId: FILTER_TYPES.bloom,
  hashSchemes: [STRATEGY_ORDINALS.MURMUR128_MITZ_32, STRATEGY_ORDINALS.MURMUR128_MITZ_64],
  filterClass: BloomFilter,
  parts: bloomParts,
  decode: (bytes, options) => BloomFilter.fromBytes(bytes, options),
  sink: (header, params) => bloomSink(header, params, BloomFilter),
  describe: (f) => ({
    type: 'classic',
    funnel: f.funnel,
    strategy: f.strategy,
    bits: f.bitSize,
    hashes: f.hashes,
    bitsSet: f.bitCount,
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.bitSize / 8,
  }),
};
