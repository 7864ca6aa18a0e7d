/**
 * CRC-32C of large inputs in WebAssembly (hash/wasm/crc32c.wat): the same values as
 * `crc32cOf` (crc32c.ts, the JavaScript slicing-by-8 loop, which test/crc32c.test.ts holds it
 * to, and both to Java's `java.util.zip.CRC32C`). What bloomkit/node's `load` and `save` checksum
 * files with.
 *
 * Why a second loop: the JavaScript loop runs interpreted until V8 optimises it, so the first
 * checksum of a process is slow; the command checks a filter file once per run, and a 2.4 MB file
 * cost about 12 ms of JavaScript there against about 5 ms here (the WebAssembly loop runs compiled
 * from its first byte). Inputs are copied into the module's memory 64 KiB at a time. The browser
 * core keeps the JavaScript loop alone (this module is not in its bundles). Inputs shorter than
 * {@link BULK_FROM} bytes, and hosts without WebAssembly, get the JavaScript loop.
 */

import { WASM_BASE64 } from '../hash/crc32c-wasm.js';
import { lazyWasm, newMemory } from '../hash/wasm-loader.js';
import { crc32cOf } from './crc32c.js';

/** The WebAssembly loop's exports (hash/wasm/crc32c.wat). */
interface CrcExports {
  /** Writes the 8 tables of 256 u32 to memory [0, 8192). */
  init(): void;
  /** The CRC `crc` continued over memory [p, p + len). */
  crc(p: number, len: number, crc: number): number;
}

interface WasmLoop {
  readonly exports: CrcExports;
  /** The module's memory as bytes (it never grows, so this view stays valid). */
  readonly bytes: Uint8Array;
}

/** Inputs from this many bytes go to WebAssembly (a header is not worth a copy). */
export const BULK_FROM = 4096;
/** Where the input is copied, and how much at a time: the memory's second page. */
const CHUNK_AT = 65536;
const CHUNK = 65536;

const instantiate = lazyWasm<CrcExports>(WASM_BASE64);
/** undefined: not tried yet; null: no WebAssembly here. */
let loop: WasmLoop | null | undefined;

function wasmLoop(): WasmLoop | null {
  if (loop === undefined) {
    const memory = newMemory(2);
    const exports = memory === null ? null : instantiate(memory);
    if (memory === null || exports === null) {
      loop = null;
    } else {
      exports.init();
      loop = { exports, bytes: new Uint8Array(memory.buffer) };
    }
  }
  return loop;
}

/**
 * CRC-32C of `bytes` continuing from `crc` (0 to start), as `crc32cOf` computes it; arguments
 * unchecked (the format's own readers and writers call it).
 */
export function crc32cBulk(bytes: Uint8Array, crc = 0): number {
  const w = bytes.length >= BULK_FROM ? wasmLoop() : null;
  if (w === null) return crc32cOf(bytes, crc);
  let c = crc;
  for (let p = 0; p < bytes.length; p += CHUNK) {
    const chunk = bytes.subarray(p, Math.min(bytes.length, p + CHUNK));
    w.bytes.set(chunk, CHUNK_AT);
    c = w.exports.crc(CHUNK_AT, chunk.length, c) >>> 0;
  }
  return c;
}
