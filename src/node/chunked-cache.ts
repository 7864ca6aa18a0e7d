/**
 * The chunks of an open chunked filter file (chunked.ts): one positional read per chunk record,
 * checked before use, and an LRU of the chunks read, bounded in bytes.
 *
 * A chunk's record (docs/FORMAT.md) is its bits, its key count and a CRC-32C; `readRecord` checks
 * the count against the index and the CRC before returning the bits, and throws a `FormatError`
 * naming the file otherwise (a bad chunk is never a wrong answer). `load` reads a chunk once,
 * however many callers wait for it, and caches it; `cached` is a hit, marked most recently used.
 *
 * The cache is an LRU over a Map (insertion order = recency: a hit re-inserts, eviction takes the
 * first entries), bounded in bytes. A library such as lru-cache would do the same in one more
 * runtime dependency of bloomkit/node; what it adds (TTLs, fetch, disposal hooks) is not needed
 * here, and the read de-duplication (`pending`) would still be ours.
 */

import type { FileHandle } from 'node:fs/promises';
import { FormatError } from '../errors.js';
import { LITTLE_ENDIAN } from '../hash/murmur3.js';
import { type ChunkedLayout, chunkCrc, chunkOffset, chunkStride } from './chunked-format.js';
import { type ChunkedCacheStats, inFile, readAt } from './chunked-info.js';

export class ChunkCache {
  private fh: FileHandle | null;
  private readonly layout: ChunkedLayout;
  private readonly counts: Uint32Array;
  private readonly cacheBytes: number;
  private readonly path: string;
  private readonly cache = new Map<number, Uint32Array>();
  private readonly pending = new Map<number, Promise<Uint32Array>>();
  private readonly stats: ChunkedCacheStats = { hits: 0, reads: 0, bytes: 0, chunks: 0 };

  /** Over `fh` (owned from now on: `close` closes it), holding at most `cacheBytes` of chunks. */
  constructor(
    fh: FileHandle,
    layout: ChunkedLayout,
    counts: Uint32Array,
    cacheBytes: number,
    path: string,
  ) {
    this.fh = fh;
    this.layout = layout;
    this.counts = counts;
    this.cacheBytes = cacheBytes;
    this.path = path;
  }

  /** True once `close` has been called. */
  get closed(): boolean {
    return this.fh === null;
  }

  /** Cache counters since the file was opened (a copy). */
  counters(): ChunkedCacheStats {
    return { ...this.stats };
  }

  /** Closes the file and empties the cache; later reads throw. */
  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    this.cache.clear();
    this.stats.bytes = 0;
    this.stats.chunks = 0;
    if (fh !== null) await fh.close();
  }

  /** The cached bits of chunk `c`, marked most recently used. */
  cached(c: number): Uint32Array | undefined {
    const bits = this.cache.get(c);
    if (bits !== undefined) {
      this.cache.delete(c);
      this.cache.set(c, bits);
      this.stats.hits++;
    }
    return bits;
  }

  /** Reads chunk `c` (once, however many callers wait for it) and caches it. */
  load(c: number): Promise<Uint32Array> {
    const waiting = this.pending.get(c);
    if (waiting !== undefined) return waiting;
    const promise = this.readRecord(c).then(
      (bits) => {
        this.pending.delete(c);
        this.remember(c, bits);
        return bits;
      },
      (error: unknown) => {
        this.pending.delete(c);
        throw error;
      },
    );
    this.pending.set(c, promise);
    return promise;
  }

  private remember(c: number, bits: Uint32Array): void {
    // Accounted at the record's full size (bits + 8 bytes), what the cache really holds.
    const size = bits.buffer.byteLength;
    if (this.fh === null || size > this.cacheBytes || this.cache.has(c)) return;
    this.cache.set(c, bits);
    this.stats.bytes += size;
    this.stats.chunks++;
    for (const [old, oldBits] of this.cache) {
      if (this.stats.bytes <= this.cacheBytes) break;
      this.cache.delete(old);
      this.stats.bytes -= oldBits.buffer.byteLength;
      this.stats.chunks--;
    }
  }

  /**
   * One positional read of chunk `c`'s record; checks its key count and CRC. The record of an
   * empty chunk may be a hole (all zeros), which is accepted as such.
   */
  async readRecord(c: number): Promise<Uint32Array> {
    const fh = this.fh;
    if (fh === null) throw new Error('this ChunkedBloomFilter is closed');
    const b = this.layout.chunkBytes;
    const record = new Uint8Array(chunkStride(b));
    await readAt(fh, record, chunkOffset(this.layout, c)).catch((error: unknown) => {
      throw inFile(this.path, error);
    });
    this.stats.reads++;
    if (this.counts[c] === 0 && record.every((byte) => byte === 0)) {
      return new Uint32Array(record.buffer, 0, b / 4);
    }
    const v = new DataView(record.buffer);
    const count = v.getUint32(b, true);
    const stored = v.getUint32(b + 4, true);
    const actual = chunkCrc(record.subarray(0, b + 4), c);
    if (stored !== actual) {
      throw new FormatError(
        `${this.path}: checksum mismatch in chunk ${c}: stored CRC-32C 0x${stored.toString(16).padStart(8, '0')}, computed 0x${actual.toString(16).padStart(8, '0')}`,
      );
    }
    if (count !== this.counts[c]) {
      throw new FormatError(
        `${this.path}: chunk ${c} holds ${count} keys, the index says ${this.counts[c]}`,
      );
    }
    const bits = new Uint32Array(record.buffer, 0, b / 4);
    if (!LITTLE_ENDIAN) {
      for (let i = 0; i < bits.length; i++) bits[i] = v.getUint32(4 * i, true);
    }
    return bits;
  }
}
