import { describe, expect, it } from 'vitest';
import { hashKeyInto, mitz64Probes, useWasm, usingWasm, views } from '../src/hash/hasher.js';
import { keyBytes } from '../src/hash/keys.js';
import { murmur3x64_128 } from '../src/hash/murmur3.js';
import { Modulus, mitz64Indexes } from '../src/hash/strategies.js';
import { collectKernels } from './support/gc.js';
import { murmur3BigInt } from './support/murmur3-bigint.js';
import { lcg } from './support/random.js';

const hex = (x: bigint): string => x.toString(16).padStart(16, '0');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Guava 31.1 vectors from shared/REFERENCE.md §1.6 (checked against the real jar). */
const VECTORS: [string, Uint8Array, string, string][] = [
  ['utf8 "a"', utf8('a'), '85555565f6597889', 'e6b53a48510e895a'],
  ['utf8 "b"', utf8('b'), '7a98a957b1d3d1ee', 'fa2e131e544e94e9'],
  ['utf8 "hello"', utf8('hello'), 'cbd8a7b341bd9b02', '5b1e906a48ae1d19'],
  ['empty', new Uint8Array(0), '0000000000000000', '0000000000000000'],
  ['unencodedChars "a"', new Uint8Array([0x61, 0]), '96a698500b4e98bd', 'b278c9bfc754677d'],
  ['integerFunnel 1', new Uint8Array([1, 0, 0, 0]), '8895a3f5af28cafe', 'd3e47dee85e9be40'],
  [
    'longFunnel 1',
    new Uint8Array([1, 0, 0, 0, 0, 0, 0, 0]),
    '004403b7fb05c44a',
    '3d8acdb4d36d9c06',
  ],
];

describe('MurmurHash3 x64 128', () => {
  it.each(VECTORS)('matches Guava for %s', (_name, bytes, h1, h2) => {
    const [a, b] = murmur3x64_128(bytes);
    expect([hex(a), hex(b)]).toEqual([h1, h2]);
  });

  it('JavaScript core equals a BigInt transcription of the reference for every tail length', () => {
    const rnd = lcg(7);
    for (let len = 0; len < 100; len++) {
      for (let t = 0; t < 10; t++) {
        const b = new Uint8Array(len);
        for (let i = 0; i < len; i++) b[i] = rnd() & 0xff;
        expect(murmur3x64_128(b)).toEqual(murmur3BigInt(b));
      }
    }
  });

  it('WebAssembly and JavaScript paths agree on every funnel', () => {
    expect(usingWasm()).toBe(true);
    const keys: string[] = [
      '',
      'a',
      'hello world, a key longer than 16 bytes',
      '日本語テキスト',
      '😀',
      '\ud800x',
    ];
    for (let i = 0; i < 200; i++) keys.push(`https://example.com/item/${i}`.repeat(1 + (i % 5)));
    const viaWasm = keys.map((k) => {
      const out = new Int32Array(4);
      hashKeyInto('string', k, out);
      return Array.from(out);
    });
    useWasm(false);
    try {
      expect(usingWasm()).toBe(false);
      const viaJs = keys.map((k) => {
        const out = new Int32Array(4);
        hashKeyInto('string', k, out);
        return Array.from(out);
      });
      expect(viaJs).toEqual(viaWasm);
    } finally {
      useWasm(true);
    }
  });

  it('hashes keys longer than the initial scratch memory', () => {
    const big = 'x'.repeat(100_000);
    const out = new Int32Array(4);
    hashKeyInto('string', big, out);
    const [h1] = murmur3BigInt(utf8(big));
    const lo = Number(h1 & 0xffffffffn) | 0;
    expect(out[0]).toBe(lo);
  });
});

describe('funnels', () => {
  it('encodes a lone surrogate as "?" like Java, and pairs as 4-byte UTF-8', () => {
    expect(Array.from(keyBytes('string', '\ud800'))).toEqual([0x3f]);
    expect(Array.from(keyBytes('string', '\udc00a'))).toEqual([0x3f, 0x61]);
    expect(keyBytes('string', '😀')).toEqual(utf8('😀'));
    expect(keyBytes('string', '日本')).toEqual(utf8('日本'));
  });

  it('encodes numbers little-endian', () => {
    expect(Array.from(keyBytes('int', -1))).toEqual([255, 255, 255, 255]);
    expect(Array.from(keyBytes('long', -2))).toEqual([254, 255, 255, 255, 255, 255, 255, 255]);
    expect(keyBytes('long', -2n)).toEqual(keyBytes('long', -2));
    expect(Array.from(keyBytes('long', 2n ** 63n - 1n))).toEqual([
      255, 255, 255, 255, 255, 255, 255, 127,
    ]);
    expect(Array.from(keyBytes('utf16', 'aé'))).toEqual([0x61, 0, 0xe9, 0]);
  });

  it('rejects keys of the wrong kind or range with typed errors', () => {
    expect(() => keyBytes('string', 1)).toThrow(TypeError);
    expect(() => keyBytes('int', 2 ** 31)).toThrow(RangeError);
    expect(() => keyBytes('int', 1.5)).toThrow(/integer/);
    expect(() => keyBytes('long', 2 ** 53)).toThrow(RangeError);
    expect(() => keyBytes('long', 2n ** 63n)).toThrow(RangeError);
    expect(() => keyBytes('bytes', 'x')).toThrow(TypeError);
  });
});

describe('MURMUR128_MITZ_64 probe walk', () => {
  it('wasm word/mask probes equal the plain 63-bit index walk for many sizes and keys', () => {
    const rnd = lcg(99);
    const sizes = [64, 128, 9600, 2 ** 21, 2 ** 21 + 64, 2 ** 31, 2 ** 32 + 64, 2 ** 36 - 64];
    for (let i = 0; i < 20; i++) sizes.push(64 * (1 + (rnd() % 2 ** 26)));
    const h = new Int32Array(4);
    const expected = new Float64Array(255);
    const wrong: string[] = [];
    let checked = 0;
    for (const m of sizes) {
      const mod = new Modulus(m);
      for (let j = 0; j < 200; j++) {
        const key = `key-${m}-${j}-${rnd()}`;
        // Mostly small k; every 20th key a k in [128, 255], where the probe export moves the
        // masks across the words' end (wasm/murmur3.wat `probe`, mode 0).
        const k = j % 20 === 0 ? 255 - (rnd() % 128) : 1 + (rnd() % 30);
        hashKeyInto('string', key, h);
        mitz64Indexes(h, k, mod, expected);
        mitz64Probes('string', key, k, mod);
        for (let i = 0; i < k; i++) {
          const idx = expected[i]!;
          if (views.words[i] !== Math.floor(idx / 32) || views.masks[i] !== 1 << (idx & 31)) {
            wrong.push(`m=${m} key=${key} probe ${i}: index ${idx}`);
          }
        }
        checked += k;
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(checked).toBeGreaterThan(28 * 200);
  });
});

describe('wasm kernels', () => {
  it('filters beyond the live-kernel cap answer exactly like kernel-backed ones', async () => {
    const { BloomFilter } = await import('../src/filters/bloom/filter.js');
    const filters = Array.from({ length: 400 }, () =>
      BloomFilter.create({ capacity: 10_000, fpp: 0.01 }),
    );
    const keys = Array.from({ length: 300 }, (_, i) => `k${i}`);
    for (const f of filters) for (const k of keys) f.add(k);
    const reference = Buffer.from(filters[0]!.toGuava());
    const differ: number[] = [];
    for (const [i, f] of filters.entries()) {
      const missing = keys.filter((k) => !f.has(k)).length;
      if (!reference.equals(f.toGuava()) || missing > 0 || f.bitCount !== filters[0]!.bitCount) {
        differ.push(i);
      }
    }
    expect(differ).toEqual([]);
    // Give the cap back to the files that run after this one in the same worker.
    filters.length = 0;
    await collectKernels();
  });
});
