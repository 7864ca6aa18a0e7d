/**
 * The classic Bloom filter in bloomkit's native format (filter type id 1).
 *
 * Parameters (16 bytes, little-endian):
 *
 * | offset | size | field                                   |
 * |--------|------|-----------------------------------------|
 * | 0      | 8    | bit size m, u64, a multiple of 64        |
 * | 8      | 4    | number of hash functions k, u32 (1..255) |
 * | 12     | 4    | reserved, 0                              |
 *
 * Hash scheme: 0 (MURMUR128_MITZ_32) or 1 (MURMUR128_MITZ_64). Payload: m/8 bytes, the 64-bit
 * words as little-endian (bit i is bit i & 7 of byte i >>> 3).
 *
 * {@link bloomFormat} is this type for the word-payload format (formats/word-payload.ts): parts
 * whose payload views the filter's words, the decoder (with `{ copy: false }` the filter's words
 * view the payload inside `bytes` when it starts at a 4-byte-aligned address on a little-endian
 * host, always the case for a buffer read whole from a file: the payload sits at offset 40), and
 * the streaming sink (the filter is allocated after the header and parameters are checked, and
 * the reader fills its words in place).
 */

import { FormatError } from '../../errors.js';
import { guavaAdvice } from '../../formats/detect.js';
import {
  checkHashCount,
  checkStoredBits,
  FILTER_TYPES,
  getU64,
  type NativeHeader,
  setU64,
} from '../../formats/native.js';
import { withSink } from '../../formats/native-type.js';
import { type WordType, wordFormatCore, wordSink } from '../../formats/word-payload.js';
import type { Funnel } from '../../hash/keys.js';
import {
  STRATEGY_ORDINALS,
  type StrategyName,
  strategyFromOrdinal,
} from '../../hash/strategies.js';
import type { BloomFilter } from './filter.js';

interface BloomShape {
  bits: number;
  hashes: number;
  funnel: Funnel;
  strategy: StrategyName;
}

/** Checks the parameters, including that L matches m (the header's fields are checked). */
function checkBloom(header: NativeHeader, params: DataView, funnel: Funnel): BloomShape {
  const bits = getU64(params, 0, 'bit size');
  const hashes = params.getUint32(8, true);
  checkStoredBits(bits);
  checkHashCount(hashes);
  if (params.getUint32(12, true) !== 0)
    throw new FormatError('reserved bloom parameter bytes are not zero');
  if (header.payloadLength !== bits / 8) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, a ${bits}-bit filter needs ${bits / 8}`,
    );
  }
  return { bits, hashes, funnel, strategy: strategyFromOrdinal(header.hash)! };
}

const BLOOM: WordType<BloomShape, BloomFilter> = {
  native: {
    typeId: FILTER_TYPES.bloom,
    what: 'bloom filter',
    paramsBytes: 16,
    schemes: STRATEGY_ORDINALS,
  },
  hashOf: (filter) => STRATEGY_ORDINALS[filter.strategy],
  writeParams(v, filter) {
    setU64(v, 0, filter.bitSize);
    v.setUint32(8, filter.hashes, true);
  },
  check: checkBloom,
  bitsOf: (shape) => shape.bits,
  // `BloomFilter.fromBytes` given Guava's bytes says to use `fromGuava`.
  advise: guavaAdvice,
};

/** The classic filter in the native format, without the streaming sink (what the class uses). */
export const bloomFormatCore = /* @__PURE__ */ wordFormatCore(BLOOM);

/** The classic filter in the native format. */
export const bloomFormat = /* @__PURE__ */ withSink(
  bloomFormatCore,
  /* @__PURE__ */ wordSink(BLOOM),
);
