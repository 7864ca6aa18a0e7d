/**
 * Packing keys back to back in one byte buffer, the input of every batch path: key i is
 * `bytes[offsets[i], offsets[i + 1])`, its funnel's bytes (hash/keys.ts).
 *
 * Strings take the fastest path that gives the same bytes as `encodeKeyInto` (measured on 1M
 * keys, Node 20, x64, a busy 2-core machine):
 * - a run of up to 256 strings is joined and encoded with one `TextEncoder.encodeInto`; when it
 *   wrote one byte per character, every string was ASCII and the offsets are the string lengths
 *   (43 ns per 30-character URL, against 105 ns for the next best);
 * - otherwise each string is encoded on its own: short ones with a `charCodeAt` loop, longer ones
 *   with `encodeInto` after `isWellFormed()` (190 ns per 111-character URL with 30% non-ASCII,
 *   against 640 ns for a `charCodeAt` UTF-8 encoder), and a string holding a lone surrogate with
 *   bloomkit's own encoder, which writes Java's `?` where `TextEncoder` would write U+FFFD.
 * A run that turns out not to be ASCII costs one wasted join; after such a run the next few go
 * straight to the per-string path, so a corpus of mixed keys pays that at most now and then.
 */

import { encodeKeyInto, type Funnel, type Key } from './keys.js';

const RUN = 256;
/** How many runs to encode string by string after a join found non-ASCII text. */
const BACKOFF = 8;
/** Strings up to this length are copied with a `charCodeAt` loop (no call into the encoder). */
const SHORT = 24;

const encoder: {
  encodeInto(s: string, out: Uint8Array): { read: number; written: number };
} | null = typeof TextEncoder === 'function' ? new TextEncoder() : null;

const wellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;

let skipJoins = 0;

/** Strings at least this long are encoded by `TextEncoder` on the per-key paths. */
export const ENCODER_MIN_LENGTH = 32;

/**
 * The per-key fast path for a long string of the 'string' funnel: its UTF-8 written at the start
 * of `view` by `TextEncoder.encodeInto` (faster than a `charCodeAt` loop from about 32
 * characters on, ASCII or not), or −1 when the string holds a lone surrogate (Java writes `?`,
 * `TextEncoder` U+FFFD: the caller encodes it itself), no encoder exists, or `view` has less
 * than the worst case (3 bytes per UTF-16 unit, plus 16).
 */
export function encodeLongString(s: string, view: Uint8Array): number {
  if (encoder === null || view.length < 3 * s.length + 16) return -1;
  if (wellFormed === undefined || !wellFormed.call(s)) return -1;
  return encoder.encodeInto(s, view).written;
}

/** Where the last {@link packInto} call stopped writing (the byte after the last key). */
export let packedEnd = 0;

/**
 * Encodes `keys[start, end)` with `funnel` into `out` from byte `at`, writing key i's start
 * (minus `base`) to `offsets[oi + i - start]` and the end of the last key packed after it. Stops
 * before a key whose worst-case size (3 bytes per UTF-16 unit for 'string', plus 16 spare bytes)
 * no longer fits. Returns the index after the last key packed ({@link packedEnd} is then the end
 * of its bytes). Throws `TypeError` / `RangeError` for a key of the wrong kind, as `add` does.
 */
export function packInto(
  funnel: Funnel,
  keys: ArrayLike<Key>,
  start: number,
  end: number,
  out: Uint8Array,
  at: number,
  offsets: Uint32Array,
  oi: number,
  base: number,
): number {
  let p = at;
  let i = start;
  const strings = funnel === 'string' && encoder !== null;
  while (i < end) {
    if (strings && Array.isArray(keys) && skipJoins === 0 && end - i >= 16) {
      const stop = Math.min(end, i + RUN);
      const done = joinRun(keys as readonly Key[], i, stop, out, p, offsets, oi + i - start, base);
      if (done) {
        p = packedEnd;
        i = stop;
        continue;
      }
      skipJoins = BACKOFF;
    } else if (skipJoins > 0) {
      skipJoins--;
    }
    const stop = Math.min(end, i + RUN);
    for (; i < stop; i++) {
      const key = keys[i]!;
      offsets[oi + i - start] = p - base;
      const len =
        strings && typeof key === 'string'
          ? encodeString(key, out, p)
          : encodeKeyInto(funnel, key, out, p);
      if (len < 0) {
        packedEnd = p;
        offsets[oi + i - start] = p - base;
        return i;
      }
      p += len;
    }
  }
  offsets[oi + i - start] = p - base;
  packedEnd = p;
  return i;
}

/**
 * Joins `keys[start, stop)` and encodes them at once; true (with the offsets written and
 * {@link packedEnd} set) if all were ASCII strings and fitted, else false (bytes written are junk).
 */
function joinRun(
  keys: readonly Key[],
  start: number,
  stop: number,
  out: Uint8Array,
  at: number,
  offsets: Uint32Array,
  oi: number,
  base: number,
): boolean {
  let total = 0;
  for (let i = start; i < stop; i++) {
    const key = keys[i];
    if (typeof key !== 'string') return false;
    total += key.length;
  }
  if (at + total + 16 > out.length) return false;
  const joined = keys.slice(start, stop).join('');
  const r = encoder!.encodeInto(joined, out.subarray(at, at + total));
  if (r.read !== joined.length || r.written !== total) return false;
  let p = at - base;
  for (let i = start; i < stop; i++) {
    offsets[oi + i - start] = p;
    p += (keys[i] as string).length;
  }
  packedEnd = at + total;
  return true;
}

/** UTF-8 of `s` (Java's `?` for a lone surrogate) at `p`, or minus the room it needs. */
function encodeString(s: string, out: Uint8Array, p: number): number {
  const n = s.length;
  if (p + 3 * n + 16 > out.length) return -3 * n;
  if (n <= SHORT) {
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      out[p + i] = c;
    }
    if (i === n) return n;
  }
  if (wellFormed?.call(s)) {
    return encoder!.encodeInto(s, out.subarray(p)).written;
  }
  return encodeKeyInto('string', s, out, p);
}

/**
 * Packs `keys` into a new buffer: `{ bytes, offsets }` with `offsets.length === keys.length + 1`.
 * The same bytes as encoding each key with its funnel (hash/keys.ts).
 */
export function packAll(
  funnel: Funnel,
  keys: ArrayLike<Key>,
): { bytes: Uint8Array; offsets: Uint32Array } {
  const n = keys.length;
  const offsets = new Uint32Array(n + 1);
  let size = 64;
  for (let i = 0; i < n; i++) {
    const key = keys[i];
    size += typeof key === 'string' ? key.length + 1 : key instanceof Uint8Array ? key.length : 8;
  }
  let bytes = new Uint8Array(size);
  let i = 0;
  let p = 0;
  while (true) {
    i = packInto(funnel, keys, i, n, bytes, p, offsets, i, 0);
    p = packedEnd;
    if (i === n) break;
    const key = keys[i];
    const need =
      typeof key === 'string' ? 3 * key.length : key instanceof Uint8Array ? key.length : 8;
    const next = new Uint8Array(Math.max(bytes.length * 2, p + need + 64));
    next.set(bytes.subarray(0, p));
    bytes = next;
  }
  return { bytes: bytes.subarray(0, p), offsets };
}
