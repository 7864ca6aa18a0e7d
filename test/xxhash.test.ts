import { xxhash64 as hyparquetXxhash64 } from 'hyparquet/src/xxhash.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type Funnel, type Key, keyBytes } from '../src/hash/keys.js';
import {
  MAX_BATCH,
  useWasmXxh64,
  xxh64Float,
  xxh64Key,
  xxh64Many,
  xxh64UsesWasm,
  xxhash64,
  xxViews,
} from '../src/hash/xxhash64.js';

const PRIME32 = 2654435761n;
const PRIME64 = 11400714785074694797n;

/** The reference sanity buffer of xxHash's xxhsum (cli/xsum_sanity_check.c, XSUM_fillTestBuffer). */
function sanityBuffer(len: number): Uint8Array {
  const out = new Uint8Array(len);
  let gen = PRIME32;
  for (let i = 0; i < len; i++) {
    out[i] = Number(gen >> 56n);
    gen = BigInt.asUintN(64, gen * PRIME64);
  }
  return out;
}

/** XSUM_XXH64_testdata from the reference implementation (Cyan4973/xxHash cli/xsum_sanity_check.c). */
const REFERENCE: [number, bigint, bigint][] = [
  [0, 0n, 0xef46db3751d8e999n],
  [0, PRIME32, 0xac75fda2929b17efn],
  [1, 0n, 0xe934a84adb052768n],
  [1, PRIME32, 0x5014607643a9b4c3n],
  [4, 0n, 0x9136a0dca57457een],
  [14, 0n, 0x8282dcc4994e35c8n],
  [14, PRIME32, 0xc3bd6bf63deb6df0n],
  [222, 0n, 0xb641ae8cb691c174n],
  [222, PRIME32, 0x20cb8ab7ae10c14an],
];

const enc = new TextEncoder();

/** The last hash left in xxViews.hash, as an unsigned bigint. */
function lastHash(): bigint {
  const h = xxViews.hash;
  return (BigInt(h[1]! >>> 0) << 32n) | BigInt(h[0]! >>> 0);
}

/** A seeded xorshift generator for reproducible inputs. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

afterEach(() => useWasmXxh64(true));

describe('XXH64', () => {
  it('matches the reference implementation test vectors', () => {
    const buf = sanityBuffer(222);
    for (const [len, seed, expected] of REFERENCE) {
      expect(xxhash64(buf.subarray(0, len), seed), `len ${len} seed ${seed}`).toBe(expected);
    }
    expect(xxhash64(enc.encode(''))).toBe(0xef46db3751d8e999n);
    expect(xxhash64(enc.encode('a'))).toBe(0xd24ec4f1a98c6e5bn);
    expect(xxhash64(enc.encode('abc'))).toBe(0x44bc2cf5ad770999n);
  });

  it('agrees with an independent implementation (hyparquet, BigInt) for lengths 0..300 and seeds', () => {
    const next = rng(7);
    for (let len = 0; len <= 300; len++) {
      const data = Uint8Array.from({ length: len }, () => Math.floor(next() * 256));
      for (const seed of [0n, 1n, PRIME64, 0xffffffffffffffffn]) {
        expect(xxhash64(data, seed)).toBe(hyparquetXxhash64(data, seed));
      }
    }
  });

  it('gives the same hash in WebAssembly and in the JavaScript core, for every funnel', () => {
    expect(xxh64UsesWasm()).toBe(true);
    const keys: [Funnel, Key][] = [
      ['string', ''],
      ['string', 'https://example.com/item/12345'],
      ['string', 'héllo wörld'],
      ['string', '中文字符 and emoji 😀'],
      ['string', 'lone \ud800 surrogate'],
      ['string', 'x'.repeat(100_000)],
      ['utf16', 'abc😀'],
      ['int', -123456],
      ['long', -(2n ** 63n)],
      ['long', 2 ** 53 - 1],
      ['bytes', new Uint8Array([0, 1, 2, 255])],
    ];
    for (const [funnel, key] of keys) {
      const expected = xxhash64(keyBytes(funnel, key));
      for (const wasm of [true, false]) {
        useWasmXxh64(wasm);
        xxh64Key(funnel, key);
        expect(lastHash(), `${funnel} ${String(key).slice(0, 20)} wasm=${wasm}`).toBe(expected);
      }
    }
  });

  it('hashes ASCII and non-ASCII strings of every length like their UTF-8 bytes', () => {
    const next = rng(11);
    for (const wasm of [true, false]) {
      useWasmXxh64(wasm);
      for (let len = 0; len < 80; len++) {
        const ascii = Array.from({ length: len }, () =>
          String.fromCharCode(32 + Math.floor(next() * 95)),
        ).join('');
        xxh64Key('string', ascii);
        expect(lastHash()).toBe(hyparquetXxhash64(enc.encode(ascii)));
        // One non-ASCII character anywhere falls back to the full UTF-8 encoder.
        const mixed = `${ascii}é${ascii.slice(0, len % 7)}`;
        xxh64Key('string', mixed);
        expect(lastHash()).toBe(hyparquetXxhash64(enc.encode(mixed)));
      }
    }
  });

  it('batch hashing equals one-by-one hashing, across memory growth', () => {
    const keys: string[] = [];
    for (let i = 0; i < MAX_BATCH; i++) keys.push(i % 97 === 0 ? `é${'y'.repeat(i * 5)}` : `k${i}`);
    for (const wasm of [true, false]) {
      useWasmXxh64(wasm);
      xxh64Many('string', keys, 0, keys.length);
      const many = Array.from(xxViews.many.subarray(0, 2 * keys.length));
      for (let i = 0; i < keys.length; i++) {
        const expected = xxhash64(keyBytes('string', keys[i]!));
        const got = (BigInt(many[2 * i + 1]! >>> 0) << 32n) | BigInt(many[2 * i]! >>> 0);
        expect(got, `key ${i}`).toBe(expected);
      }
    }
  });

  it('hashes floats as their little-endian IEEE 754 bytes', () => {
    for (const value of [0, -0, 1.5, -2.25e300, Number.NaN, Number.POSITIVE_INFINITY]) {
      const d = new DataView(new ArrayBuffer(8));
      d.setFloat64(0, value, true);
      xxh64Float(value, 8);
      expect(lastHash()).toBe(hyparquetXxhash64(new Uint8Array(d.buffer)));
      d.setFloat32(0, value, true);
      xxh64Float(value, 4);
      expect(lastHash()).toBe(hyparquetXxhash64(new Uint8Array(d.buffer, 0, 4)));
    }
  });

  it('rejects what is not a Uint8Array', () => {
    expect(() => xxhash64('abc' as never)).toThrow(TypeError);
  });
});
