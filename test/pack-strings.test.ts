/**
 * The string packer (hash/pack.ts: `packStringsInto`, `writeString`, `packAll`, `packKeys` with
 * `into`) against the reference bytes of each key: Java's `String.getBytes(UTF_8)` rule written
 * out here by hand (UTF-8, `?` for a lone surrogate), independent of bloomkit's encoders. Run with
 * Node's `Buffer#utf8Write` and as a browser runs it (`TextEncoder`), over ASCII runs (joined),
 * mixed runs, lone surrogates at every position of a run, CJK, emoji and Latin-1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { packStringsInto, useStringEncoder, writeString } from '../src/hash/pack.js';
import { packKeys } from '../src/index.js';
import { mixedStrings } from './support/mixed-keys.js';

afterEach(() => {
  useStringEncoder('buffer');
});

/** Java's UTF-8 of `s` (a lone surrogate becomes '?'), code point by code point. */
function javaUtf8(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    let cp = c;
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c < 0xdc00 && d >= 0xdc00 && d <= 0xdfff) {
        cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else {
        out.push(0x3f);
        continue;
      }
    }
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else {
      out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63));
      out.push(0x80 | (cp & 63));
    }
  }
  return out;
}

/** Every key's packed bytes compared with {@link javaUtf8}; the first mismatch is reported. */
function expectPacked(keys: string[], bytes: Uint8Array, offsets: Uint32Array, from = 0): void {
  for (let i = 0; i < keys.length; i++) {
    const got = Array.from(bytes.subarray(offsets[i]!, offsets[i + 1]!));
    const want = javaUtf8(keys[i]!);
    if (got.length !== want.length || got.some((b, j) => b !== want[j])) {
      expect.fail(`key ${from + i} ${JSON.stringify(keys[i])}: [${got}] vs [${want}]`);
    }
  }
}

const LONE = [
  '\ud800',
  '\udc00',
  'ab\ud83d',
  '\ude00cd',
  'x\ud800\ud800y',
  `${'a'.repeat(40)}\udfff`,
];
const TEXT = ['café', '東京ニュース', '😀🎉', 'smörgåsbord', 'ü'.repeat(60), 'русский'];

/** Runs of 300 keys: ASCII with one odd key at position `at` (so every run position is tried). */
function runsWithOdd(odd: readonly string[]): string[] {
  const keys: string[] = [];
  for (let r = 0; r < 40; r++) {
    const at = (r * 37) % 300;
    for (let i = 0; i < 300; i++) {
      keys.push(i === at ? odd[r % odd.length]! : `https://example.com/${r}/${i}`);
    }
  }
  return keys;
}

for (const mode of ['buffer', 'utf8-write', 'text-encoder'] as const) {
  describe(`packStringsInto (${mode})`, () => {
    it('writes Java UTF-8 for ASCII runs, lone surrogates, CJK, emoji and Latin-1', () => {
      useStringEncoder(mode);
      const keys = [
        ...runsWithOdd(LONE),
        ...runsWithOdd(TEXT),
        ...mixedStrings(3000, 11, 300),
        ...Array.from({ length: 500 }, (_, i) => `k${i}`),
        // Longer than a run holds (40,000 units): packed alone, between runs.
        `${'x'.repeat(45_000)}é\ud800`,
        ...Array.from({ length: 50 }, (_, i) => `tail-${i}-€`),
      ];
      const out = new Uint8Array(3 * keys.reduce((a, k) => a + k.length, 0) + 64);
      const offsets = new Uint32Array(keys.length + 1);
      expect(packStringsInto(keys, 0, keys.length, out, offsets)).toBe(keys.length);
      expectPacked(keys, out, offsets);
    });

    it('splits no surrogate pair between keys, and finds non-ASCII at every position', () => {
      useStringEncoder(mode);
      // A pair cut in two by a key boundary is two lone surrogates: '?' '?'.
      const keys = ['x\ud83d', '\ude00y', '\ud83d', '\ude00', 'ok', '😀', '\ud83d\ude00\ud83d'];
      // Keys of 1 to 72 units with one non-ASCII character (2, 3 or 4 bytes, or a lone
      // surrogate) at each position: the transcoder's 32- and 16-unit steps, their tails and overlaps.
      const odd = ['é', '東', '😀', '\udc00', '\ud800'];
      for (let n = 1; n <= 72; n++) {
        for (let at = 0; at < n; at++) {
          const c = odd[(n + at) % odd.length]!;
          keys.push('a'.repeat(at) + c + 'b'.repeat(n - at - 1));
        }
      }
      const out = new Uint8Array(3 * keys.reduce((a, k) => a + k.length, 0) + 64);
      const offsets = new Uint32Array(keys.length + 1);
      expect(packStringsInto(keys, 0, keys.length, out, offsets)).toBe(keys.length);
      expectPacked(keys, out, offsets);
      expect(Array.from(out.subarray(offsets[0]!, offsets[4]!))).toEqual([
        0x78, 0x3f, 0x3f, 0x79, 0x3f, 0x3f,
      ]);
    });

    it('writes random runs of short keys, empty ones and keys ending at text or surrogates', () => {
      useStringEncoder(mode);
      // Seeded: keys of 0 to 70 units, mostly ASCII, with 2-, 3- and 4-byte text and lone
      // surrogates anywhere, so that key ends fall before, inside and after every kind of step.
      let seed = 12345;
      const rnd = () => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed / 2 ** 32;
      };
      const odd = ['é', 'ж', '東', '😀', '\ud800', '\udc00', '\u07ff', '\u0800', '\uffff'];
      const keys: string[] = [];
      for (let i = 0; i < 20_000; i++) {
        const n = Math.floor(rnd() * rnd() * 71);
        let key = '';
        for (let j = 0; j < n; j++) {
          key +=
            rnd() < 0.9
              ? String.fromCharCode(32 + Math.floor(rnd() * 95))
              : odd[Math.floor(rnd() * odd.length)]!;
        }
        keys.push(key);
      }
      const out = new Uint8Array(3 * keys.reduce((a, k) => a + k.length, 0) + 64);
      const offsets = new Uint32Array(keys.length + 1);
      expect(packStringsInto(keys, 0, keys.length, out, offsets)).toBe(keys.length);
      expectPacked(keys, out, offsets);
    });

    it('writes a lone surrogate as ? alone (writeString)', () => {
      useStringEncoder(mode);
      const out = new Uint8Array(512);
      for (const s of LONE) {
        const n = writeString(s, out, 3);
        expect(Array.from(out.subarray(3, 3 + n))).toEqual(javaUtf8(s));
      }
    });
  });
}

describe('packStringsInto stops', () => {
  it('at the offsets room, the byte room and a key that is not a string (key by key)', () => {
    useStringEncoder('utf8-write');
    const keys = Array.from({ length: 100 }, (_, i) => `key-${i}`);
    const out = new Uint8Array(4096);
    const offsets = new Uint32Array(11);
    expect(packStringsInto(keys, 5, 100, out, offsets, 7)).toBe(10);
    expect(offsets[0]).toBe(7);
    expectPacked(keys.slice(5, 15), out, offsets, 5);
    // Each key of 5 characters needs room for its worst case (15 bytes) plus 16 after it.
    const small = new Uint8Array(56);
    const o = new Uint32Array(101);
    expect(packStringsInto(keys, 0, 100, small, o)).toBe(6);
    expect(o[6]).toBe(30);
    expectPacked(keys.slice(0, 6), small, o);
    const mixed: unknown[] = ['a', 'b', 3, 'c'];
    expect(packStringsInto(mixed, 0, 4, out, o)).toBe(2);
    expect(o[2]).toBe(2);
    expect(packStringsInto(mixed, 2, 4, out, o)).toBe(0);
  });

  it('in runs, where the bytes no longer fit (not the worst case)', () => {
    const keys = Array.from({ length: 100 }, (_, i) => `key-${i % 10}`);
    // 40 bytes before the 16 spare ones: 8 keys of 5 ASCII bytes (their worst case: 2 keys).
    const small = new Uint8Array(56);
    const o = new Uint32Array(101);
    const count = packStringsInto(keys, 0, 100, small, o);
    expect(count).toBe(useStringEncoder('buffer') ? 8 : 2);
    expectPacked(keys.slice(0, count), small, o);
    // 3 bytes a key where 'é' is: the keys that end by the limit are kept.
    const text = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? 'ééééé' : 'abcde'));
    const out = new Uint8Array(16 + 16 + 40);
    expect(packStringsInto(text, 0, 100, out, o, 16)).toBe(5);
    expect(o[5]).toBe(16 + 40);
    expectPacked(text.slice(0, 5), out, o);
  });
});

describe('packKeys into', () => {
  it('writes into the given buffers when they are big enough, else allocates', () => {
    const keys = [...runsWithOdd(TEXT), ...runsWithOdd(LONE)];
    const bytes = new Uint8Array(1 << 20);
    const offsets = new Uint32Array(keys.length + 10);
    const packed = packKeys('string', keys, { bytes, offsets });
    expect(packed.bytes.buffer).toBe(bytes.buffer);
    expect(packed.offsets.buffer).toBe(offsets.buffer);
    expect(packed.offsets.length).toBe(keys.length + 1);
    expectPacked(keys, packed.bytes, packed.offsets);
    const small = packKeys('string', keys, { bytes: new Uint8Array(10) });
    expectPacked(keys, small.bytes, small.offsets);
    expect(() => packKeys('string', keys, { bytes: [] as unknown as Uint8Array })).toThrow(
      /into.bytes must be a Uint8Array/,
    );
  });

  it('takes a big buffer from the first keys, and grows it when later keys need more', () => {
    // The first 4,096 keys say about 41 kB for all: the given 60 kB are taken, then outgrown
    // (the last 400 keys need 33 kB more).
    const keys = [
      ...Array.from({ length: 4096 }, (_, i) => `k-${String(i).padStart(7, '0')}`),
      ...Array.from({ length: 400 }, (_, i) => `${'é'.repeat(40)}${i % 10}`),
    ];
    const bytes = new Uint8Array(60_000);
    const packed = packKeys('string', keys, { bytes });
    expect(packed.bytes.buffer === bytes.buffer).toBe(false);
    expect(packed.offsets[keys.length]).toBe(4096 * 9 + 400 * 81);
    expectPacked(keys, packed.bytes, packed.offsets);
    const fits = packKeys('string', keys.slice(0, 4100), { bytes });
    expect(fits.bytes.buffer === bytes.buffer).toBe(true);
    expectPacked(keys.slice(0, 4100), fits.bytes, fits.offsets);
  });

  it('packs any iterable as the array (a Set)', () => {
    const keys = runsWithOdd(LONE);
    const packed = packKeys('string', new Set(keys));
    expectPacked([...new Set(keys)], packed.bytes, packed.offsets);
  });
});
