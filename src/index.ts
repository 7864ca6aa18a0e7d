/**
 * bloomkit: Bloom filters and their family, browser-safe core (no Node imports).
 * Node-only helpers (files, streams, workers) live in `bloomkit/node`.
 */

export { BitArray, type BitStorage, popcount32 } from './bits/bit-array.js';
export { SharedBitArray } from './bits/shared-bit-array.js';
export { FilterFullError, FormatError, IncompatibleFiltersError } from './errors.js';
export {
  BloomFilter,
  type BloomFilterCommonOptions,
  type BloomFilterCreateOptions,
  type BloomFilterShape,
} from './filters/bloom.js';
export type { DeletableFilter, MembershipFilter } from './filters/filter.js';
export { fromBytes } from './formats/any.js';
export { crc32c } from './formats/crc32c.js';
export { FILTER_TYPES, HASH_SCHEMES } from './formats/native.js';
export { FUNNEL_IDS, type Funnel, type Key, keyBytes } from './hash/keys.js';
export { murmur3x64_128 } from './hash/murmur3.js';
export { STRATEGY_ORDINALS, type StrategyName } from './hash/strategies.js';
export {
  type BloomSize,
  bitsPerKey,
  bloomSize,
  estimateCount,
  expectedFpp,
  falsePositiveRate,
  lowerBoundBitsPerKey,
  MAX_BITS,
  optimalNumOfBits,
  optimalNumOfHashFunctions,
} from './math.js';
