/**
 * Many JavaScript strings to their 'string' funnel bytes (UTF-8, Java's `?` for a lone
 * surrogate: hash/keys.ts) with two calls, where Node's `Buffer` is present: the strings are
 * concatenated and copied as UTF-16 code units into WebAssembly memory (`Buffer#ucs2Write`, which
 * flattens the concatenation once and copies it), and a WebAssembly SIMD transcoder
 * (hash/wasm/utf16.wat) writes each key's UTF-8 and its end. A filter kernel's memory takes the
 * units at the end of its key area and the bytes where its hash reads them
 * ({@link stageInPlace}); other targets get them from a small stage memory, copied. Key by key,
 * each `Buffer#utf8Write` or `TextEncoder.encodeInto` is a call into the engine's C++ costing
 * some 40 to 60 ns before a byte is written (Node 20), and its UTF-8 writer goes character by
 * character. Concatenating measured faster than `slice` + `join` (82.6 against 98.7 ns a URL
 * with the copy and the transcoder, bench/strings-encode.ts).
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
import { lazyWasm, newMemory, type WasmMemory } from './wasm-loader.js';

/** The transcoder (wasm/utf16.wat): `count` keys' units from `src`, their ends at `offs`. */
type Utf8 = (src: number, offs: number, count: number) => number;

interface Utf16Exports {
  utf8: Utf8;
}

const instantiate = lazyWasm<Utf16Exports>(WASM_BASE64);

/** Keys a stage run holds at most (their ends: u32 from address 0). */
const STAGE_KEYS = 1024;
/** Where the UTF-8 bytes of a run start (after the ends). */
const OUT = 8192;
/** The stage memory: two 64 KiB pages. */
const STAGE_BYTES = 131072;
/**
 * UTF-16 units a run holds at most: its UTF-8 (at most 3 bytes a unit) from {@link OUT}, then 16
 * bytes, then the units (2 bytes each) that the transcoder reads up to 32 bytes past:
 * `OUT + 3 * units + 33 + 32 <= STAGE_BYTES`.
 */
const STAGE_UNITS = 40_000;
/** Runs of fewer keys are left to the key-by-key path (two calls cost more than they save). */
const MIN_KEYS = 4;

interface Stage {
  bytes: NodeBuffer;
  ends: Uint32Array;
  utf8: Utf8;
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
  const wasm = memory === null ? null : instantiate(memory);
  if (memory === null || wasm === null) return null;
  made = {
    bytes: NodeBufferClass.from(memory.buffer, 0, STAGE_BYTES),
    ends: new Uint32Array(memory.buffer, 0, STAGE_KEYS + 1),
    utf8: wasm.utf8,
  };
  return made;
}

/**
 * Memories whose runs are transcoded where their keys go (see {@link stageInPlace}), by their
 * buffer: the memory until a run first needs it, then the transcoder over it (null: none here).
 */
const inPlace = new WeakMap<ArrayBuffer, WasmMemory | Utf8 | null>();

/**
 * Lets {@link packRun} transcode runs straight into `memory` (a filter kernel's, which never
 * grows) when it packs into a view of it from address 0 with the offsets in the same memory:
 * the units are copied after the run's worst case, the transcoder writes the keys' bytes in
 * their place and their ends as the offsets, so nothing is copied again (no stage memory, no
 * offsets loop). The transcoder is instantiated over `memory` on the first such run.
 */
export function stageInPlace(memory: WasmMemory): void {
  inPlace.set(memory.buffer, memory);
}

/** The transcoder over `buffer`'s memory, when {@link stageInPlace} allowed it, else null. */
function inPlaceUtf8(buffer: ArrayBufferLike): Utf8 | null {
  const v = inPlace.get(buffer as ArrayBuffer);
  if (v === undefined || v === null || typeof v === 'function') return v ?? null;
  const utf8 = instantiate(v)?.utf8 ?? null;
  inPlace.set(buffer as ArrayBuffer, utf8);
  return utf8;
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
  if (out.byteOffset === 0 && offsets.buffer === out.buffer) {
    const utf8 = inPlaceUtf8(out.buffer);
    if (utf8 !== null) return runInPlace(keys, i, stop, out as NodeBuffer, offsets, o, p, utf8);
  }
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
  // The units sit after the run's worst-case output and 32 bytes (see hash/wasm/utf16.wat).
  const src = (OUT + units + 33) & ~1;
  let joined = keys[i] as string;
  for (let k = 1; k < j; k++) joined += keys[i + k] as string;
  s.bytes.ucs2Write(joined, src);
  ends[0] = OUT;
  j = s.utf8(src, 0, j);
  if (j === 0) return 0;
  let end = ends[j]!;
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

/** Below this many units of room, an in-place run ends the chunk instead (see {@link runInPlace}). */
const MIN_ROOM = 4096;
/**
 * The last in-place run's bytes per unit less 1, at most 1 (1 when it stopped early): a bound on
 * the share of 3-byte units to leave room for. A 3-byte unit brings the output 1 byte nearer the
 * units not yet read (2 bytes a unit are read), so {@link runInPlace} leaves that many bytes more
 * between them; ASCII and 2-byte text need none.
 */
let excess = 0.25;

/**
 * {@link packRun} in the keys' own memory (see {@link stageInPlace}): the run's units go at the
 * end of `out` (32 bytes before it), the transcoder writes the keys' bytes from `p` on, into the
 * units it has read as it goes, and their ends into `offsets` themselves. A run takes as many
 * keys as have 2 + {@link excess} bytes a unit of room after `p`, the first key's length and 64
 * bytes; the transcoder stops before a key whose bytes could reach units not yet read
 * (hash/wasm/utf16.wat), and the keys after it are left to the next run. Returns the keys
 * packed, 0 as {@link packRun}, or -1 when fewer than {@link MIN_ROOM} units fit after `p` (the
 * chunk is full enough: the caller ends it).
 */
function runInPlace(
  keys: readonly unknown[],
  i: number,
  stop: number,
  out: NodeBuffer,
  offsets: Uint32Array,
  o: number,
  p: number,
  utf8: Utf8,
): number {
  const first = keys[i];
  const firstLength = typeof first === 'string' ? first.length : 0;
  const room = Math.floor((out.length - 64 - p - firstLength) / (2 + excess));
  if (room < MIN_ROOM && o > 0) return -1;
  const most = stop - i;
  // The same measuring and joining loops as packRun's, written out in each: as two shared helper
  // functions both paths measured 3 to 7% slower (bench/strings.ts, same process, two runs).
  let units = 0;
  let j = 0;
  for (; j < most; j++) {
    const key = keys[i + j];
    if (typeof key !== 'string' || units + key.length > room) break;
    units += key.length;
    offsets[o + j + 1] = units;
  }
  if (j === 0 || (j < MIN_KEYS && j < most)) return 0;
  const src = (out.length - 32 - 2 * units) & ~1;
  let joined = first as string;
  for (let k = 1; k < j; k++) joined += keys[i + k] as string;
  out.ucs2Write(joined, src);
  offsets[o] = p;
  const done = utf8(src, offsets.byteOffset + 4 * o, j);
  excess = done < j ? 1 : Math.min(1, Math.max(0, (offsets[o + j]! - p) / units - 1));
  return done;
}
