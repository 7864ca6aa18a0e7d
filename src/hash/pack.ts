/**
 * Packing keys back to back in one byte buffer, the input of every batch path: key i is
 * `bytes[offsets[i], offsets[i + 1])`, its funnel's bytes (hash/keys.ts).
 *
 * Strings ('string' funnel: UTF-8, Java's `?` for a lone surrogate) take the fastest exact
 * encoder the host has. Where Node's `Buffer` is, {@link packStringsInto} packs runs of keys with
 * two calls (hash/utf16-stage.ts: concatenated, copied as UTF-16, transcoded by WebAssembly; 86
 * against 130 ns a URL key by key on a quiet machine, 101 against 135 on a busy one, into memory
 * that is not a kernel's). Single keys ({@link writeString}):
 * - Node (and hosts with Node's `Buffer`): `Buffer#utf8Write` straight into the target memory,
 *   with no view made per key. When it wrote one byte per character the string was ASCII (so it
 *   held no surrogate); otherwise `isWellFormed()` says whether its bytes are exact, and a string
 *   holding a lone surrogate is encoded again by bloomkit's own encoder, which writes Java's `?`
 *   where `Buffer` and `TextEncoder` write U+FFFD (EF BF BD).
 * - elsewhere (browsers): `TextEncoder.encodeInto` after `isWellFormed()`, with the same rule.
 *
 * Measured on 110-character URLs (30% non-ASCII), CPU time, Node 20: `TextEncoder.encodeInto`
 * into a fixed view 86 ns, `Buffer#utf8Write` at a moving offset 100 to 103 ns, the packer 126 ns
 * (with the lone-surrogate check). Joined runs encoded to UTF-8 in one call (kept when every
 * string was ASCII) remain only in {@link packAll} where there is no stage (browsers): one
 * non-ASCII string spoils a run, and on 110-character ASCII URLs string by string measured faster
 * (90 against 140 ns, wall time, busy machine); short ASCII keys gain (43 against about 60 ns per
 * 30-character key when joined).
 *
 * {@link packStringsInto} is the chunked string packer every batch path over JavaScript strings
 * calls (the filters' `addMany` / `hasMany` encode straight into their kernels' memory with it).
 */

import { encodeKeyInto, type Funnel, type Key } from './keys.js';
import { type NodeBuffer, NodeBufferClass } from './node-buffer.js';
import { hasStage, packRun, useStage } from './utf16-stage.js';

const encoder: {
  encodeInto(s: string, out: Uint8Array): { read: number; written: number };
} | null = typeof TextEncoder === 'function' ? new TextEncoder() : null;

/** Node's `Buffer#utf8Write` (any Uint8Array as `this`), or null outside Node. */
type Utf8Write = (this: Uint8Array, s: string, offset: number) => number;
const nodeUtf8Write: Utf8Write | null =
  typeof NodeBufferClass?.prototype?.utf8Write === 'function'
    ? (NodeBufferClass.prototype.utf8Write as Utf8Write)
    : null;
let utf8Write = nodeUtf8Write;

const wellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;

/**
 * Test hook: encode strings with Node's `Buffer` where present (`'buffer'`, the default: runs of
 * keys through hash/utf16-stage.ts, single keys with `Buffer#utf8Write`), with `Buffer#utf8Write`
 * key by key only (`'utf8-write'`), or as a browser does (`'text-encoder'`). Returns whether
 * `Buffer` is present.
 */
export function useStringEncoder(mode: 'buffer' | 'utf8-write' | 'text-encoder'): boolean {
  utf8Write = mode === 'text-encoder' ? null : nodeUtf8Write;
  useStage(mode === 'buffer');
  return nodeUtf8Write !== null;
}

/**
 * A view of `length` bytes of `buffer` from `offset` for {@link packStringsInto} to write into:
 * a Node `Buffer` where there is one (its `utf8Write` method is called directly, measured about
 * 10% faster per key than through `.call` on a plain view), else a Uint8Array.
 */
export function stringTarget(buffer: ArrayBuffer, offset: number, length: number): Uint8Array {
  return nodeUtf8Write !== null
    ? NodeBufferClass!.from(buffer, offset, length)
    : new Uint8Array(buffer, offset, length);
}

/**
 * Writes the 'string' funnel bytes of `s` (UTF-8; Java's `?` for a lone surrogate) at `out[p]`
 * and returns their length. The caller made sure of the room: `p + 3 * s.length + 16 <=
 * out.length` (3 bytes per UTF-16 unit is the worst case).
 */
export function writeString(s: string, out: Uint8Array, p: number): number {
  const n = s.length;
  if (utf8Write !== null) {
    const written =
      (out as NodeBuffer).utf8Write !== undefined
        ? (out as NodeBuffer).utf8Write(s, p)
        : utf8Write.call(out, s, p);
    // One byte per character: ASCII, so no surrogate. Else exact unless a surrogate is lone.
    if (written === n || wellFormed?.call(s)) return written;
  } else if (encoder !== null && wellFormed?.call(s)) {
    return encoder.encodeInto(s, out.subarray(p)).written;
  }
  return encodeKeyInto('string', s, out, p);
}

/**
 * Strings at least this long are encoded by the engine on the per-key paths (shorter ones by a
 * `charCodeAt` loop while they stay ASCII, cheaper than a call into the engine).
 */
export const ENCODER_MIN_LENGTH = 25;
/** The packer copies strings up to this length with a `charCodeAt` loop while they stay ASCII. */
const SHORT = 40;

/**
 * The per-key fast path for a long string of the 'string' funnel: its bytes written at the start
 * of `view`, or −1 when `view` has less than the worst case (3 bytes per UTF-16 unit, plus 16)
 * or there is no `TextEncoder`: the caller then grows its memory and encodes it itself. `TextEncoder.encodeInto` into the
 * caller's fixed view is the fastest encoder when the place does not move (measured 98 ns per
 * 110-character URL against 110 to 129 for `Buffer#utf8Write`); the lone-surrogate rule is that
 * of {@link writeString}.
 */
export function encodeLongString(s: string, view: Uint8Array): number {
  const n = s.length;
  if (view.length < 3 * n + 16) return -1;
  if (encoder === null) return -1;
  const r = encoder.encodeInto(s, view);
  if (r.written === n || wellFormed?.call(s)) return r.written;
  return encodeKeyInto('string', s, view, 0);
}

/**
 * Packs strings `keys[start, end)` ('string' funnel bytes, see {@link writeString}) back to back
 * into `out` from byte `at`: key `start + j` is `out[offsets[j], offsets[j + 1])`. Stops before
 * the first key that is not a string, that no longer fits `out` with 16 spare bytes after it,
 * or that `offsets` has no room for (it holds `count + 1` entries). Where Node's `Buffer` is,
 * runs of keys go through hash/utf16-stage.ts (concatenated, copied as UTF-16, transcoded by
 * WebAssembly: two calls a run) and a key fits when its bytes do; key by key, a key fits when its
 * worst case does (3 bytes per UTF-16 unit). Into a kernel's memory (`stageInPlace`), it also
 * stops once a run would have under 4,096 units of room. Returns `count`, the keys packed (0 when
 * key `start` is not a string or alone does not fit: the caller then takes its per-key path,
 * which encodes a huge key or throws the key's `TypeError`). Allocates only the joined strings.
 */
export function packStringsInto(
  keys: ArrayLike<unknown>,
  start: number,
  end: number,
  out: Uint8Array,
  offsets: Uint32Array,
  at = 0,
): number {
  const stop = Math.min(end, start + offsets.length - 1);
  let p = at;
  let i = start;
  const limit = out.length - 16;
  const runs = utf8Write !== null && Array.isArray(keys) && hasStage();
  for (; i < stop; i++) {
    if (runs) {
      // Many keys with two calls (hash/utf16-stage.ts), else key i alone below.
      const count = packRun(keys, i, stop, out, offsets, i - start, p, limit);
      if (count < 0) break;
      if (count > 0) {
        i += count - 1;
        p = offsets[i + 1 - start]!;
        continue;
      }
    }
    const key = keys[i];
    if (typeof key !== 'string' || p + 3 * key.length > limit) {
      offsets[i - start] = p;
      return i - start;
    }
    offsets[i - start] = p;
    const n = key.length;
    if (n <= SHORT) {
      // Short keys: a charCodeAt loop while they stay ASCII costs less than a call to the engine.
      let j = 0;
      for (; j < n; j++) {
        const c = key.charCodeAt(j);
        if (c >= 0x80) break;
        out[p + j] = c;
      }
      if (j === n) {
        p += n;
        continue;
      }
    }
    p += writeString(key, out, p);
  }
  offsets[i - start] = p;
  return i - start;
}

/** Keys per joined run of {@link packAll}. */
const RUN = 256;
/** Runs {@link packAll} packs string by string after a joined run turned out not to be ASCII. */
const BACKOFF = 8;
let skipJoins = 0;

/**
 * {@link packAll}'s fast path for runs of short ASCII strings (the join is not in the filters'
 * batch paths, to keep their bundles small): joins `keys[start, stop)` and encodes them with one
 * call; when every string was ASCII (one byte per character) and fitted, writes their offsets
 * (key i's at `offsets[i]`, and `offsets[stop]`) and returns their byte total. Returns −1 for a
 * run with non-ASCII text (junk may have been written at `at`), −2 for a run not tried: fewer
 * than 16 keys, a key that is not a string, over 48 characters a key on average (the join copies
 * every character once more, which long keys do not repay), or too little room. Measured on
 * 30-character ASCII keys: 43 ns per key, against about 60 one by one.
 */
function joinRun(
  keys: ArrayLike<Key>,
  start: number,
  stop: number,
  out: Uint8Array,
  at: number,
  offsets: Uint32Array,
): number {
  if (stop - start < 16 || encoder === null || !Array.isArray(keys)) return -2;
  let total = 0;
  for (let i = start; i < stop; i++) {
    const key = keys[i];
    if (typeof key !== 'string') return -2;
    total += key.length;
  }
  if (total > 48 * (stop - start) || at + 3 * total + 16 > out.length) return -2;
  const joined = (keys as string[]).slice(start, stop).join('');
  const written =
    utf8Write !== null
      ? utf8Write.call(out, joined, at)
      : encoder.encodeInto(joined, out.subarray(at)).written;
  if (written !== total) return -1;
  let p = at;
  for (let i = start; i < stop; i++) {
    offsets[i] = p;
    p += (keys[i] as string).length;
  }
  offsets[stop] = p;
  return total;
}

/** Where packed keys go: reused when big enough (see {@link packAll}). */
export interface PackTarget {
  bytes?: Uint8Array;
  offsets?: Uint32Array;
}

/**
 * A guess of the bytes `keys` pack to: characters times the UTF-8 ratio of the first keys. The
 * characters are counted over the first `scan` keys and scaled to all of them (every key's
 * length is a memory access per key, which a big reused buffer need not pay for).
 */
function guessBytes(funnel: Funnel, keys: ArrayLike<Key>, scan = keys.length): number {
  const n = keys.length;
  let chars = 0;
  for (let i = 0; i < scan; i++) {
    const key = keys[i];
    chars += typeof key === 'string' ? key.length : key instanceof Uint8Array ? key.length : 8;
  }
  if (scan < n) chars = Math.ceil((chars * n) / scan);
  if (funnel === 'utf16') return 2 * chars + 64;
  if (funnel !== 'string' || n === 0) return chars + 64;
  // UTF-8 bytes per character of a sample of up to 1,024 keys, encoded into a reused buffer.
  const sample = Math.min(n, 1024);
  let sampleChars = 0;
  for (let i = 0; i < sample; i++) {
    const key = keys[i];
    if (typeof key !== 'string') return chars + 64;
    sampleChars += key.length;
  }
  if (sampleChars > 1 << 20) return chars + 64; // huge keys: no sample (grown if need be)
  if (sampleStage.length < 3 * sampleChars + 64) sampleStage = new Uint8Array(3 * sampleChars + 64);
  const packed = packStringsInto(keys, 0, sample, sampleStage, sampleOffsets);
  const ratio = packed === sample && sampleChars > 0 ? sampleOffsets[sample]! / sampleChars : 1;
  return Math.ceil(chars * Math.max(1, ratio) * 1.02) + 64;
}

/** Keys {@link packAll} counts the characters of before taking a big given buffer. */
const SCAN = 4096;
let sampleStage = new Uint8Array(1 << 16);
const sampleOffsets = new Uint32Array(1025);

/**
 * Packs `keys` with `funnel`: `{ bytes, offsets }` with `offsets.length === keys.length + 1`,
 * the same bytes as encoding each key with its funnel (hash/keys.ts). `into.bytes` and
 * `into.offsets` are written (and viewed by the result) when they are big enough (`into.bytes`:
 * at least the guess below, so that it is not grown step by step from a small size, or a quarter
 * more than that of the first 4,096 keys scaled to all; should the keys after them need more, the
 * bytes are grown by half as for any buffer, keeping what was packed); otherwise a
 * buffer is allocated, sized from the keys (no doubling for ASCII keys; for other text, from the
 * UTF-8 size of the first 1,024). Throws the per-key `TypeError` / `RangeError` for a bad key.
 */
export function packAll(
  funnel: Funnel,
  keys: ArrayLike<Key>,
  into: PackTarget = {},
): { bytes: Uint8Array; offsets: Uint32Array } {
  const n = keys.length;
  const offsets =
    into.offsets !== undefined && into.offsets.length >= n + 1
      ? into.offsets.subarray(0, n + 1)
      : new Uint32Array(n + 1);
  // A given buffer smaller than the guess would grow step by step from its size: not taken. One
  // with room for a quarter more than the first keys say is taken without counting every key.
  let bytes: Uint8Array | undefined = into.bytes;
  if (bytes === undefined || n <= SCAN || bytes.length < 1.25 * guessBytes(funnel, keys, SCAN)) {
    const guess = guessBytes(funnel, keys);
    if (bytes === undefined || bytes.length < guess) bytes = new Uint8Array(guess);
  }
  return packFrom(funnel, keys, bytes, offsets);
}

/** {@link packAll}'s loop: packs `keys` into `bytes` (grown when short), `offsets` written. */
function packFrom(
  funnel: Funnel,
  keys: ArrayLike<Key>,
  bytes: Uint8Array,
  offsets: Uint32Array,
): { bytes: Uint8Array; offsets: Uint32Array } {
  const n = keys.length;
  let i = 0;
  let p = 0;
  while (i < n) {
    if (funnel === 'string') {
      // With a stage (Node), packStringsInto runs many keys per call itself.
      const staged = utf8Write !== null && hasStage();
      const stop = staged ? n : Math.min(n, i + RUN);
      const joined = skipJoins === 0 && !staged ? joinRun(keys, i, stop, bytes, p, offsets) : -2;
      if (joined < 0) {
        if (joined === -1) skipJoins = BACKOFF;
        else if (skipJoins > 0) skipJoins--;
        i += packStringsInto(keys, i, stop, bytes, offsets.subarray(i), p);
      } else i = stop;
      p = offsets[i]!;
      if (i === stop) continue;
      if (typeof keys[i] !== 'string') encodeKeyInto(funnel, keys[i]!, bytes, p); // throws
    } else {
      const len = encodeKeyInto(funnel, keys[i]!, bytes, p);
      if (len >= 0) {
        offsets[i] = p;
        p += len;
        offsets[++i] = p;
        continue;
      }
    }
    // Key i does not fit: grow by half (or to its worst case), keeping what was packed.
    const key = keys[i];
    const need =
      typeof key === 'string' ? 3 * key.length : key instanceof Uint8Array ? key.length : 8;
    const next = new Uint8Array(Math.max(bytes.length + (bytes.length >> 1), p + need + 64));
    next.set(bytes.subarray(0, p));
    bytes = next;
  }
  offsets[0] = 0;
  return { bytes: bytes.subarray(0, p), offsets };
}
