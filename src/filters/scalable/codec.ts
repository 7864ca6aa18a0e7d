/** The scalable filter's native-format descriptor (type 3, MURMUR128_MITZ_64 per layer). */

import { nativeCodec } from '../../formats/codec.js';
import { ScalableBloomFilter } from './filter.js';
import { scalableFormat } from './format.js';

export const scalableCodec = nativeCodec(
  'scalable',
  ScalableBloomFilter,
  scalableFormat,
  (f) => ({
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
  { create: (s) => ScalableBloomFilter.create(s) },
);
