/**
 * How a key becomes bytes: bloomkit's funnels, named after Guava's so that Java and TypeScript
 * code can be matched one to one.
 *
 * | funnel     | accepts                                | bytes hashed                          | Guava funnel                   |
 * |------------|----------------------------------------|---------------------------------------|--------------------------------|
 * | `'string'` | `string`                               | UTF-8; a lone surrogate becomes `?`   | `Funnels.stringFunnel(UTF_8)`  |
 * | `'utf16'`  | `string`                               | each UTF-16 code unit, 2 bytes LE     | `Funnels.unencodedCharsFunnel()` |
 * | `'int'`    | integer `number` in [−2^31, 2^31)      | 4 bytes LE (two's complement)         | `Funnels.integerFunnel()`      |
 * | `'long'`   | `bigint` in [−2^63, 2^63), safe-integer `number` | 8 bytes LE (two's complement) | `Funnels.longFunnel()`       |
 * | `'bytes'`  | `Uint8Array`                           | the bytes as they are                 | `Funnels.byteArrayFunnel()`    |
 *
 * Java's `String.getBytes(UTF_8)` replaces an unpaired surrogate with `?` (0x3F) where
 * `TextEncoder` writes U+FFFD (EF BF BD); bloomkit follows Java so that filters are exchangeable.
 * Strings are encoded by hand into the caller's scratch buffer, so the hot path allocates nothing.
 */

import { mustBe } from '../errors.js';

/** A key that a filter accepts; which kinds are allowed depends on the filter's funnel. */
export type Key = string | Uint8Array | number | bigint;

/** The key encodings (Guava funnels) bloomkit supports. */
export type Funnel = 'string' | 'utf16' | 'int' | 'long' | 'bytes';

/** Funnel ids as stored in bloomkit's native format. Never reuse or reorder them. */
export const FUNNEL_IDS: Readonly<Record<Funnel, number>> = {
  bytes: 0,
  string: 1,
  utf16: 2,
  int: 3,
  long: 4,
};

const FUNNEL_BY_ID: readonly Funnel[] = ['bytes', 'string', 'utf16', 'int', 'long'];

/** The funnel stored under `id` in the native format, or `undefined` for an unknown id. */
export function funnelFromId(id: number): Funnel | undefined {
  return FUNNEL_BY_ID[id];
}

/** Throws a `RangeError` unless `funnel` is one of bloomkit's funnel names; returns it. */
export function checkFunnel(funnel: unknown): Funnel {
  if (typeof funnel === 'string' && Object.hasOwn(FUNNEL_IDS, funnel)) return funnel as Funnel;
  throw checkFunnelError(funnel);
}

function checkFunnelError(funnel: unknown): Error {
  return mustBe('funnel', `one of 'string', 'utf16', 'int', 'long', 'bytes'`, funnel);
}

/** Writes `s` as UTF-8 (Java flavour: lone surrogates become '?') into `out` at `off`. */
function encodeUtf8(s: string, out: Uint8Array, off: number): number {
  const n = s.length;
  // ASCII prefix: one predictable branch per char (most keys are ASCII end to end).
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    out[off + i] = c;
  }
  if (i === n) return n;
  let p = off + i;
  for (; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[p++] = c;
    } else if (c < 0x800) {
      out[p++] = 0xc0 | (c >> 6);
      out[p++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      out[p++] = 0xe0 | (c >> 12);
      out[p++] = 0x80 | ((c >> 6) & 0x3f);
      out[p++] = 0x80 | (c & 0x3f);
    } else {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c < 0xdc00 && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        out[p++] = 0xf0 | (c >> 18);
        out[p++] = 0x80 | ((c >> 12) & 0x3f);
        out[p++] = 0x80 | ((c >> 6) & 0x3f);
        out[p++] = 0x80 | (c & 0x3f);
      } else {
        out[p++] = 0x3f;
      }
    }
  }
  return p - off;
}

function encodeUtf16(s: string, out: Uint8Array, off: number): number {
  const n = s.length;
  for (let i = 0, p = off; i < n; i++, p += 2) {
    const c = s.charCodeAt(i);
    out[p] = c & 0xff;
    out[p + 1] = c >>> 8;
  }
  return n * 2;
}

function put32(out: Uint8Array, p: number, v: number): void {
  out[p] = v & 0xff;
  out[p + 1] = (v >>> 8) & 0xff;
  out[p + 2] = (v >>> 16) & 0xff;
  out[p + 3] = v >>> 24;
}

const TWO_32 = 4294967296;
const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;

/** `key for funnel '<funnel>' must be <expected>, got <key>`: a `TypeError`, or `Ctor`. */
function badKey(
  funnel: Funnel,
  key: unknown,
  expected: string,
  Ctor: new (message: string) => Error = TypeError,
): Error {
  return mustBe(`key for funnel '${funnel}'`, expected, key, Ctor);
}

/**
 * Encodes `key` with `funnel` into `out` at `off` and returns the byte length, or, when `out`
 * has fewer than the worst-case bytes the key may need after `off` (plus 16 spare), returns
 * minus that worst case without writing: grow the buffer and call again.
 * Throws `TypeError` for a key of the wrong kind and `RangeError` for an out-of-range number.
 */
export function encodeKeyInto(funnel: Funnel, key: Key, out: Uint8Array, off: number): number {
  const room = out.length - off - 16;
  switch (funnel) {
    case 'string':
      if (typeof key !== 'string') throw badKey(funnel, key, 'a string');
      if (key.length * 3 > room) return -key.length * 3;
      return encodeUtf8(key, out, off);
    case 'utf16':
      if (typeof key !== 'string') throw badKey(funnel, key, 'a string');
      if (key.length * 2 > room) return -key.length * 2;
      return encodeUtf16(key, out, off);
    case 'int':
      if (typeof key !== 'number') throw badKey(funnel, key, 'an integer number');
      if (!Number.isInteger(key) || key < -2147483648 || key > 2147483647) {
        throw badKey(funnel, key, 'an integer in [-2^31, 2^31)', RangeError);
      }
      if (out.length - off < 4) return -4;
      put32(out, off, key | 0);
      return 4;
    case 'long':
      if (out.length - off < 8 && (typeof key === 'number' || typeof key === 'bigint')) return -8;
      if (typeof key === 'number') {
        if (!Number.isSafeInteger(key)) {
          throw badKey(funnel, key, 'a safe integer or a bigint', RangeError);
        }
        put32(out, off, key >>> 0);
        put32(out, off + 4, Math.floor(key / TWO_32) | 0);
        return 8;
      }
      if (typeof key === 'bigint') {
        if (key < MIN_LONG || key > MAX_LONG) {
          throw badKey(funnel, key, 'in [-2^63, 2^63)', RangeError);
        }
        put32(out, off, Number(BigInt.asUintN(32, key)));
        put32(out, off + 4, Number(BigInt.asUintN(32, key >> 32n)));
        return 8;
      }
      throw badKey(funnel, key, 'a bigint or a safe-integer number');
    case 'bytes':
      if (!(key instanceof Uint8Array)) throw badKey(funnel, key, 'a Uint8Array');
      if (key.length > room) return -key.length;
      out.set(key, off);
      return key.length;
    default:
      throw checkFunnelError(funnel);
  }
}

/** The bytes `funnel` produces for `key`: a fresh copy (for tests, tools and other hashes). */
export function keyBytes(funnel: Funnel, key: Key): Uint8Array {
  let buf = new Uint8Array(64);
  let len = encodeKeyInto(funnel, key, buf, 0);
  if (len < 0) {
    buf = new Uint8Array(-len + 16);
    len = encodeKeyInto(funnel, key, buf, 0);
  }
  return buf.slice(0, len);
}
