/**
 * bloomkit/node: the parts of bloomkit that need Node.js (files, streams, worker threads).
 *
 * @module bloomkit/node
 */

export * from './index.js';
export {
  ChunkedBloomFilter,
  type ChunkedBloomInfo,
  type ChunkedBuildOptions,
  type ChunkedCacheStats,
  type ChunkedOpenOptions,
  type ChunkedRouting,
} from './node/chunked.js';
export { Deduper, type DeduperOptions, type DeduperStats } from './node/deduper.js';
export {
  type FileLock,
  FileLockedError,
  type FileLockOptions,
  type LockHolder,
  lockFile,
} from './node/file-lock.js';
export {
  type LoadOptions,
  type LoadSource,
  load,
  type SaveOptions,
  type SaveTarget,
  type Serializable,
  save,
} from './node/io.js';
export {
  type BuildParallelOptions,
  buildParallel,
  type ParallelFilterType,
  type ParallelSource,
} from './node/parallel.js';
export { FilterWorkerPool, POOL_CHUNK_BYTES, POOL_CHUNK_KEYS } from './node/parallel-pool.js';
/** @internal The worker threads' entry point (started by FilterWorkerPool). */
export { runParallelWorker } from './node/parallel-worker.js';
export { type ParquetBloomFilterEntry, readParquetBloomFilters } from './node/parquet.js';
export { NotRegularFileError } from './node/regular-file.js';
export { type ServeOptions, type StaticServer, serveStatic, webPageDir } from './node/serve.js';
export {
  buildSidecar,
  buildSidecars,
  readSidecar,
  type SidecarFormat,
  type SidecarInfo,
  type SidecarOptions,
  SidecarSet,
  sidecarPath,
  type UncheckedFile,
} from './node/sidecar.js';
export { endIdleThreads } from './node/worker-threads.js';
