/** The binary fuse filter's native-format descriptor (type 10, MurmurHash3 h1 mixed with a seed). */

import { nativeCodec } from '../../formats/codec.js';
import { BinaryFuseFilter } from './filter.js';
import { binaryFuseFormat } from './format.js';

export const binaryFuseCodec = nativeCodec(
  'binary-fuse',
  BinaryFuseFilter,
  binaryFuseFormat,
  (f) => ({
    fingerprintBits: f.fingerprintBits,
    segmentLength: f.segmentLength,
    segmentCount: f.segmentCount,
    fingerprints: f.fingerprints.length,
    keys: f.keyCount,
    bitsPerKey: f.keyCount > 0 ? f.bitsPerKey : null,
    expectedFpp: 2 ** -f.fingerprintBits,
    estimatedCount: f.estimatedCount(),
  }),
);
