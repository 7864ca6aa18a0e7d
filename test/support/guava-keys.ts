/**
 * Seeded keys full of edge cases for the Guava interop tests, and the helpers that describe where
 * bloomkit and Guava first disagree (test/guava-interop.test.ts).
 */
import type { Funnel, Key, StrategyName } from '../../src/index.js';
import { mulberry32 } from './random.js';

// ------------------------------------------------------------------ seeded keys

export const FUNNELS: readonly Funnel[] = ['string', 'utf16', 'int', 'long', 'bytes'];
export const STRATEGIES: readonly StrategyName[] = ['MURMUR128_MITZ_64', 'MURMUR128_MITZ_32'];

/** Strings that stress the encoders: UTF-8 boundaries, astral characters, every lone-surrogate position. */
export const SPECIAL_STRINGS: readonly string[] = [
  '',
  'a',
  'hello',
  '\0',
  '\u007f',
  '\u0080',
  'é',
  '\u07ff',
  '\u0800',
  '€',
  '\ufffd',
  '\ufffe',
  '\uffff',
  '😀',
  '👨‍👩‍👧‍👦',
  '𝄞 music',
  '日本語テキスト',
  '中文字符串',
  '한국어',
  'mixé 日本 😀 end',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ud800abc',
  'abc\ud800',
  'ab\ud800cd',
  '\udc00abc',
  'abc\udc00',
  'ab\udfffcd',
  '\udc00\ud800',
  '\ud800\ud800',
  '\udc00\udc00',
  '\ud83d',
  'x\ud83d\ude00\ud83d',
  '\ude00\ud83d\ude00',
  '?',
  'a'.repeat(100_000),
  'é😀日\ud800'.repeat(25_000),
  '日'.repeat(40_000),
  'https://example.com/item/0',
];

export const SPECIAL_INTS: readonly number[] = [
  0,
  1,
  -1,
  2,
  255,
  256,
  65535,
  65536,
  2147483647,
  -2147483648,
  2147483646,
  -2147483647,
  1 << 30,
  -(1 << 30),
];

export const SPECIAL_LONGS: readonly (bigint | number)[] = [
  0n,
  1n,
  -1n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  2n ** 63n - 2n,
  -(2n ** 63n) + 1n,
  2n ** 32n,
  -(2n ** 32n),
  0xffffffffn,
  0x80000000n,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER - 1,
  2 ** 32,
  -(2 ** 32),
  2 ** 32 - 1,
  -(2 ** 32) + 1,
  2 ** 31,
  -(2 ** 31) - 1,
  -0,
  42,
  42n, // the same long as a number and as a bigint: the second add must return false
  -7,
  -7n,
];

export function bytesOf(...values: number[]): Uint8Array {
  return Uint8Array.from(values);
}

export function randomBytes(rnd: () => number, length: number): Uint8Array {
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = (rnd() * 256) | 0;
  return b;
}

export const SPECIAL_BYTES: readonly Uint8Array[] = (() => {
  const rnd = mulberry32(99);
  const out: Uint8Array[] = [
    new Uint8Array(0),
    bytesOf(0),
    bytesOf(0xff),
    bytesOf(0, 0, 0, 0),
    bytesOf(0x3f),
    bytesOf(0xef, 0xbf, 0xbd),
  ];
  // Every tail length of MurmurHash3's 16-byte blocks, and then some.
  for (const len of [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65])
    out.push(randomBytes(rnd, len));
  out.push(randomBytes(rnd, 100_000));
  out.push(new Uint8Array(4096).fill(0xff));
  return out;
})();

/** The code units of the string {@link randomString} is drawing (one array, reused). */
const units: number[] = [];

/**
 * A random string of mixed code units: ASCII, BMP, surrogates (paired and lone), anything. Drawn
 * as code units and made into a string at once (not appended char by char: that builds a chain
 * of partial strings for every key).
 */
export function randomString(rnd: () => number): string {
  const len = (rnd() * 24) | 0;
  units.length = 0;
  for (let i = 0; i < len; i++) {
    const r = rnd();
    if (r < 0.5) units.push(32 + ((rnd() * 95) | 0));
    else if (r < 0.7) units.push(0x80 + ((rnd() * 0x780) | 0));
    else if (r < 0.85) units.push(0x4e00 + ((rnd() * 0x5000) | 0));
    else if (r < 0.93) {
      // A code point in U+10000..U+10FFFE, as its surrogate pair.
      const c = (rnd() * 0xfffff) | 0;
      units.push(0xd800 + (c >>> 10), 0xdc00 + (c & 0x3ff));
    } else units.push((rnd() * 0x10000) | 0); // any unit, lone surrogates included
  }
  return String.fromCharCode.apply(null, units);
}

/** Eight bytes for {@link randomLong} to read a bigint from. */
const longBytes = new DataView(new ArrayBuffer(8));

export function randomLong(rnd: () => number): bigint | number {
  if (rnd() < 0.5) {
    longBytes.setUint32(0, (rnd() * 2 ** 32) >>> 0); // high half, big-endian
    longBytes.setUint32(4, (rnd() * 2 ** 32) >>> 0);
    return longBytes.getBigInt64(0);
  }
  const v = Math.floor(rnd() * 2 ** 53) - 2 ** 52;
  return v;
}

/**
 * `count` seeded keys for `funnel`; `tag` separates generated present keys from absent ones.
 * Byte keys are views into shared 64 KiB buffers (one allocation per buffer, not per key).
 */
export function generate(funnel: Funnel, count: number, seed: number, tag: string): Key[] {
  const rnd = mulberry32(seed);
  const out: Key[] = [];
  switch (funnel) {
    case 'string':
    case 'utf16': {
      const prefix = `https://example.com/${tag}/`;
      for (let i = 0; i < count; i++) out.push(i % 4 === 0 ? randomString(rnd) : prefix + i);
      break;
    }
    case 'int':
      for (let i = 0; i < count; i++) out.push((rnd() * 2 ** 32) | 0);
      break;
    case 'long':
      for (let i = 0; i < count; i++) out.push(randomLong(rnd));
      break;
    case 'bytes': {
      let buffer = new ArrayBuffer(0);
      let used = 0;
      for (let i = 0; i < count; i++) {
        const length = (rnd() * 40) | 0;
        if (used + length > buffer.byteLength) {
          buffer = new ArrayBuffer(1 << 16);
          used = 0;
        }
        const b = new Uint8Array(buffer, used, length);
        for (let j = 0; j < length; j++) b[j] = (rnd() * 256) | 0;
        used += length;
        out.push(b);
      }
      break;
    }
  }
  return out;
}

export function specials(funnel: Funnel): readonly Key[] {
  switch (funnel) {
    case 'string':
    case 'utf16':
      return SPECIAL_STRINGS;
    case 'int':
      return SPECIAL_INTS;
    case 'long':
      return SPECIAL_LONGS;
    case 'bytes':
      return SPECIAL_BYTES;
  }
}

/** A handful of edge-case keys for a one-key filter (more would saturate its 64 bits). */
export function tinySpecials(funnel: Funnel): readonly Key[] {
  switch (funnel) {
    case 'string':
    case 'utf16':
      return ['', '😀', '日本語', 'a\ud800'];
    case 'int':
      return [0, -2147483648, 2147483647];
    case 'long':
      return [-(2n ** 63n), 2n ** 63n - 1n, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    case 'bytes':
      return [new Uint8Array(0), bytesOf(1, 2, 3)];
  }
}

// ------------------------------------------------------------------ comparison helpers

export function showKey(key: Key | undefined): string {
  if (typeof key === 'string') {
    return key.length > 40
      ? `${JSON.stringify(key.slice(0, 40))}…(${key.length})`
      : JSON.stringify(key);
  }
  if (typeof key === 'bigint') return `${key}n`;
  if (key instanceof Uint8Array) return `Uint8Array(${key.length})`;
  return String(key);
}

/**
 * The first index where two answer lists differ, described; null when they are equal. Answers
 * are booleans or bytes (1 = true, 0 = false: Guava's `putBits` and `probeBits`). `keys` are the
 * keys asked, or a function that gives the key at an index (called only to name a mismatch).
 */
export function firstMismatch(
  what: string,
  ours: ArrayLike<boolean | number>,
  theirs: ArrayLike<boolean | number>,
  keys: readonly Key[] | ((index: number) => Key | undefined),
): string | null {
  if (ours.length !== theirs.length)
    return `${what}: ${ours.length} answers vs Guava's ${theirs.length}`;
  for (let i = 0; i < ours.length; i++) {
    const a = Boolean(ours[i]);
    const b = Boolean(theirs[i]);
    if (a !== b) {
      const key = typeof keys === 'function' ? keys(i) : keys[i];
      return `${what} #${i} key ${showKey(key)}: bloomkit ${a}, Guava ${b}`;
    }
  }
  return null;
}

/** The first differing byte of two buffers, described; null when they are equal. */
export function firstByteDiff(ours: Uint8Array, theirs: Uint8Array): string | null {
  if (ours.length !== theirs.length) return `length ${ours.length} vs Guava's ${theirs.length}`;
  for (let i = 0; i < ours.length; i++) {
    if (ours[i] !== theirs[i]) return `byte ${i}: bloomkit ${ours[i]}, Guava ${theirs[i]}`;
  }
  return null;
}

/**
 * The distance in units in the last place between two non-negative doubles (0 when identical).
 *
 * Guava's expectedFpp() is `Math.pow(bitCount / bitSize, k)`. HotSpot's Math.pow is an intrinsic
 * that is correctly rounded almost always (measured: 99 of 200,000 random (c/m)^k differ from the
 * correctly rounded value, by 1 ulp), while V8's `**` is 1 ulp off in about 1 case in 9. So bit
 * equality with Java cannot be promised for every input; 1 ulp can. test/math.test.ts pins the
 * exact Guava values for the cases where Java is correctly rounded.
 */
export function ulpDistance(a: number, b: number): number {
  const view = new DataView(new ArrayBuffer(16));
  view.setFloat64(0, a);
  view.setFloat64(8, b);
  const d = view.getBigInt64(0) - view.getBigInt64(8);
  return Number(d < 0n ? -d : d);
}
