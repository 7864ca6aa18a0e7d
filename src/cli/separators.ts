/**
 * The record reader's input buffer and its separator search. Where WebAssembly runs, the buffer
 * lives in a WebAssembly memory and hash/wasm/separators.wat finds the separators 16 bytes per
 * step (SIMD), a few thousand per call: JavaScript's `indexOf` per line, a call into C++ each,
 * cost about as much as hashing the line. Elsewhere the buffer is a plain `Buffer` and the
 * search is `indexOf`. Both give the same positions.
 *
 * Memory layout: [0, 16 KiB) the positions found by the last call (u32); the input buffer from
 * 16 KiB on; 64 spare bytes after it, which the search may read (16-byte loads) and ignores.
 */
import { WASM_BASE64 } from '../hash/separators-wasm.js';
import { lazyWasm, newMemory, type WasmMemory } from '../hash/wasm-loader.js';

interface SeparatorExports {
  find(p: number, end: number, sep: number, out: number, max: number): number;
}

const SEPARATORS_MODULE = /* @__PURE__ */ lazyWasm<SeparatorExports>(WASM_BASE64);

/** Where the input buffer starts in the memory (after the positions). */
const BASE = 16384;
/** What {@link SeparatorBuffer.found} adds to each offset (the buffer's address in the memory). */
export const SEPARATOR_BASE = BASE;
/** Positions one search call returns at most. */
export const MAX_FOUND = BASE / 4;
const SPARE = 64;
const PAGE = 65536;

export class SeparatorBuffer {
  /** The input buffer (replaced by {@link grow}). */
  buf: Buffer;
  private memory: WasmMemory | null;
  /** The search, compiled at the first {@link scan} (undefined until then; null: none here). */
  private ex: SeparatorExports | null | undefined;
  /** The positions of the last {@link scan}: buffer offsets plus {@link SEPARATOR_BASE}. */
  found = new Uint32Array(MAX_FOUND);

  /** A buffer of `size` bytes; `wasm: false` takes the `indexOf` search (for tests). */
  constructor(size: number, wasm = true) {
    this.memory = wasm ? newMemory(Math.ceil((BASE + size + SPARE) / PAGE)) : null;
    // The module is compiled when there is something to search, not here: compiling it costs
    // about 3.5 ms of a run's start, which a run on empty input never needs.
    this.ex = this.memory === null ? null : undefined;
    this.buf = this.memory === null ? Buffer.allocUnsafe(size) : this.view(size);
  }

  private view(size: number): Buffer {
    const buffer = this.memory!.buffer;
    this.found = new Uint32Array(buffer, 0, MAX_FOUND);
    return Buffer.from(buffer, BASE, size);
  }

  /**
   * Doubles the buffer, keeping its first `len` bytes. Past what a WebAssembly memory can hold
   * (4 GiB, for a record of gigabytes), the buffer moves to plain memory and `indexOf`.
   */
  grow(len: number): void {
    const size = this.buf.length * 2;
    if (this.memory !== null) {
      // The memory grows in place: the bytes stay where they are, only the views are new.
      const need = Math.ceil((BASE + size + SPARE) / PAGE) - this.memory.buffer.byteLength / PAGE;
      try {
        if (need > 0) this.memory.grow(need);
        this.buf = this.view(size);
        return;
      } catch {
        this.memory = null;
        this.ex = null;
        this.found = new Uint32Array(MAX_FOUND);
      }
    }
    const bigger = Buffer.allocUnsafe(size);
    this.buf.copy(bigger, 0, 0, len);
    this.buf = bigger;
  }

  /**
   * Finds the `sep` bytes in `buf[s, end)` from the first on, at most {@link MAX_FOUND} of them:
   * their offsets (plus {@link SEPARATOR_BASE}) are in {@link found}[0, n), in order. Returns n;
   * less than {@link MAX_FOUND} means none are left in the range, else the caller goes on from
   * the byte after the last one found.
   */
  scan(s: number, end: number, sep: number): number {
    // Without the module (no WebAssembly here), `indexOf` searches the same bytes in place.
    if (this.ex === undefined) this.ex = SEPARATORS_MODULE(this.memory!);
    if (this.ex !== null) return this.ex.find(BASE + s, BASE + end, sep, 0, MAX_FOUND);
    const { buf, found } = this;
    let n = 0;
    while (n < MAX_FOUND) {
      const e = buf.indexOf(sep, s);
      if (e < 0 || e >= end) break;
      found[n++] = BASE + e;
      s = e + 1;
    }
    return n;
  }
}

/**
 * Copies `src[s, e)` to `dst` at `at`: a byte loop for short runs (no view to make), else
 * Buffer's copy (a memmove). `TypedArray.set` from or into a view of the input buffer, which lives
 * in a WebAssembly memory, took a slow path in the command (89 ms against 2 ms for a dedup's
 * output of 6M lines).
 */
export function copyBytes(
  src: Uint8Array,
  s: number,
  e: number,
  dst: Uint8Array,
  at: number,
): void {
  if (e - s <= 32) {
    for (let i = s; i < e; i++) dst[at++] = src[i]!;
  } else if (Buffer.isBuffer(src)) src.copy(dst, at, s, e);
  else dst.set(src.subarray(s, e), at);
}
