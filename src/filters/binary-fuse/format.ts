/**
 * The binary fuse filter in bloomkit's native format (filter type id 10, hash scheme 6
 * `binaryFuseMurmur128`).
 *
 * Parameters (32 bytes, little-endian):
 *
 * | offset | size | field                                                                  |
 * |--------|------|------------------------------------------------------------------------|
 * | 0      | 8    | seed, u64 (as two u32: low word, then high word)                       |
 * | 8      | 8    | distinct keys n, u64 (at most the array length)                        |
 * | 16     | 4    | segment length L, u32, a power of two from 4 to 2^18                   |
 * | 20     | 4    | segment count S, u32, at least 1                                       |
 * | 24     | 1    | fingerprint bits f, u8: 8 or 16                                        |
 * | 25     | 7    | reserved, 0                                                            |
 *
 * Payload: the (S + 2)·L fingerprints in order, f/8 bytes each, little-endian.
 */

import { FormatError } from '../../errors.js';
import {
  decodeContainer,
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  setU64,
} from '../../formats/native.js';
import { checkTypeHeader, nativeFormat } from '../../formats/native-type.js';
import { LITTLE_ENDIAN } from '../../hash/murmur3.js';
import type { BinaryFuseFilter, BinaryFuseInit } from './filter.js';

const FUSE = {
  typeId: FILTER_TYPES.binaryFuse,
  what: 'binary fuse filter',
  paramsBytes: 32,
  schemes: { binaryFuseMurmur128: 6 satisfies typeof HASH_SCHEMES.binaryFuseMurmur128 },
};
/** Largest fingerprint array the reader accepts (2^32 − 1 entries, the 32-bit index limit). */
const MAX_ARRAY = 2 ** 32 - 1;

function fingerprintBytes(filter: BinaryFuseFilter<never>): Uint8Array {
  const f = filter.fingerprints;
  if (f instanceof Uint8Array || LITTLE_ENDIAN)
    return new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
  const out = new Uint8Array(f.byteLength);
  const v = new DataView(out.buffer);
  for (let i = 0; i < f.length; i++) v.setUint16(2 * i, f[i]!, true);
  return out;
}

/** What a native binary fuse container holds, checked (always a copy of the payload). */
function decodeBinaryFuse(bytes: Uint8Array): BinaryFuseInit {
  const { header, params, payload } = decodeContainer(bytes, FUSE.typeId);
  const funnel = checkTypeHeader(header, FUSE);
  const seedLo = params.getUint32(0, true);
  const seedHi = params.getUint32(4, true);
  const keyCount = getU64(params, 8, 'binary fuse key count');
  const segmentLength = params.getUint32(16, true);
  const segmentCount = params.getUint32(20, true);
  const bits = params.getUint8(24);
  for (let i = 25; i < FUSE.paramsBytes; i++) {
    if (params.getUint8(i) !== 0)
      throw new FormatError(`reserved binary fuse parameter byte ${i} is not zero`);
  }
  if (segmentLength < 4 || segmentLength > 262144 || (segmentLength & (segmentLength - 1)) !== 0) {
    throw new FormatError(
      `bad segment length ${segmentLength}: must be a power of two from 4 to 2^18`,
    );
  }
  if (segmentCount < 1)
    throw new FormatError(`bad segment count ${segmentCount}: must be at least 1`);
  if (bits !== 8 && bits !== 16)
    throw new FormatError(`bad fingerprint size ${bits} bits: must be 8 or 16`);
  const arrayLength = (segmentCount + 2) * segmentLength;
  if (arrayLength > MAX_ARRAY) {
    throw new FormatError(
      `fingerprint array of ${arrayLength} entries is above the maximum ${MAX_ARRAY}`,
    );
  }
  if (keyCount > arrayLength) {
    throw new FormatError(`key count ${keyCount} is above the ${arrayLength} fingerprints`);
  }
  const expected = (arrayLength * bits) / 8;
  if (payload.length !== expected) {
    throw new FormatError(
      `payload has ${payload.length} bytes, ${arrayLength} fingerprints of ${bits} bits need ${expected}`,
    );
  }
  let fingerprints: Uint8Array | Uint16Array;
  if (bits === 8) {
    fingerprints = payload.slice();
  } else {
    fingerprints = new Uint16Array(arrayLength);
    const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    for (let i = 0; i < arrayLength; i++) fingerprints[i] = v.getUint16(2 * i, true);
  }
  return {
    funnel,
    shape: { segmentLength, segmentCount, arrayLength },
    fingerprints,
    seedLo,
    seedHi,
    keyCount,
  };
}

/** The binary fuse filter in the native format (read whole: no streaming sink). */
export const binaryFuseFormat = nativeFormat<BinaryFuseFilter<never>, typeof BinaryFuseFilter>({
  native: FUSE,
  writeParams(v, filter) {
    v.setUint32(0, filter.seedLo, true);
    v.setUint32(4, filter.seedHi, true);
    setU64(v, 8, filter.keyCount);
    v.setUint32(16, filter.segmentLength, true);
    v.setUint32(20, filter.segmentCount, true);
    v.setUint8(24, filter.fingerprintBits);
  },
  payload: (filter) => [fingerprintBytes(filter)],
  decode: (bytes, _options, Filter) => new Filter(decodeBinaryFuse(bytes)),
  sink: null,
});
