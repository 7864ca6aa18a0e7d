/** The binary fuse filter's native-format descriptor (type 10, MurmurHash3 h1 mixed with a seed). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { BinaryFuseFilter } from './filter.js';
import { fuseParts } from './format.js';

export const binaryFuseCodec: FilterCodec<BinaryFuseFilter<never>> = {
  name: 'binary-fuse',
  typeId: FILTER_TYPES.binaryFuse,
  hashSchemes: [HASH_SCHEMES.binaryFuseMurmur128],
  filterClass: BinaryFuseFilter,
  parts: fuseParts,
  decode: (bytes) => BinaryFuseFilter.fromBytes(bytes) as BinaryFuseFilter<never>,
  sink: null,
  describe: (f) => ({
    type: 'binary-fuse',
    funnel: f.funnel,
    fingerprintBits: f.fingerprintBits,
    segmentLength: f.segmentLength,
    segmentCount: f.segmentCount,
    fingerprints: f.fingerprints.length,
    keys: f.keyCount,
    bitsPerKey: f.keyCount > 0 ? f.bitsPerKey : null,
    expectedFpp: 2 ** -f.fingerprintBits,
    estimatedCount: f.estimatedCount(),
  }),
};
