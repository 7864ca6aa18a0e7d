/** The cuckoo filter's native-format descriptor (type 4, partial-key cuckoo hashing). */

import { nativeCodec } from '../../formats/codec.js';
import { formatInt, wordDensity } from '../../formats/view.js';
import { CuckooFilter } from './filter.js';
import { cuckooFormat } from './format.js';
import { cuckooModel } from './model.js';

export const cuckooCodec = nativeCodec(
  'cuckoo',
  CuckooFilter,
  cuckooFormat,
  (f) => ({
    buckets: f.bucketCount,
    slotsPerBucket: 4,
    fingerprintBits: f.fingerprintBits,
    stored: f.size,
    loadFactor: f.loadFactor,
    full: f.full,
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.byteLength,
  }),
  {
    create: (s) => CuckooFilter.create(s),
    model: cuckooModel,
    view: (f) => ({
      title: 'Cuckoo filter',
      shape: [
        ['buckets of 4 slots', formatInt(f.bucketCount)],
        ['fingerprint bits (f)', formatInt(f.fingerprintBits)],
        ['fingerprints stored', formatInt(f.size)],
        ['key encoding', f.funnel],
      ],
      fill: f.loadFactor,
      density: wordDensity(f.table),
    }),
    display: {
      label: 'Cuckoo',
      blurb: 'f-bit fingerprints in buckets of 4: deletable, small at low rates.',
      color: '#eb5757',
    },
  },
);
