/** The binary fuse filter's native-format descriptor (type 10, MurmurHash3 h1 mixed with a seed). */

import { nativeCodec } from '../../formats/codec.js';
import { formatInt } from '../../formats/view.js';
import { BinaryFuseFilter } from './filter.js';
import { binaryFuseFormat } from './format.js';
import { binaryFuseModel } from './model.js';

export const binaryFuseCodec = nativeCodec(
  'binary-fuse',
  BinaryFuseFilter,
  binaryFuseFormat,
  (f) => ({
    fingerprintBits: f.fingerprintBits,
    segmentLength: f.segmentLength,
    segmentCount: f.segmentCount,
    fingerprints: f.fingerprints.length,
    // The table's size, as calc and the size model give it for these keys.
    bits: f.bitSize,
    bytes: f.bitSize / 8,
    keys: f.keyCount,
    bitsPerKey: f.keyCount > 0 ? f.bitsPerKey : null,
    expectedFpp: 2 ** -f.fingerprintBits,
    estimatedCount: f.estimatedCount(),
  }),
  {
    model: binaryFuseModel,
    view: (f) => ({
      title: 'Binary fuse filter (static set)',
      shape: [
        ['keys', formatInt(f.keyCount)],
        ['fingerprint bits (f)', String(f.fingerprintBits)],
        ['segments × length', `${formatInt(f.segmentCount + 2)} × ${formatInt(f.segmentLength)}`],
        ['bits per key', f.keyCount > 0 ? f.bitsPerKey.toFixed(2) : '—'],
        ['key encoding', f.funnel],
      ],
      fill: Number.NaN,
      fpr: 2 ** -f.fingerprintBits,
      density: new Float32Array(0),
    }),
    display: {
      label: 'Binary fuse',
      blurb:
        'A static set, built once from all its keys: about 1.125·f bits per key for large sets, rate 2^−f.',
      color: '#2d9cdb',
    },
  },
);
