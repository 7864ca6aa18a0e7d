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
 * Three ways in and out: whole buffers (`encodeBloom` / `decodeBloom`), and, for the streaming
 * reader and writer of `bloomkit/node`, parts (`bloomParts`: the payload is a view of the filter's
 * words) and a sink (`bloomSink`: the filter is allocated after the header and parameters are
 * checked, and the reader fills its words in place).
 */

import { FormatError } from '../../errors.js';
import {
  type ContainerParts,
  checkHashCount,
  checkParamsLength,
  containerParts,
  type DecodeOptions,
  FILTER_TYPES,
  getU64,
  headerFunnel,
  type NativeHeader,
  type PayloadSink,
  setU64,
  wordsToBytes,
} from '../../formats/native.js';
import {
  decodeWordFilter,
  type WordFilterType,
  wordFilterSink,
} from '../../formats/word-payload.js';
import { FUNNEL_IDS, type Funnel } from '../../hash/keys.js';
import {
  STRATEGY_ORDINALS,
  type StrategyName,
  strategyFromOrdinal,
} from '../../hash/strategies.js';
import { MAX_BITS } from '../../math.js';
import type { BloomFilter } from './filter.js';

const PARAMS_BYTES = 16;

function bloomParams(filter: BloomFilter): Uint8Array {
  const params = new Uint8Array(PARAMS_BYTES);
  const v = new DataView(params.buffer);
  setU64(v, 0, filter.bitSize);
  v.setUint32(8, filter.hashes, true);
  return params;
}

/** The container of `filter` as parts; the payload views the filter's words (on LE hosts). */
export function bloomParts(filter: BloomFilter): ContainerParts {
  return containerParts(
    FILTER_TYPES.bloom,
    STRATEGY_ORDINALS[filter.strategy],
    FUNNEL_IDS[filter.funnel],
    bloomParams(filter),
    [wordsToBytes(filter.bits.data)],
  );
}

interface BloomShape {
  bits: number;
  hashes: number;
  funnel: Funnel;
  strategy: StrategyName;
}

/** Checks a bloom header and parameters, including that L matches m (nothing is allocated). */
function checkBloom(header: NativeHeader, params: DataView): BloomShape {
  if (header.type !== FILTER_TYPES.bloom) {
    throw new FormatError(
      `expected filter type id ${FILTER_TYPES.bloom}, the bytes hold type id ${header.type}`,
    );
  }
  checkParamsLength(header, PARAMS_BYTES, 'bloom filter');
  const strategy = strategyFromOrdinal(header.hash);
  if (strategy === undefined)
    throw new FormatError(`unknown hash scheme id ${header.hash} for a bloom filter`);
  const funnel = headerFunnel(header);
  const bits = getU64(params, 0, 'bit size');
  const hashes = params.getUint32(8, true);
  if (bits === 0 || bits % 64 !== 0 || bits > MAX_BITS) {
    throw new FormatError(
      `bad bit size ${bits}: must be a positive multiple of 64 up to ${MAX_BITS}`,
    );
  }
  checkHashCount(hashes);
  if (params.getUint32(12, true) !== 0)
    throw new FormatError('reserved bloom parameter bytes are not zero');
  if (header.payloadLength !== bits / 8) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, a ${bits}-bit filter needs ${bits / 8}`,
    );
  }
  return { bits, hashes, funnel, strategy };
}

/**
 * Reads a native bloom container. With `{ copy: false }` the filter's words view the payload
 * inside `bytes` when it starts at a 4-byte-aligned address on a little-endian host (always the
 * case for a buffer read whole from a file: the payload sits at offset 40); otherwise it is copied.
 */
export function decodeBloom(
  bytes: Uint8Array,
  options: DecodeOptions | undefined,
  Filter: typeof BloomFilter,
): BloomFilter {
  return decodeWordFilter(bytes, options, wordType(Filter));
}

/**
 * A streaming sink for a bloom container whose header and parameters were read: allocates the
 * filter (after every check) and exposes its words as the bytes to fill.
 */
export function bloomSink(
  header: NativeHeader,
  params: DataView,
  Filter: typeof BloomFilter,
): PayloadSink<BloomFilter> {
  return wordFilterSink(header, params, wordType(Filter));
}

/** This type as the word-payload decoders see it. */
function wordType(
  Filter: typeof BloomFilter,
): WordFilterType<ReturnType<typeof checkBloom>, BloomFilter> {
  return {
    typeId: FILTER_TYPES.bloom,
    check: checkBloom,
    bitsOf: (shape) => shape.bits,
    make: (shape, storage) => new Filter(shape, storage),
  };
}
