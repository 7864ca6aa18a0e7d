/**
 * bloomkit: Bloom filters and their family, browser-safe core (no Node imports).
 * Node-only helpers (files, streams, workers) live in `bloomkit/node`.
 *
 * @module bloomkit
 */

export {
  CacheGuard,
  type CacheGuardOptions,
  type CacheGuardStats,
  type RebuildOptions,
  type RebuildReport,
} from './apps/cache-guard.js';
export type { AnyFilter } from './apps/membership.js';
export {
  RuntimeFilter,
  type RuntimeFilterBuildOptions,
  type RuntimeFilterOptions,
  type RuntimeFilterStats,
} from './apps/runtime-filter.js';
export { BitArray, type BitStorage, popcount32 } from './bits/bit-array.js';
export { COUNTER_MAX, CounterArray, MAX_COUNTERS } from './bits/counters.js';
export { SharedBitArray } from './bits/shared-bit-array.js';
export { SharedCounterArray } from './bits/shared-counters.js';
export type { SharedFilterHandle, SharedFilterType } from './bits/shared-handle.js';
export { SharedMemoryUnavailableError } from './bits/shared-memory.js';
export { FilterFullError, FormatError, IncompatibleFiltersError } from './errors.js';
export {
  DescribedFilter,
  FilterBase,
  type FilterJSON,
  ReadonlyFilterBase,
  type Saturation,
} from './filters/base.js';
export { BinaryFuseFilter, type BinaryFuseOptions } from './filters/binary-fuse/filter.js';
export {
  BLOCK_BITS,
  BlockedBloomFilter,
  type BlockedBloomFilterCommonOptions,
  type BlockedBloomFilterCreateOptions,
  type BlockedBloomFilterShape,
  type BlockedSize,
  blockedFalsePositiveRate,
  blockedSize,
} from './filters/blocked/filter.js';
export {
  BloomFilter,
  type BloomFilterCommonOptions,
  type BloomFilterCreateOptions,
  type BloomFilterShape,
} from './filters/bloom/filter.js';
export {
  type CascadeBuildOptions,
  type CascadeReadOptions,
  FilterCascade,
} from './filters/cascade/filter.js';
export type { CascadeHash, CascadeLayer } from './filters/cascade/hashing.js';
export type { MlbfWriteOptions } from './filters/cascade/mlbf.js';
export {
  CountingBloomFilter,
  type CountingBloomFilterCreateOptions,
  type CountingBloomFilterShape,
  type MembershipSource,
} from './filters/counting/filter.js';
export {
  CuckooFilter,
  type CuckooFilterCreateOptions,
  type CuckooFilterShape,
  type CuckooVictim,
  cuckooFingerprintBits,
  cuckooSafeCapacity,
} from './filters/cuckoo/filter.js';
export {
  DcsoBloomFilter,
  type DcsoBloomFilterCreateOptions,
  type DcsoBloomFilterShape,
  dcsoSize,
} from './filters/dcso/filter.js';
export type {
  AbortSignalLike,
  AsyncMembershipFilter,
  DeletableFilter,
  KeyOf,
  MembershipFilter,
  PackedKeys,
  ProgressOptions,
  ReadonlyAsyncMembershipFilter,
  ReadonlyMembershipFilter,
} from './filters/filter.js';
export { forEachPacked, type PackTarget, packKeys, splitRecords } from './filters/packed.js';
export {
  ScalableBloomFilter,
  type ScalableBloomFilterCreateOptions,
  type ScalableLayerInfo,
} from './filters/scalable/filter.js';
export {
  PARQUET_TYPE_IDS,
  type ParquetPhysicalType,
  SALT as SPLIT_BLOCK_SALT,
  SplitBlockBloomFilter,
  type SplitBlockCommonOptions,
  type SplitBlockCreateOptions,
  type SplitBlockShape,
  type SplitBlockSize,
  splitBlockFalsePositiveRate,
  splitBlockSize,
} from './filters/split-block/filter.js';
export { type BudgetSize, budgetSize, filterBytes, type SizedType } from './formats/budget.js';
export type {
  FilterCodec,
  FilterFacts,
  LiveCells,
  SharedFilter,
  Sizing,
  TypeCapabilities,
  TypeDisplay,
} from './formats/codec.js';
export { crc32c } from './formats/crc32c.js';
export { detectFormat, type FilterFormat, formatAdvice } from './formats/detect.js';
export { type DecodeOptions, FILTER_TYPES, HASH_SCHEMES } from './formats/native.js';
export {
  type ParquetBloomFilterEntry,
  type ParquetByteSource,
  readParquetBloomFilters,
  readParquetBloomFiltersFrom,
} from './formats/parquet-file.js';
export {
  CODECS,
  codecForType,
  codecOf,
  describeFilter,
  fromBytes,
  fromJSON,
  TYPE_NAMES,
  typeNamed,
  typesWith,
} from './formats/registry.js';
export type {
  SizeInputs,
  SizeModel,
  SizePair,
  SizeShape,
  SizeSolution,
} from './formats/size-model.js';
export { type SizeAnswer, solveSize } from './formats/solve.js';
export {
  compositeKey,
  hbaseRowColBloomKey,
  type KeyPart,
  MAX_FAMILY_BYTES,
  MAX_ROW_BYTES,
  rowColKey,
  rowKey,
} from './hash/composite-keys.js';
export { FUNNEL_IDS, type Funnel, type Key, keyBytes } from './hash/keys.js';
export { murmur3x64_128 } from './hash/murmur3.js';
export { murmur3x86_32 } from './hash/murmur3-x86-32.js';
export { STRATEGY_ORDINALS, type StrategyName } from './hash/strategies.js';
export { xxhash64 } from './hash/xxhash64.js';
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
  SATURATION_LIMIT,
} from './math.js';
export {
  type BatchOutcome,
  KEY_STATUS,
  StoredFilterError,
  StoredFilterLostError,
  StoredFilterMismatchError,
  StoredFilterNotFoundError,
  StoredFilterReplicationError,
  StoredFilterStaleError,
  StoredFilterTimeoutError,
  type StoreErrorKind,
} from './sharded/errors.js';
export { MemoryShardStore, type MemoryShardStoreOptions } from './sharded/memory-store.js';
export { DEFAULT_TIMEOUT, type StoreOptions } from './sharded/ops.js';
export {
  ShardedBloomFilter,
  type ShardedBloomOptions,
  type ShardedBloomShape,
} from './sharded/sharded-bloom.js';
export {
  type Epoch,
  type GuardedReply,
  guardedReply,
  type Landed,
  META_REPLY,
  type Meta,
  type MetaFields,
  type MetaUpdate,
  REPLY as SHARD_REPLY,
  type ReplyCode,
  type ShardHeader,
  type ShardKind,
  type ShardRead,
  type ShardStore,
  type WriteReply,
} from './sharded/store.js';
export {
  StoredBloomFilter,
  type StoredBloomFilterOptions,
  type StoredImportOptions,
} from './sharded/stored-bloom.js';
export {
  StoredCountingBloomFilter,
  type StoredCountingBloomFilterOptions,
} from './sharded/stored-counting.js';
export {
  altBucket,
  CUCKOO_MIN_FPP,
  StoredCuckooFilter,
  type StoredCuckooFilterOptions,
} from './sharded/stored-cuckoo.js';
export type { StoredCreateOptions } from './sharded/stored-open.js';
export {
  StoredScalableBloomFilter,
  type StoredScalableBloomFilterOptions,
} from './sharded/stored-scalable.js';
