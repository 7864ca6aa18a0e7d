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
 *
 * The payload is the filter's own `CounterArray` bytes, byte for byte (no words, no endianness),
 * so every way in and out of {@link countingFormat} avoids copies: its parts view the counters for
 * the streaming writer of `bloomkit/node`, its sink allocates the filter after the header and
 * parameters are checked and lets the reader fill its counters in place, and its decoder with
 * `{ copy: false }` views the payload inside `bytes` at any alignment.
 */

import { CounterArray, MAX_COUNTERS } from '../../bits/counters.js';
import { FormatError } from '../../errors.js';
import {
  checkHashCount,
  decodeContainer,
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  type NativeHeader,
  setU64,
} from '../../formats/native.js';
import { checkTypeHeader, nativeFormat, withSink } from '../../formats/native-type.js';
import type { CountingBloomFilter, CountingBloomFilterShape } from './filter.js';

const COUNTER_BITS = 4;

const COUNTING = {
  typeId: FILTER_TYPES.counting,
  what: 'counting filter',
  paramsBytes: 16,
  schemes: { MURMUR128_MITZ_64: 1 satisfies typeof HASH_SCHEMES.murmur128Mitz64 },
};

/** Checks a counting header and parameters, including that L matches m (nothing is allocated). */
function checkCounting(header: NativeHeader, params: DataView): Required<CountingBloomFilterShape> {
  const funnel = checkTypeHeader(header, COUNTING);
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
  if (header.payloadLength !== m / 2) {
    throw new FormatError(`payload has ${header.payloadLength} bytes, ${m} counters need ${m / 2}`);
  }
  return { counters: m, hashes, funnel };
}

/** The counting filter in the native format, without the streaming sink (what the class uses). */
export const countingFormatCore = /* @__PURE__ */ nativeFormat<
  CountingBloomFilter,
  typeof CountingBloomFilter
>({
  native: COUNTING,
  writeParams(v, filter) {
    setU64(v, 0, filter.counterSize);
    v.setUint32(8, filter.hashes, true);
    v.setUint8(12, COUNTER_BITS);
  },
  payload: (filter) => [filter.counters.data],
  /**
   * With `{ copy: false }` the counters view the payload inside `bytes` (any alignment: they are
   * single bytes), so `bytes` must then stay untouched for the filter's life and changes to the
   * filter change `bytes`; otherwise the payload is copied.
   */
  decode(bytes, options, Filter) {
    const { header, params, payload } = decodeContainer(bytes, COUNTING.typeId);
    const shape = checkCounting(header, params);
    const data = options?.copy === false ? payload : payload.slice();
    return new Filter(shape, new CounterArray(shape.counters, data));
  },
  sink: null,
});

/** The counting filter in the native format. */
export const countingFormat = /* @__PURE__ */ withSink(
  countingFormatCore,
  // Allocates the filter (after every check) and exposes its counter bytes as the bytes to fill.
  (header, params, Filter) => {
    const filter = new Filter(checkCounting(header, params));
    return { targets: [filter.counters.data], finish: () => filter };
  },
);
