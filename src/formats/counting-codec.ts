/**
 * The counting Bloom filter in bloomkit's native format (filter type id 2).
 *
 * Parameters (16 bytes, little-endian):
 *
 * | offset | size | field                                                   |
 * |--------|------|---------------------------------------------------------|
 * | 0      | 8    | number of counters m, u64, a multiple of 64, ≤ 2^32     |
 * | 8      | 4    | number of hash functions k, u32 (1..255)                |
 * | 12     | 1    | bits per counter, u8 = 4 (the only width defined)       |
 * | 13     | 3    | reserved, 0                                             |
 *
 * Hash scheme: 1 (MURMUR128_MITZ_64, the classic filter's positions). Payload: m/2 bytes, two
 * counters per byte: counter i is the low nibble of byte i >>> 1 for an even i and the high
 * nibble for an odd i (the in-memory layout of `bits/counters.ts`).
 */

import { CounterArray, MAX_COUNTERS } from '../bits/counters.js';
import { FormatError } from '../errors.js';
import { CountingBloomFilter } from '../filters/counting.js';
import { FUNNEL_IDS } from '../hash/keys.js';
import {
  checkHashCount,
  checkHashScheme,
  checkParamsLength,
  decodeContainer,
  encodeContainer,
  FILTER_TYPES,
  getU64,
  HASH_SCHEMES,
  headerFunnel,
  setU64,
} from './native.js';

const PARAMS_BYTES = 16;
const COUNTER_BITS = 4;

export function encodeCounting(filter: CountingBloomFilter): Uint8Array {
  const params = new Uint8Array(PARAMS_BYTES);
  const v = new DataView(params.buffer);
  setU64(v, 0, filter.counterSize);
  v.setUint32(8, filter.hashes, true);
  v.setUint8(12, COUNTER_BITS);
  return encodeContainer(
    FILTER_TYPES.counting,
    HASH_SCHEMES.murmur128Mitz64,
    FUNNEL_IDS[filter.funnel],
    params,
    [filter.counters.data],
  );
}

export function decodeCounting(bytes: Uint8Array): CountingBloomFilter {
  const { header, params, payload } = decodeContainer(bytes, FILTER_TYPES.counting);
  checkParamsLength(header, PARAMS_BYTES, 'counting filter');
  checkHashScheme(header, HASH_SCHEMES.murmur128Mitz64, 'counting filter', 'MURMUR128_MITZ_64');
  const funnel = headerFunnel(header);
  const m = getU64(params, 0, 'counter count');
  const hashes = params.getUint32(8, true);
  const width = params.getUint8(12);
  if (m === 0 || m % 64 !== 0 || m > MAX_COUNTERS) {
    throw new FormatError(
      `bad counter count ${m}: must be a positive multiple of 64 up to ${MAX_COUNTERS}`,
    );
  }
  checkHashCount(hashes);
  if (width !== COUNTER_BITS) {
    throw new FormatError(`bad counter width ${width} bits: only 4 is defined`);
  }
  if (params.getUint8(13) !== 0 || params.getUint16(14, true) !== 0) {
    throw new FormatError('reserved counting filter parameter bytes are not zero');
  }
  if (payload.length !== m / 2) {
    throw new FormatError(`payload has ${payload.length} bytes, ${m} counters need ${m / 2}`);
  }
  return new CountingBloomFilter(
    { counters: m, hashes, funnel },
    new CounterArray(m, payload.slice()),
  );
}
