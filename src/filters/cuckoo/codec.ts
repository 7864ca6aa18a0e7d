/** The cuckoo filter's native-format descriptor (type 4, partial-key cuckoo hashing). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { CuckooFilter } from './filter.js';
import { cuckooParts, cuckooSink } from './format.js';

export const cuckooCodec: FilterCodec<CuckooFilter> = {
  name: 'cuckoo',
  typeId: FILTER_TYPES.cuckoo,
  hashSchemes: [HASH_SCHEMES.cuckooMurmur128],
  filterClass: CuckooFilter,
  parts: cuckooParts,
  decode: (bytes) => CuckooFilter.fromBytes(bytes),
  sink: (header, params) => cuckooSink(header, params, CuckooFilter),
  describe: (f) => ({
    type: 'cuckoo',
    funnel: f.funnel,
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
};
