/**
 * The binary fuse filter's size model (formats/size-model.ts). It holds exactly the n keys it
 * is built from, in `fuseShape(n).arrayLength` cells (construct.ts: about 1.125·n for large n)
 * of 8- or 16-bit fingerprints, so m = cells·f and the rate is 2^−f for any key outside its set.
 * Only n with p or m determine one; it is never empty (no `make`).
 */

import { grouped, type SizeModel } from '../../formats/size-model.js';
import { FUSE_MAX_KEYS, fuseShape } from './construct.js';

export type BinaryFuseShape = {
  readonly kind: 'binary-fuse';
  readonly keys: number;
  readonly cells: number;
  readonly fingerprintBits: 8 | 16;
};

function cellsFor(n: number): number {
  if (!(Number.isSafeInteger(n) && n >= 1 && n <= FUSE_MAX_KEYS)) {
    throw new RangeError(`a binary fuse filter holds 1 to ${FUSE_MAX_KEYS} keys, got n = ${n}`);
  }
  return fuseShape(n).arrayLength;
}

export const binaryFuseModel: SizeModel<BinaryFuseShape> = {
  solve(pair, input) {
    const { n, p, m } = input;
    const notes = input.k === undefined ? [] : ['k does not apply: this type stores fingerprints'];
    const shape = (cells: number, fingerprintBits: 8 | 16): BinaryFuseShape => ({
      kind: 'binary-fuse',
      keys: n!,
      cells,
      fingerprintBits,
    });
    if (pair === 'np') {
      const f = p! >= 2 ** -8 ? 8 : p! >= 2 ** -16 ? 16 : null;
      if (f === null) {
        throw new RangeError(
          `binary fuse fingerprints are 8 or 16 bits: rate at least 2^-16, got ${p}`,
        );
      }
      return { shape: shape(cellsFor(n!), f), n: n!, notes };
    }
    if (pair === 'nm') {
      const cells = cellsFor(n!);
      const f = cells * 16 <= m! ? 16 : cells * 8 <= m! ? 8 : null;
      if (f === null) {
        throw new RangeError(`${n} keys need ${cells * 8} bits even with 8-bit fingerprints`);
      }
      return { shape: shape(cells, f), n: n!, notes };
    }
    throw new RangeError('a binary fuse filter is built from its keys: give n, with p or m');
  },
  bits: (shape) => shape.cells * shape.fingerprintBits,
  // A key outside the set matches its three cells' XOR with probability 2^−f.
  rate: (shape) => 2 ** -shape.fingerprintBits,
  cells: (shape) => shape.cells,
  hashes: () => null,
  maxKeys: () => Number.POSITIVE_INFINITY,
  describe: (shape) => [
    ['fingerprint cells', grouped(shape.cells)],
    ['fingerprint bits (f)', grouped(shape.fingerprintBits)],
  ],
  make: () => null,
};
