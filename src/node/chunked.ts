/**
 * A filter larger than memory as a file of chunks plus an index, queried without loading it:
 * HBase's CompoundBloomFilter ("Bloom blocks", a "Bloom index block"); format: docs/FORMAT.md.
 *
 * Guarantee: `has(key)` is true for every key given to `build` (no false negatives). A key never
 * given is reported present with the rate of the classic filter that is its chunk: about
 * (1 − e^(−k·n_c/m_c))^k for a chunk of m_c = 8·chunkBytes bits holding n_c keys. With hash
 * routing, n_c is binomial around n/C; at 128 KiB chunks that costs next to nothing over one
 * unchunked filter of the same total size (RocksDB/Redis computation in REFERENCE.md §4: an
 * 8 KiB block gives 0.820% against 0.819% at 10 bits/key). With range routing every chunk but
 * the last holds exactly `keysPerChunk` keys, sized for the target rate, and a key that sorts
 * before the first chunk is answered `false` without any read.
 *
 * "The same as an in-memory filter": chunk c of the file holds exactly the bits that
 * `new BloomFilter({ bits: 8·chunkBytes, hashes: k, funnel })` holds after adding the keys routed
 * to c (`chunkOf(key)`), and `has(key)` answers what that filter answers. `readChunk(c)` returns
 * that filter.
 *
 * Costs: `open` reads the header, parameters and index (8 bytes per chunk plus, for range routing,
 * the first keys) and checks their CRC-32C; memory is that index plus an LRU of at most
 * `cacheBytes` of chunks (default 8 MiB). A `has` on a cached chunk is a hash and k bit tests; on
 * a miss it is one positional read of chunkBytes + 8 bytes, whose CRC is checked before use (a bad
 * chunk throws `FormatError`, never a wrong answer). `hasMany` groups keys by chunk and reads each
 * chunk once, in file order. A chunk that holds no key (its index count is 0) is never read: every
 * key routed to it is absent.
 *
 * Hostile files: `open` checks every length in the header against the real file size and the
 * limits (at most 2^22 chunks, an index of at most 128 MiB) before it allocates anything, so what
 * it reads and holds is bounded by the index the file really has; every `FormatError` names the file.
 */

import type { FileHandle } from 'node:fs/promises';
import { FormatError, show } from '../errors.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { ProgressOptions, ReadonlyAsyncMembershipFilter } from '../filters/filter.js';
import { crc32c } from '../formats/crc32c.js';
import { hashKey, mitz64Probes, views } from '../hash/hasher.js';
import { type Funnel, type Key, keyBytes } from '../hash/keys.js';
import { Modulus, mitz64Indexes } from '../hash/strategies.js';
import { falsePositiveRate } from '../math.js';
import { buildChunked, type ChunkedBuildOptions } from './chunked-build.js';
import { ChunkCache } from './chunked-cache.js';
import {
  CHUNKS_OFFSET,
  type ChunkedLayout,
  decodeHead,
  decodeIndex,
  fileSize,
  hashChunk,
  indexOffset,
  rangeChunk,
} from './chunked-format.js';
import {
  type ChunkedBloomInfo,
  type ChunkedCacheStats,
  type ChunkedOpenOptions,
  DEFAULT_CACHE_BYTES,
  groupByChunk,
  inFile,
  infoOf,
  readAt,
} from './chunked-info.js';
import { checkProgress, throwIfAborted } from './progress.js';
import { openRegular } from './regular-file.js';

export type { ChunkedBuildOptions } from './chunked-build.js';
export type { ChunkedRouting } from './chunked-format.js';

export type { ChunkedBloomInfo, ChunkedCacheStats, ChunkedOpenOptions } from './chunked-info.js';

export class ChunkedBloomFilter implements ReadonlyAsyncMembershipFilter<Key> {
  private readonly layout: ChunkedLayout;
  private readonly counts: Uint32Array;
  private readonly firstKeys: readonly Uint8Array[];
  private readonly mod: Modulus;
  private readonly idx: Float64Array;
  /** The file's chunk reads and the LRU of chunks (chunked-cache.ts). */
  private readonly chunkCache: ChunkCache;
  private readonly fileBytes: number;

  private constructor(
    fh: FileHandle,
    layout: ChunkedLayout,
    counts: Uint32Array,
    firstKeys: readonly Uint8Array[],
    cacheBytes: number,
    fileBytes: number,
    path: string,
  ) {
    this.layout = layout;
    this.counts = counts;
    this.firstKeys = firstKeys;
    this.mod = new Modulus(layout.chunkBytes * 8);
    this.idx = new Float64Array(layout.hashes);
    this.chunkCache = new ChunkCache(fh, layout, counts, cacheBytes, path);
    this.fileBytes = fileBytes;
  }

  /**
   * Builds a chunked filter file at `path` from `keys` (any iterable or async iterable, read
   * once), sized for `capacity` keys at rate `fpp`, in chunks of `chunkBytes` (default 131072).
   * Memory stays bounded whatever the size (see `chunked-build.ts`). Resolves to the file's info.
   */
  static async build(
    path: string,
    keys: Iterable<Key> | AsyncIterable<Key>,
    options: ChunkedBuildOptions,
  ): Promise<ChunkedBloomInfo> {
    const layout = await buildChunked(path, keys, options);
    return infoOf(layout, fileSize(layout));
  }

  /**
   * Opens a chunked filter file: reads and checks only the header, parameters and index. Throws
   * `FormatError` for a damaged or foreign file.
   */
  static async open(path: string, options: ChunkedOpenOptions = {}): Promise<ChunkedBloomFilter> {
    const cacheBytes = options.cacheBytes ?? DEFAULT_CACHE_BYTES;
    if (typeof cacheBytes !== 'number' || !Number.isSafeInteger(cacheBytes) || cacheBytes < 0) {
      throw new RangeError(
        `cacheBytes must be a non-negative safe integer, got ${show(cacheBytes)}`,
      );
    }
    if (typeof path !== 'string') throw new TypeError(`path must be a string, got ${show(path)}`);
    // A regular file only: a FIFO is refused at once instead of waited on.
    const { handle: fh, info } = await openRegular(path);
    try {
      const size = info.size;
      const head = new Uint8Array(Math.min(size, CHUNKS_OFFSET));
      await readAt(fh, head, 0);
      const layout = decodeHead(head, size);
      // Every length is checked against the real file size: the allocation below is bounded.
      const index = new Uint8Array(layout.indexLength + 4);
      await readAt(fh, index, indexOffset(layout));
      const body = index.subarray(0, layout.indexLength);
      const stored = new DataView(index.buffer).getUint32(layout.indexLength, true);
      const actual = crc32c(body, crc32c(head));
      if (stored !== actual) {
        throw new FormatError(
          `checksum mismatch in the header or index: stored CRC-32C 0x${stored.toString(16).padStart(8, '0')}, computed 0x${actual.toString(16).padStart(8, '0')}`,
        );
      }
      const { counts, firstKeys } = decodeIndex(layout, body);
      return new ChunkedBloomFilter(fh, layout, counts, firstKeys, cacheBytes, size, path);
    } catch (error) {
      await fh.close();
      throw inFile(path, error);
    }
  }

  /** The key encoding the file was built for. */
  get funnel(): Funnel {
    return this.layout.funnel;
  }

  /** Keys added at build (from the header; consecutive repeats in range routing counted once). */
  async estimatedCount(): Promise<number> {
    return this.layout.keys;
  }

  /** What the file holds. */
  get info(): ChunkedBloomInfo {
    return infoOf(this.layout, this.fileBytes);
  }

  /** Cache counters. */
  cacheStats(): ChunkedCacheStats {
    return this.chunkCache.counters();
  }

  /** The chunk that holds `key`'s bits, or −1 (range routing: the key sorts before chunk 0). */
  chunkOf(key: Key): number {
    if (this.layout.routing === 'range') {
      return rangeChunk(this.firstKeys, keyBytes(this.layout.funnel, key));
    }
    hashKey(this.layout.funnel, key);
    return hashChunk(views.hash, this.layout.chunks);
  }

  /** False if `key` was certainly not added; true if it probably was. */
  async has(key: Key): Promise<boolean> {
    this.checkOpen();
    const { routing, funnel, hashes: k, chunks } = this.layout;
    let c: number;
    if (routing === 'range') {
      c = rangeChunk(this.firstKeys, keyBytes(funnel, key));
      if (c < 0) return false;
      mitz64Probes(funnel, key, k, this.mod);
    } else {
      mitz64Probes(funnel, key, k, this.mod);
      c = hashChunk(views.hash, chunks);
    }
    if (this.counts[c] === 0) return false;
    const bits = this.chunkCache.cached(c);
    if (bits !== undefined) return this.testProbes(bits);
    const loaded = await this.chunkCache.load(c);
    // Other calls may have hashed in the meantime: probe again.
    mitz64Probes(funnel, key, k, this.mod);
    return this.testProbes(loaded);
  }

  /**
   * `has` for many keys (any iterable or async iterable); the answers are in the order of `keys`.
   * Keys are grouped by chunk so that each chunk is read at most once (in file order), whatever
   * the cache size. `onProgress(keysAnswered, keys)` after each chunk read; `signal` is checked
   * before each read.
   */
  async hasMany(
    keys: Iterable<Key> | AsyncIterable<Key>,
    options: ProgressOptions = {},
  ): Promise<boolean[]> {
    this.checkOpen();
    checkProgress(options);
    let list: Key[];
    if (keys !== null && typeof keys === 'object' && Symbol.asyncIterator in keys) {
      list = [];
      for await (const key of keys as AsyncIterable<Key>) list.push(key);
    } else if (keys !== null && typeof keys === 'object' && Symbol.iterator in keys) {
      list = Array.from(keys as Iterable<Key>);
    } else {
      throw new TypeError(`keys must be an iterable or async iterable, got ${show(keys)}`);
    }
    const { signal, onProgress } = options;
    const n = list.length;
    const out = new Array<boolean>(n).fill(false);
    const hashes = new Int32Array(4 * n);
    const chunkIds = new Int32Array(n);
    const { routing, funnel, chunks, hashes: k } = this.layout;
    for (let i = 0; i < n; i++) {
      const key = list[i]!;
      const c = routing === 'range' ? rangeChunk(this.firstKeys, keyBytes(funnel, key)) : 0;
      hashKey(funnel, key);
      const h = views.hash;
      hashes[4 * i] = h[0]!;
      hashes[4 * i + 1] = h[1]!;
      hashes[4 * i + 2] = h[2]!;
      hashes[4 * i + 3] = h[3]!;
      chunkIds[i] = routing === 'range' ? c : hashChunk(h, chunks);
    }
    const order = groupByChunk(chunkIds, chunks);
    const h = new Int32Array(4);
    const idx = this.idx;
    for (let start = 0; start < order.length; ) {
      const chunk = chunkIds[order[start]!]!;
      let end = start;
      while (end < order.length && chunkIds[order[end]!] === chunk) end++;
      if (chunk >= 0 && this.counts[chunk] !== 0) {
        throwIfAborted(signal);
        const bits = this.chunkCache.cached(chunk) ?? (await this.chunkCache.load(chunk));
        for (let o = start; o < end; o++) {
          const i = order[o]!;
          h[0] = hashes[4 * i]!;
          h[1] = hashes[4 * i + 1]!;
          h[2] = hashes[4 * i + 2]!;
          h[3] = hashes[4 * i + 3]!;
          mitz64Indexes(h, k, this.mod, idx);
          let all = true;
          for (let p = 0; p < k; p++) {
            const j = idx[p]!;
            if ((bits[(j / 32) | 0]! & (1 << (j & 31))) === 0) {
              all = false;
              break;
            }
          }
          out[i] = all;
        }
        onProgress?.(end, n);
      }
      start = end;
    }
    onProgress?.(n, n);
    return out;
  }

  /**
   * Chunk `c` as a classic filter (a fresh copy, read from the file and checked): the in-memory
   * filter that answers for the keys routed to `c`.
   */
  async readChunk(c: number): Promise<BloomFilter> {
    this.checkOpen();
    this.checkChunk(c);
    const bits = await this.chunkCache.readRecord(c);
    const filter = new BloomFilter({
      bits: this.layout.chunkBytes * 8,
      hashes: this.layout.hashes,
      funnel: this.layout.funnel,
    });
    filter.bits.data.set(bits);
    filter.bits.recount();
    return filter;
  }

  /** Number of keys added to chunk `c` (from the index). */
  chunkKeys(c: number): number {
    this.checkChunk(c);
    return this.counts[c]!;
  }

  /**
   * The false positive rate implied by the per-chunk key counts: the mean over chunks of
   * (1 − e^(−k·n_c/m_c))^k (exact for hash routing, where an absent key picks a chunk uniformly).
   */
  expectedFpp(): number {
    const { chunks, hashes, chunkBytes } = this.layout;
    if (chunks === 0) return 0;
    let sum = 0;
    for (let c = 0; c < chunks; c++) {
      const n = this.counts[c]!;
      if (n > 0) sum += falsePositiveRate(n, chunkBytes * 8, hashes);
    }
    return sum / chunks;
  }

  /**
   * Reads every chunk that holds keys once and checks its CRC; throws `FormatError` at the first
   * bad one. (Empty chunks are never read by queries, so there is nothing of theirs to check.)
   */
  async verify(): Promise<void> {
    this.checkOpen();
    for (let c = 0; c < this.layout.chunks; c++) {
      if (this.counts[c] !== 0) await this.chunkCache.readRecord(c);
    }
  }

  /** Closes the file; later calls throw. */
  async close(): Promise<void> {
    await this.chunkCache.close();
  }

  private checkOpen(): void {
    if (this.chunkCache.closed) throw new Error('this ChunkedBloomFilter is closed');
  }

  private checkChunk(c: number): void {
    if (!Number.isInteger(c) || c < 0 || c >= this.layout.chunks) {
      throw new RangeError(
        `chunk must be an integer in [0, ${this.layout.chunks}), got ${show(c)}`,
      );
    }
  }

  /** Tests the probes of the last `mitz64Probes` call against a chunk's bits. */
  private testProbes(bits: Uint32Array): boolean {
    const k = this.layout.hashes;
    const w = views.words;
    const m = views.masks;
    for (let i = 0; i < k; i++) if ((bits[w[i]!]! & m[i]!) === 0) return false;
    return true;
  }
}
