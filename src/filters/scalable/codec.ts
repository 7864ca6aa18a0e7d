/** The scalable filter's native-format descriptor (type 3, MURMUR128_MITZ_64 per layer). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { ScalableBloomFilter } from './filter.js';
import { scalableParts, scalableSink } from './format.js';

export const scalableCodec: FilterCodec<ScalableBloomFilter> = {
  name: 'scalable',
  typeId: FILTER_TYPES.scalable,
  hashSchemes: [HASH_SCHEMES.murmur128Mitz64],
  filterClass: ScalableBloomFilter,
  parts: scalableParts,
  decode: (bytes, options) => ScalableBloomFilter.fromBytes(bytes, options),
  sink: (header, params) => scalableSink(header, params, ScalableBloomFilter),
  describe: (f) => ({
    type: 'scalable',
    funnel: f.funnel,
    fpp: f.fpp,
    initialCapacity: f.initialCapacity,
    growth: f.growth,
    ratio: f.ratio,
    bits: f.bitSize,
    layers: f.layers(),
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.byteLength,
  }),
};
