/**
 * DCSO's Bloom filter (`DcsoBloomFilter`) in bloomkit's native format (filter type id 11, hash
 * scheme 7: DCSO's FNV-1 sequence, see `hash.ts`).
 *
 * Parameters (48 bytes, little-endian):
 *
 * | offset | size | field                                            |
 * |--------|------|--------------------------------------------------|
 * | 0      | 8    | capacity n, u64 (≥ 1)                            |
 * | 8      | 8    | fpp p, float64 in (0, 1)                         |
 * | 16     | 8    | bit size m, u64 (1..2^36, any value)             |
 * | 24     | 4    | number of hash functions k, u32 (1..255)         |
 * | 28     | 4    | reserved, 0                                      |
 * | 32     | 8    | element counter N, u64                           |
 * | 40     | 8    | D, bytes of attached data, u64                   |
 *
 * Payload: the ⌈m/64⌉ 64-bit words, little-endian (bit i is bit i & 7 of byte i >>> 3; bits at
 * or past m are 0), then the D bytes of attached data. The same fields as DCSO's own file
 * (`file.ts`), inside the native container's checks (magic, lengths, CRC-32C).
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
import { bytesToWords, wordsToBytes } from '../../formats/words.js';
import type { Funnel } from '../../hash/keys.js';
import { MAX_BITS } from '../../math.js';
import { checkTail } from './file.js';
import type { DcsoBloomFilter, DcsoBloomFilterShape } from './filter.js';

const DCSO = {
  typeId: FILTER_TYPES.dcso,
  what: 'DCSO bloom filter',
  paramsBytes: 48,
  schemes: { dcsoFnv: 7 satisfies typeof HASH_SCHEMES.dcsoFnv },
};

function writeParams(v: DataView, filter: DcsoBloomFilter): void {
  setU64(v, 0, filter.capacity);
  v.setFloat64(8, filter.fpp, true);
  setU64(v, 16, filter.bitSize);
  v.setUint32(24, filter.hashes, true);
  setU64(v, 32, filter.count);
  setU64(v, 40, filter.data.length);
}

/** Checks the parameters and that L matches them; returns the shape (without its data). */
function checkDcso(
  header: NativeHeader,
  params: DataView,
): DcsoBloomFilterShape & { funnel: Funnel } {
  const funnel = checkTypeHeader(header, DCSO);
  const capacity = getU64(params, 0, 'capacity');
  const fpp = params.getFloat64(8, true);
  const bits = getU64(params, 16, 'bit size');
  const hashes = params.getUint32(24, true);
  const count = getU64(params, 32, 'element count');
  const dataLength = getU64(params, 40, 'data length');
  if (capacity < 1) throw new FormatError('DCSO bloom filter capacity must be at least 1');
  if (!(fpp > 0 && fpp < 1)) throw new FormatError(`DCSO bloom filter fpp ${fpp} is not in (0, 1)`);
  if (bits < 1 || bits > MAX_BITS) {
    throw new FormatError(`DCSO bloom filter bit size ${bits} is not in 1..${MAX_BITS}`);
  }
  if (hashes < 1 || hashes > 255) {
    throw new FormatError(`DCSO bloom filter hash count ${hashes} is not in 1..255`);
  }
  if (params.getUint32(28, true) !== 0) {
    throw new FormatError('reserved DCSO bloom filter parameter bytes are not zero');
  }
  const expected = 8 * Math.ceil(bits / 64) + dataLength;
  if (header.payloadLength !== expected) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, ${bits} bits and ${dataLength} bytes of data need ${expected}`,
    );
  }
  return { capacity, fpp, bits, hashes, funnel, count, data: new Uint8Array(dataLength) };
}

/** DCSO's filter in the native format (read whole: no streaming sink). */
export const dcsoFormatCore = nativeFormat<DcsoBloomFilter, typeof DcsoBloomFilter>({
  native: DCSO,
  writeParams,
  payload: (filter) => [wordsToBytes(filter.bits.data), filter.data],
  decode(bytes, _options, Filter) {
    const { header, params, payload } = decodeContainer(bytes, DCSO.typeId);
    const shape = checkDcso(header, params);
    const wordBytes = payload.length - shape.data!.length;
    const filter = new Filter({ ...shape, data: payload.slice(wordBytes) });
    bytesToWords(payload.subarray(0, wordBytes), filter.bits.data);
    checkTail(
      filter.bits.data,
      shape.bits,
      (what) => new FormatError(`DCSO bloom filter: ${what}`),
    );
    filter.bits.recount();
    return filter;
  },
  sink: null,
});
