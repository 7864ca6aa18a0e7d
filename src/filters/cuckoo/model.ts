/**
 * The cuckoo filter's size model (formats/size-model.ts): B buckets (a power of two) of 4 slots
 * of f-bit fingerprints, m = 4·B·f bits, rate `cuckooFalsePositiveRate(load, f)` at load
 * n/(4B). (n, p) sizes as `cuckooSize` (f = max(6, ⌈log2(8/p)⌉), the fewest buckets whose safe
 * load holds n); (n, m) the widest f that fits; (m, p) the most buckets that fit, holding their
 * safe capacity. It has no k.
 */

import { grouped, type SizeModel } from '../../formats/size-model.js';
import { CuckooFilter } from './filter.js';
import {
  CUCKOO_BUCKET_SIZE as B,
  CUCKOO_MAX_FINGERPRINT_BITS,
  CUCKOO_MIN_FINGERPRINT_BITS,
  cuckooFalsePositiveRate,
  cuckooFingerprintBits,
  cuckooSafeCapacity,
  cuckooSize,
} from './sizing.js';

export type CuckooShape = {
  readonly kind: 'cuckoo';
  readonly buckets: number;
  readonly fingerprintBits: number;
};

export const cuckooModel: SizeModel<CuckooShape> = {
  solve(pair, input) {
    const { n, p, m } = input;
    const notes = input.k === undefined ? [] : ['k does not apply: this type stores fingerprints'];
    const shape = (buckets: number, fingerprintBits: number): CuckooShape => ({
      kind: 'cuckoo',
      buckets,
      fingerprintBits,
    });
    switch (pair) {
      case 'np': {
        const size = cuckooSize(n!, p!);
        return { shape: shape(size.buckets, size.fingerprintBits), n: n!, notes };
      }
      case 'nm': {
        const { buckets } = cuckooSize(n!, 0.5);
        const f = Math.min(CUCKOO_MAX_FINGERPRINT_BITS, Math.floor(m! / (B * buckets)));
        if (f < CUCKOO_MIN_FINGERPRINT_BITS) {
          throw new RangeError(
            `${n} keys need ${buckets} buckets; ${m} bits give ${f}-bit fingerprints, fewer than ${CUCKOO_MIN_FINGERPRINT_BITS}`,
          );
        }
        return { shape: shape(buckets, f), n: n!, notes };
      }
      case 'mp': {
        const f = cuckooFingerprintBits(p!);
        let buckets = 1;
        while (buckets * 2 * B * f <= m!) buckets *= 2;
        if (buckets * B * f > m!)
          throw new RangeError(`${m} bits hold no bucket of ${f}-bit slots`);
        return { shape: shape(buckets, f), n: cuckooSafeCapacity(buckets), notes };
      }
      default:
        throw new RangeError('the cuckoo filter has no k: give two of n, p and m');
    }
  },
  bits: (shape) => shape.buckets * B * shape.fingerprintBits,
  // The table is whole 64-bit words.
  bytes: (shape) => Math.ceil((shape.buckets * B * shape.fingerprintBits) / 64) * 8,
  rate: (shape, n) =>
    cuckooFalsePositiveRate(Math.min(1, n / (shape.buckets * B)), shape.fingerprintBits),
  cells: (shape) => shape.buckets * B,
  hashes: () => null,
  maxKeys: (shape) => shape.buckets * B,
  describe: (shape) => [
    ['buckets of 4 slots', grouped(shape.buckets)],
    ['fingerprint bits (f)', grouped(shape.fingerprintBits)],
  ],
  make: (shape) =>
    new CuckooFilter({ buckets: shape.buckets, fingerprintBits: shape.fingerprintBits }),
};
