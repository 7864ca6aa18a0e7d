/**
 * The chunked filter file's public facts (info, cache counters, open options) and the small
 * helpers its reader uses: positional reads, grouping keys by chunk, naming the file in errors.
 */

import type { FileHandle } from 'node:fs/promises';
import { FormatError } from '../errors.js';
import type { Funnel } from '../hash/keys.js';
import type { ChunkedLayout, ChunkedRouting } from './chunked-format.js';

export interface ChunkedOpenOptions {
  /** Upper bound on the bytes of chunks kept in memory (LRU); default 8 MiB; 0 disables it. */
  cacheBytes?: number;
}

/** What a chunked file's header and parameters say about it (the reader's layout adds the rest). */
export interface ChunkedShape {
  readonly routing: ChunkedRouting;
  readonly funnel: Funnel;
  /** Hash functions per key, k. */
  readonly hashes: number;
  /** Bytes of bits per chunk, B. */
  readonly chunkBytes: number;
  /** Number of chunks, C. */
  readonly chunks: number;
  /** Keys added (consecutive repeats of a key in range routing are not added again). */
  readonly keys: number;
  /** Capacity and fpp requested at build. */
  readonly capacity: number;
  readonly fpp: number;
  /** Range routing: keys per chunk; 0 for hash routing. */
  readonly keysPerChunk: number;
}

/** What a chunked file holds (from its header and index). */
export interface ChunkedBloomInfo extends ChunkedShape {
  /** File size in bytes. */
  readonly fileBytes: number;
}

/** Cache counters since `open`. */
export interface ChunkedCacheStats {
  hits: number;
  /** Chunk reads from the file. */
  reads: number;
  /** Bytes of chunks held now. */
  bytes: number;
  /** Chunks held now. */
  chunks: number;
}

export const DEFAULT_CACHE_BYTES = 8 * 2 ** 20;

export async function readAt(fh: FileHandle, target: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < target.length) {
    const { bytesRead } = await fh.read(target, done, target.length - done, position + done);
    if (bytesRead === 0) {
      throw new FormatError(`truncated: the file ends at byte ${position + done}`);
    }
    done += bytesRead;
  }
}

/**
 * The indexes 0..n−1 ordered by chunk id (−1, "no chunk", first), so that each chunk's keys are
 * consecutive and chunks come in file order. A counting sort when the chunk count is moderate.
 */
export function groupByChunk(chunkIds: Int32Array, chunks: number): Uint32Array {
  const n = chunkIds.length;
  const order = new Uint32Array(n);
  if (chunks > 4 * n + 1024) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((a, b) => chunkIds[a]! - chunkIds[b]! || a - b);
  }
  const starts = new Uint32Array(chunks + 2);
  for (let i = 0; i < n; i++) starts[chunkIds[i]! + 2]!++;
  for (let c = 2; c < starts.length; c++) starts[c]! += starts[c - 1]!;
  for (let i = 0; i < n; i++) order[starts[chunkIds[i]! + 1]!++] = i;
  return order;
}

/** `error` with the file's path in front when it is a `FormatError` (the cause is kept). */
export function inFile(path: string, error: unknown): unknown {
  if (!(error instanceof FormatError)) return error;
  return new FormatError(`${path}: ${error.message}`, { cause: error });
}

export function infoOf(layout: ChunkedLayout, fileBytes: number): ChunkedBloomInfo {
  return {
    routing: layout.routing,
    funnel: layout.funnel,
    hashes: layout.hashes,
    chunkBytes: layout.chunkBytes,
    chunks: layout.chunks,
    keys: layout.keys,
    capacity: layout.capacity,
    fpp: layout.fpp,
    keysPerChunk: layout.keysPerChunk,
    fileBytes,
  };
}
