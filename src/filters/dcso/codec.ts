/** DCSO's Bloom filter's native-format descriptor (type 11, DCSO's FNV-1 positions). */

import { nativeCodec } from '../../formats/codec.js';
import { formatInt, wordDensity } from '../../formats/view.js';
import { DcsoBloomFilter } from './filter.js';
import { dcsoFormatCore } from './format.js';

export const dcsoCodec = nativeCodec(
  'dcso',
  DcsoBloomFilter,
  dcsoFormatCore,
  (f) => ({
    capacity: f.capacity,
    fpp: f.fpp,
    bits: f.bitSize,
    hashes: f.hashes,
    bitsSet: f.bitCount,
    elementCount: f.count,
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    dataBytes: f.data.length,
    bytes: f.byteLength,
  }),
  {
    create: (s) => DcsoBloomFilter.create(s),
    view: (f) => ({
      title: "DCSO bloom's filter",
      shape: [
        ['bits (m)', formatInt(f.bitSize)],
        ['hashes (k)', formatInt(f.hashes)],
        ['capacity (n)', formatInt(f.capacity)],
        ['elements counted', formatInt(f.count)],
        ['key encoding', f.funnel],
      ],
      fill: f.bitCount / f.bitSize,
      density: wordDensity(f.bits.data),
    }),
  },
);
