/** The cuckoo filter's native-format descriptor (type 4, partial-key cuckoo hashing). */

import { nativeCodec } from '../../formats/codec.js';
import { formatInt, wordDensity } from '../../formats/view.js';
import { CuckooFilter } from './filter.js';
import { cuckooFormat } from './format.js';
import { cuckooModel } from './model.js';

/** Every slot's fingerprint (0: empty): slot s is bits [s·f, s·f + f) of the little-endian words. */
function slotValues(filter: CuckooFilter): Uint32Array {
  const f = filter.fingerprintBits;
  const out = new Uint32Array(filter.slotCount);
  for (let s = 0; s < out.length; s++) {
    let v = 0;
    for (let b = f - 1; b >= 0; b--) {
      const bit = s * f + b;
      v = v * 2 + ((filter.table[bit >>> 5]! >>> (bit & 31)) & 1);
    }
    out[s] = v;
  }
  return out;
}

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
      live: {
        unit: 'slot',
        perRow: 4,
        blockRows: 0,
        values: (f) => slotValues(f as CuckooFilter),
        title: (i, v) =>
          `bucket ${i >>> 2}, slot ${i & 3}: ${v === 0 ? 'empty' : `0x${v.toString(16)}`}`,
      },
    },
  },
);
