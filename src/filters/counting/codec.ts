/** The counting filter's native-format descriptor (type 2, MURMUR128_MITZ_64 positions). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { CountingBloomFilter } from './filter.js';
import { countingParts, countingSink } from './format.js';

export const countingCodec: FilterCodec<CountingBloomFilter> = {
  name: 'counting',
  typeId: FILTER_TYPES.counting,
  hashSchemes: [HASH_SCHEMES.murmur128Mitz64],
  filterClass: CountingBloomFilter,
  parts: countingParts,
  decode: (bytes, options) => CountingBloomFilter.fromBytes(bytes, options),
  sink: (header, params) => countingSink(header, params, CountingBloomFilter),
  describe: (f) => ({
    type: 'counting',
    funnel: f.funnel,
    counters: f.counterSize,
    counterBits: 4,
    hashes: f.hashes,
    nonZeroCounters: f.nonZeroCount(),
    saturatedCounters: f.saturatedCount(),
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.byteLength,
  }),
};
