/**
 * Text handed to worker threads whole: the main thread only reads bytes, in large chunks, into
 * reused shared buffers, and each worker splits its own chunk into records and adds them. So the
 * main thread's work per record is nothing (it finds one separator per chunk, from the end), and
 * a chunk's bytes are never copied between threads.
 *
 * The cut: a chunk ends after the last separator it holds; the bytes after it (the start of a
 * record that straddles the boundary) are carried to the front of the next chunk. A record
 * longer than a chunk grows that chunk until it holds the record. The last chunk of a source
 * ends where the source ends. Each chunk therefore holds whole records only, and splitting the
 * chunks one by one gives the records of the whole source: the rules of `splitRecords` (a `\r`
 * before a `\n` is not part of the key, a trailing separator makes no empty record, an
 * unterminated last record counts, an empty line is an empty key), which are the command's too.
 *
 * Buffers: a chunk's buffer is in use until {@link TextChunks.release}; released buffers are
 * kept (across readers too) and reused, so with at most three chunks in flight per worker
 * (node/parallel-pool.ts `HANDED_DEPTH`) and one read ahead, `3 × workers + 2` buffers of
 * {@link TEXT_CHUNK} bytes are ever made (more only for records
 * longer than a chunk).
 */
import type { PackedKeys } from '../filters/filter.js';
import { WASM_BASE64 } from '../hash/separators-wasm.js';
import { lazyWasm, newMemory, type WasmMemory } from '../hash/wasm-loader.js';
import { recordBounds } from './record-bounds.js';

/**
 * Bytes read per chunk: large enough that a message per chunk costs nothing (about 30,000 URL
 * lines), small enough that the buffers stay few pages: memory touched for the first time costs
 * a page fault per 4 KiB (measured 10-15 ms of CPU per MiB on a busy virtual machine), so 4 MiB
 * chunks, 5 of them for 2 workers, cost more than the splitting they feed.
 */
export const TEXT_CHUNK = 1 << 20;

/**
 * Released chunk buffers, kept across readers (a program that builds in parallel again reuses
 * pages it already touched); at most {@link KEEP} of them.
 */
const spare: SharedArrayBuffer[] = [];
const KEEP = 16;

/** Whole records in a shared buffer: `buffer[start, start + length)`. */
export interface TextChunk {
  readonly buffer: SharedArrayBuffer;
  readonly start: number;
  readonly length: number;
  /** The byte that ends a record: `\n` (a `\r` before it is dropped) or 0. */
  readonly separator: number;
}

interface SeparatorExports {
  find(p: number, end: number, sep: number, out: number, max: number): number;
}

const SEPARATORS = /* @__PURE__ */ lazyWasm<SeparatorExports>(WASM_BASE64);

/** Where a chunk's copy starts in the splitter's memory (after the positions found). */
const BASE = 16384;
/** Positions one search call returns at most. */
const MAX_FOUND = BASE / 4;
const PAGE = 65536;

/**
 * A worker's splitter: the chunk is copied into a WebAssembly memory of its own (a `memcpy`),
 * where hash/wasm/separators.wat finds the separators 16 bytes per step (a call per line into
 * `indexOf` cost about as much as hashing the line); where WebAssembly is missing, `indexOf`.
 * The record bounds are kept in arrays reused from chunk to chunk. A batch it returns is valid
 * until the next {@link split}.
 */
export class TextSplitter {
  private memory: WasmMemory | null = null;
  private ex: SeparatorExports | null = null;
  private starts: Uint32Array = new Uint32Array(1 << 16);
  private ends: Uint32Array = new Uint32Array(1 << 16);

  /** `wasm: false` takes the `indexOf` search (for tests). */
  constructor(private readonly wasm = true) {}

  /** Room for `bytes` of text in the memory (false: no WebAssembly here). */
  private room(bytes: number): boolean {
    if (!this.wasm) return false;
    const pages = Math.ceil((BASE + bytes + 64) / PAGE);
    if (this.memory === null) {
      this.memory = newMemory(pages);
      this.ex = this.memory === null ? null : SEPARATORS(this.memory);
    } else if (this.memory.buffer.byteLength < pages * PAGE) {
      this.memory.grow(pages - this.memory.buffer.byteLength / PAGE);
    }
    return this.ex !== null;
  }

  /** Makes sure `count` records fit in the bound arrays (and the end after them). */
  private fit(count: number): void {
    if (count < this.ends.length) return;
    let size = this.ends.length;
    while (size <= count) size *= 2;
    const grow = (a: Uint32Array): Uint32Array => {
      const b = new Uint32Array(size + 1);
      b.set(a);
      return b;
    };
    this.starts = grow(this.starts);
    this.ends = grow(this.ends);
  }

  /** The records of `chunk` as packed keys (see the module comment for the rules). */
  split(chunk: TextChunk): Required<PackedKeys> {
    const sep = chunk.separator;
    const cr = sep === 0x0a;
    const n = chunk.length;
    const source = new Uint8Array(chunk.buffer, chunk.start, n);
    let text: Uint8Array = source;
    let count = 0;
    let s = 0;
    if (this.room(n)) {
      const buffer = this.memory!.buffer;
      text = new Uint8Array(buffer, BASE, n);
      text.set(source);
      const found = new Uint32Array(buffer, 0, MAX_FOUND);
      const find = this.ex!.find;
      for (;;) {
        const k = find(BASE + s, BASE + n, sep, 0, MAX_FOUND);
        this.fit(count + k + 1);
        s = recordBounds(found, k, BASE, text, s, count, this.starts, this.ends, cr);
        count += k;
        if (k < MAX_FOUND) break;
      }
    } else {
      for (let e = text.indexOf(sep, s); e >= 0; e = text.indexOf(sep, s)) {
        this.fit(count + 1);
        this.starts[count] = s;
        this.ends[count] = cr && e > s && text[e - 1] === 0x0d ? e - 1 : e;
        count++;
        s = e + 1;
      }
    }
    this.fit(count + 1);
    const { starts, ends } = this;
    if (s < n) {
      // The source's unterminated last record.
      starts[count] = s;
      ends[count] = cr && text[n - 1] === 0x0d ? n - 1 : n;
      count++;
      s = n;
    }
    starts[count] = Math.min(s, n);
    return { bytes: text, offsets: starts.subarray(0, count + 1), ends: ends.subarray(0, count) };
  }
}

/** Reads up to `into.length` bytes into `into`; resolves to 0 at the end. */
export type ReadInto = (into: Uint8Array) => Promise<number>;

/** Cuts what `read` gives into {@link TextChunk}s of whole records (see the module comment). */
export class TextChunks {
  private readonly free = spare;
  private carry: Uint8Array | null = null;
  private ended = false;

  constructor(
    private readonly read: ReadInto,
    private readonly separator: number,
    private readonly size: number = TEXT_CHUNK,
  ) {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`size must be a positive integer, got ${size}`);
    }
  }

  /** A buffer of at least `min` bytes: the one released last that fits (its pages are warm). */
  private take(min: number): SharedArrayBuffer {
    for (let i = this.free.length - 1; i >= 0; i--) {
      if (this.free[i]!.byteLength >= min) return this.free.splice(i, 1)[0]!;
    }
    return new SharedArrayBuffer(min);
  }

  /** Gives a chunk's buffer back for reuse (once its worker is done with it). */
  release(chunk: TextChunk): void {
    // The oldest goes when too many are kept: the one released now has warm pages.
    if (this.free.length >= KEEP) this.free.shift();
    this.free.push(chunk.buffer);
  }

  /** The next chunk of whole records, or null once the source is done. */
  async next(): Promise<TextChunk | null> {
    if (this.ended) return null;
    // A chunk reads at most `size` bytes (more only to hold a long record), whatever the buffer.
    const limit = Math.max(this.size, (this.carry?.length ?? 0) * 2);
    let buffer = this.take(limit);
    let view = new Uint8Array(buffer, 0, limit);
    let filled = 0;
    if (this.carry !== null) {
      view.set(this.carry);
      filled = this.carry.length;
      this.carry = null;
    }
    // Where the search for a separator starts: the bytes before it were searched already.
    let searched = 0;
    for (;;) {
      let eof = false;
      while (filled < view.length) {
        const n = await this.read(view.subarray(filled));
        if (n === 0) {
          eof = true;
          break;
        }
        filled += n;
      }
      if (eof) {
        this.ended = true;
        if (filled === 0) {
          this.release({ buffer, start: 0, length: 0, separator: this.separator });
          return null;
        }
        return { buffer, start: 0, length: filled, separator: this.separator };
      }
      const last = view.lastIndexOf(this.separator, filled - 1);
      if (last >= searched) {
        this.carry = view.slice(last + 1, filled);
        return { buffer, start: 0, length: last + 1, separator: this.separator };
      }
      // One record longer than the buffer: a buffer twice as large, holding what was read.
      searched = filled;
      const grown = new SharedArrayBuffer(view.length * 2);
      const grownView = new Uint8Array(grown);
      grownView.set(view.subarray(0, filled));
      this.release({ buffer, start: 0, length: 0, separator: this.separator });
      buffer = grown;
      view = grownView;
    }
  }
}
