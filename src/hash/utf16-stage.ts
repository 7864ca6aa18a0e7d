/**
 * Many JavaScript strings to their 'string' funnel bytes (UTF-8, Java's `?` for a lone
 * surrogate: hash/keys.ts) with two calls, where Node's `Buffer` is present: the strings are
 * joined and copied as UTF-16 code units into a small WebAssembly memory (`Buffer#ucs2Write`, a
 * straight copy), and a WebAssembly SIMD transcoder (hash/wasm/utf16.wat) writes each key's UTF-8
 * and its end. Key by key, each `Buffer#utf8Write` or `TextEncoder.encodeInto` is a call into the
 * engine's C++ costing some 40 to 60 ns before a byte is written (Node 20), and its UTF-8 writer
 * goes character by character.
 *
 * Measured (bench/strings-encode.ts, CPU time, Node 20, chunks of up to 1,024 keys): real-looking
 * URLs (20 to 200 characters, 30% non-ASCII) 82 to 108 ns a key against 123 to 139 for the
 * key-by-key packer; 26 to 32-character ASCII keys 36 against 87 ns. The join is most of what
 * remains (50 to 65 ns a URL).
 *
 * Hosts without `Buffer#ucs2Write` (browsers) or WebAssembly get null from {@link stage} and
 * encode key by key (hash/pack.ts). The memory and module are made on first use, never at import.
 */

import { type NodeBuffer, NodeBufferClass } from './node-buffer.js';
import { WASM_BASE64 } from './utf16-wasm.js';
import { lazyWasm, newMemory } from './wasm-loader.js';

interface Utf16Exports {
  utf8(src: number, offs: number, count: number): number;
}

/** Keys a stage run holds at most (their ends: u32 from address 0). */
const STAGE_KEYS = 1024;
/** Where the UTF-8 bytes of a run start (after the ends). */
const OUT = 8192;
/** The stage memory: two 64 KiB pages. */
const STAGE_BYTES = 131072;
/**
 * UTF-16 units a run holds at most: its UTF-8 (at most 3 bytes a unit) from {@link OUT}, then 16
 * bytes, then the units (2 bytes each) that the transcoder reads up to 32 bytes past:
 * `OUT + 3 * units + 17 + 32 <= STAGE_BYTES`.
 */
const STAGE_UNITS = 40_000;
/** Runs of fewer keys are left to the key-by-key path (two calls cost more than they save). */
const MIN_KEYS = 4;

interface Stage {
  bytes: NodeBuffer;
  ends: Uint32Array;
  utf8: (src: number, offs: number, count: number) => number;
}

/** undefined: not made yet; null: this host has no `Buffer` or no WebAssembly. */
let made: Stage | null | undefined;
let enabled = true;

/** Test hook: whether {@link packRun} may run (it returns 0 when not). */
export function useStage(on: boolean): void {
  enabled = on;
}

/**
 * Above this much JavaScript heap in use, runs are left to the key-by-key path. A run's joined
 * string is young garbage (about 2 bytes a character), and each young-generation collection it
 * brings costs in proportion to the whole heap: measured with 10M URL keys held (a 3.1 GB heap),
 * collections of 16 MB of garbage took 13 ms each, and `addMany` of the blocked filter cost 423
 * to 466 ns a key in runs against 241 to 349 key by key (no garbage); with a 1.5 GB heap both
 * took 207 to 213 ns; at 1M keys (about 0.3 GB) runs win by some 40 ns a key.
 */
const HEAP_LIMIT = 2 ** 30;
/**
 * Node's `process.memoryUsage`, read every {@link HEAP_EVERY} calls of {@link hasStage} (it costs
 * microseconds; callers ask once per chunk of keys, not per key).
 */
const memoryUsage = (globalThis as { process?: { memoryUsage?: () => { heapUsed: number } } })
  .process?.memoryUsage;
const HEAP_EVERY = 256;
let heapCalls = 0;
let heapSmall = true;

/** Whether the heap is small enough for runs (see {@link HEAP_LIMIT}), sampled now and then. */
function smallHeap(): boolean {
  if (memoryUsage !== undefined && heapCalls++ % HEAP_EVERY === 0) {
    heapSmall = memoryUsage().heapUsed < HEAP_LIMIT;
  }
  return heapSmall;
}

/**
 * Whether {@link packRun} runs here (Node's `Buffer` and WebAssembly, not turned off, and a heap
 * under {@link HEAP_LIMIT}).
 */
export function hasStage(): boolean {
  return enabled && smallHeap() && stage() !== null;
}

function stage(): Stage | null {
  if (made !== undefined) return made;
  made = null;
  if (typeof NodeBufferClass?.prototype?.ucs2Write !== 'function') return null;
  const memory = newMemory(STAGE_BYTES / 65536);
  const wasm = memory === null ? null : lazyWasm<Utf16Exports>(WASM_BASE64)(memory);
  if (memory === null || wasm === null) return null;
  made = {
    bytes: NodeBufferClass.from(memory.buffer, 0, STAGE_BYTES),
    ends: new Uint32Array(memory.buffer, 0, STAGE_KEYS + 1),
    utf8: wasm.utf8,
  };
  return made;
}

/**
 * Packs strings `keys[i, stop)` from `out[p]` on: as many as the stage holds, stopping before a
 * key that is not a string, and of those the ones whose bytes end by `limit` (the run assumes one
 * byte a unit, transcodes, then keeps the keys that fit: the worst case, 3 bytes a unit, would
 * leave two thirds of a kernel's key area unused). Writes `offsets[o]` = p and key `i + j`'s end
 * to `offsets[o + j + 1]`, and returns how many were packed. Returns 0, writing nothing, when
 * fewer than {@link MIN_KEYS} would be transcoded (and not all of `[i, stop)`), none fits, or this
 * host has no stage: the caller then goes key by key. The bytes are those of hash/keys.ts's
 * 'string' funnel (test/pack-strings.test.ts holds them to Java's rule).
 */
export function packRun(
  keys: readonly unknown[],
  i: number,
  stop: number,
  out: Uint8Array,
  offsets: Uint32Array,
  o: number,
  p: number,
  limit: number,
): number {
  const s = enabled ? stage() : null;
  if (s === null) return 0;
  const ends = s.ends;
  const most = Math.min(stop - i, STAGE_KEYS);
  const room = Math.min(STAGE_UNITS, limit - p);
  let units = 0;
  let j = 0;
  for (; j < most; j++) {
    const key = keys[i + j];
    if (typeof key !== 'string' || units + key.length > room) break;
    units += key.length;
    ends[j + 1] = units;
  }
  if (j === 0 || (j < MIN_KEYS && j < stop - i)) return 0;
  // The units sit after the run's worst-case output and 16 bytes (see hash/wasm/utf16.wat).
  const src = (OUT + units + 17) & ~1;
  s.bytes.ucs2Write(j === 1 ? (keys[i] as string) : keys.slice(i, i + j).join(''), src);
  ends[0] = OUT;
  let end = s.utf8(src, 0, j);
  const last = OUT + limit - p;
  if (end > last) {
    // Keep the keys that end by `limit`: the last end <= last (ends rise), by bisection.
    let lo = 0;
    let hi = j;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ends[mid]! <= last) lo = mid;
      else hi = mid - 1;
    }
    if (lo === 0) return 0;
    j = lo;
    end = ends[j]!;
  }
  out.set(s.bytes.subarray(OUT, end), p);
  const shift = p - OUT;
  offsets[o] = p;
  for (let k = 1; k <= j; k++) offsets[o + k] = ends[k]! + shift;
  return j;
}
