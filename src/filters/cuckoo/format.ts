/**
 * The cuckoo filter in bloomkit's native format (filter type id 4).
 *
 * Parameters (32 bytes, little-endian):
 *
 * | offset | size | field                                                              |
 * |--------|------|--------------------------------------------------------------------|
 * | 0      | 8    | number of buckets B, u64, a power of two from 1 to 2^30            |
 * | 8      | 1    | fingerprint bits f, u8 (4..32)                                     |
 * | 9      | 1    | slots per bucket b, u8 = 4 (the only size defined)                 |
 * | 10     | 1    | victim flag, u8: 1 if the victim slot holds a fingerprint, else 0  |
 * | 11     | 1    | reserved, 0                                                        |
 * | 12     | 4    | victim fingerprint, u32 (1..2^f − 1; 0 when the flag is 0)         |
 * | 16     | 8    | victim bucket, u64 (< B; 0 when the flag is 0)                     |
 * | 24     | 8    | fingerprints stored, u64 = non-empty slots + victim flag           |
 *
 * Hash scheme: 2 (`cuckooMurmur128`, see filters/cuckoo.ts). Payload: the bit-packed table,
 * ⌈4·B·f / 64⌉·8 bytes: slot j of bucket i is s = 4i + j, its fingerprint is bits [s·f, s·f + f)
 * with bit p at bit (p & 7) of byte p >>> 3 (0 = empty). Bits after the last slot are 0.
 *
 * {@link cuckooFormat}'s parts (for the streaming writer of `bloomkit/node`) view the filter's
 * table; its sink allocates the filter after the header and parameters are checked, the reader
 * fills its table in place, and the padding and count are checked before the filter is returned.
 * Its decoder always copies (no `{ copy: false }`): the filter owns
 * its table (its constructor allocates it, there is no storage to pass in), and the decoder reads
 * every slot anyway to check the padding bits and the stored count, so a view would save the
 * allocation but not the pass over the table.
 */

import { FormatError } from '../../errors.js';
import {
  decodeContainer,
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  type NativeHeader,
  setU64,
} from '../../formats/native.js';
import { checkTypeHeader, nativeFormat } from '../../formats/native-type.js';
import { bytesToWords, wordsSink, wordsToBytes } from '../../formats/words.js';
import type { Funnel } from '../../hash/keys.js';
import type { CuckooFilter, CuckooVictim } from './filter.js';
import {
  CUCKOO_BUCKET_SIZE,
  CUCKOO_MAX_BUCKETS,
  CUCKOO_MAX_FINGERPRINT_BITS,
  CUCKOO_MAX_TABLE_BITS,
  CUCKOO_MIN_FINGERPRINT_BITS,
} from './sizing.js';

const CUCKOO = {
  typeId: FILTER_TYPES.cuckoo,
  what: 'cuckoo filter',
  paramsBytes: 32,
  schemes: { cuckooMurmur128: 2 satisfies typeof HASH_SCHEMES.cuckooMurmur128 },
};

/** Writes the parameters of `filter`. */
function writeParams(v: DataView, filter: CuckooFilter): void {
  setU64(v, 0, filter.bucketCount);
  v.setUint8(8, filter.fingerprintBits);
  v.setUint8(9, CUCKOO_BUCKET_SIZE);
  const victim = filter.victim;
  if (victim !== undefined) {
    v.setUint8(10, 1);
    v.setUint32(12, victim.fingerprint, true);
    setU64(v, 16, victim.bucket);
  }
  setU64(v, 24, filter.size);
}

interface CuckooShape {
  buckets: number;
  fingerprintBits: number;
  funnel: Funnel;
  tableBits: number;
  victim: CuckooVictim | undefined;
  /** The stored fingerprint count. */
  stored: number;
}

/** Checks a cuckoo header and parameters, including that L matches the table (nothing is allocated). */
function checkCuckoo(header: NativeHeader, params: DataView): CuckooShape {
  const funnel = checkTypeHeader(header, CUCKOO);
  const buckets = getU64(params, 0, 'bucket count');
  const f = params.getUint8(8);
  const b = params.getUint8(9);
  const flag = params.getUint8(10);
  if (buckets < 1 || buckets > CUCKOO_MAX_BUCKETS || (buckets & (buckets - 1)) !== 0) {
    throw new FormatError(`bad bucket count ${buckets}: must be a power of two from 1 to 2^30`);
  }
  if (f < CUCKOO_MIN_FINGERPRINT_BITS || f > CUCKOO_MAX_FINGERPRINT_BITS) {
    throw new FormatError(`bad fingerprint size ${f} bits: must be 4..32`);
  }
  if (b !== CUCKOO_BUCKET_SIZE) {
    throw new FormatError(`bad bucket size ${b}: only ${CUCKOO_BUCKET_SIZE} slots are defined`);
  }
  const tableBits = buckets * CUCKOO_BUCKET_SIZE * f;
  if (tableBits > CUCKOO_MAX_TABLE_BITS) {
    throw new FormatError(
      `table of ${tableBits} bits is above the maximum ${CUCKOO_MAX_TABLE_BITS}`,
    );
  }
  if (flag > 1) throw new FormatError(`bad victim flag ${flag}: must be 0 or 1`);
  if (params.getUint8(11) !== 0) {
    throw new FormatError('reserved cuckoo filter parameter byte 11 is not zero');
  }
  const victimFp = params.getUint32(12, true);
  const victimBucket = getU64(params, 16, 'victim bucket');
  let victim: CuckooVictim | undefined;
  if (flag === 1) {
    if (victimFp === 0 || victimFp > 2 ** f - 1) {
      throw new FormatError(`bad victim fingerprint ${victimFp} for ${f}-bit fingerprints`);
    }
    if (victimBucket >= buckets) {
      throw new FormatError(`bad victim bucket ${victimBucket}: the table has ${buckets} buckets`);
    }
    victim = { bucket: victimBucket, fingerprint: victimFp };
  } else if (victimFp !== 0 || victimBucket !== 0) {
    throw new FormatError('victim fields must be 0 when the victim flag is 0');
  }
  const stored = getU64(params, 24, 'fingerprint count');
  const expected = Math.ceil(tableBits / 64) * 8;
  if (header.payloadLength !== expected) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, ${buckets} buckets of ${f}-bit fingerprints need ${expected}`,
    );
  }
  return { buckets, fingerprintBits: f, funnel, tableBits, victim, stored };
}

/**
 * Checks a filled table (bits after the last slot are 0, the count matches the slots used plus
 * the victim) and sets the filter's count and victim.
 */
function finishCuckoo(filter: CuckooFilter, shape: CuckooShape): CuckooFilter {
  const { tableBits, stored, victim } = shape;
  const flag = victim === undefined ? 0 : 1;
  const tail = tableBits % 32;
  const last = Math.ceil(tableBits / 32);
  if (tail !== 0 && filter.table[last - 1]! >>> tail !== 0) {
    throw new FormatError('padding bits after the last slot are not zero');
  }
  for (let w = last; w < filter.table.length; w++) {
    if (filter.table[w] !== 0)
      throw new FormatError('padding bits after the last slot are not zero');
  }
  const occupied = filter.occupiedSlots();
  if (stored !== occupied + flag) {
    throw new FormatError(
      `fingerprint count ${stored} does not match the table (${occupied} slots used, victim ${flag})`,
    );
  }
  filter.restore(stored, victim);
  return filter;
}

/** The cuckoo filter in the native format. */
export const cuckooFormat = nativeFormat<CuckooFilter, typeof CuckooFilter>({
  native: CUCKOO,
  writeParams,
  payload: (filter) => [wordsToBytes(filter.table)],
  decode(bytes, _options, Filter) {
    const { header, params, payload } = decodeContainer(bytes, CUCKOO.typeId);
    const shape = checkCuckoo(header, params);
    const filter = new Filter(shape);
    bytesToWords(payload, filter.table);
    return finishCuckoo(filter, shape);
  },
  /** Fills the new filter's table in place; `finish` checks the padding bits and the count. */
  sink(header, params, Filter) {
    const shape = checkCuckoo(header, params);
    const filter = new Filter(shape);
    return wordsSink(filter.table, () => finishCuckoo(filter, shape));
  },
});
