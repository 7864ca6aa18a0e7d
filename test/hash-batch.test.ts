/**
 * The packed-batch hashing layer (hash/pack.ts, hash/batch.ts, BloomKernel.batch) against the
 * per-key paths, in WebAssembly and in the JavaScript cores: the same bytes for every funnel
 * (non-ASCII, lone surrogates, empty keys, keys longer than a chunk), the same hashes and probes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  batchScratch,
  hashIndex,
  mitz64Batch,
  murmur3Batch,
  probeIndex,
  releaseBatch,
  xxh64Batch,
} from '../src/hash/batch.js';
import { BloomKernel, hashKey, mitz64Probes, useWasm, views } from '../src/hash/hasher.js';
import { type Funnel, type Key, keyBytes } from '../src/hash/keys.js';
import { packAll } from '../src/hash/pack.js';
import { scratchBytes } from '../src/hash/scratch.js';
import { Modulus } from '../src/hash/strategies.js';
import { xxh64Key, xxViews } from '../src/hash/xxhash64.js';
import { mixedKeys, mixedStrings } from './support/mixed-keys.js';

afterEach(() => useWasm(true));

const keySets = new Map<Funnel, Key[]>();
/** 3,000 keys of the funnel, made once for the file (the tests only read them). */
function keysFor(funnel: Funnel): Key[] {
  let keys = keySets.get(funnel);
  if (keys === undefined) {
    keys =
      funnel === 'string' || funnel === 'utf16'
        ? mixedStrings(3000, 7)
        : mixedKeys(funnel, 3000, 7);
    keySets.set(funnel, keys);
  }
  return keys;
}

/**
 * The same bytes in two typed arrays (of the same type), compared with Buffer.compare: toEqual
 * walks them element by element. A difference is reported at its first element.
 */
function expectSameArray(actual: ArrayBufferView, expected: ArrayBufferView, what: string): void {
  const a = new Uint8Array(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.length === b.length && Buffer.compare(a, b) === 0) return;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  expect.fail(`${what}: ${a.length} vs ${b.length} bytes, first difference at byte ${i}`);
}

const FUNNELS: Funnel[] = ['string', 'utf16', 'int', 'long', 'bytes'];

describe('packAll', () => {
  for (const funnel of FUNNELS) {
    it(`gives each key's funnel bytes (${funnel})`, () => {
      const keys = keysFor(funnel);
      const { bytes, offsets } = packAll(funnel, keys);
      expect(offsets.length).toBe(keys.length + 1);
      // Key by key: the per-key bytes, and where packAll says key i starts and ends.
      const perKey = keys.map((key) => keyBytes(funnel, key));
      const expectedOffsets = new Uint32Array(keys.length + 1);
      for (let i = 0; i < keys.length; i++)
        expectedOffsets[i + 1] = expectedOffsets[i]! + perKey[i]!.length;
      expectSameArray(offsets, expectedOffsets, 'offsets');
      expectSameArray(bytes.subarray(0, offsets[keys.length]), Buffer.concat(perKey), 'bytes');
    });
  }

  it('writes Java ? for lone surrogates where TextEncoder would write U+FFFD', () => {
    const keys = Array.from({ length: 40 }, (_, i) => (i === 20 ? 'a\ud800b' : `k${i}`));
    const { bytes, offsets } = packAll('string', keys);
    expect(Array.from(bytes.subarray(offsets[20]!, offsets[21]!))).toEqual([0x61, 0x3f, 0x62]);
    // A high surrogate at the end of one key and a low one at the start of the next stay two '?'.
    const split = packAll('string', [
      ...Array.from({ length: 30 }, () => 'aaaa'),
      'x\ud83d',
      '\ude00y',
    ]);
    const o = split.offsets;
    expect(Array.from(split.bytes.subarray(o[30]!, o[32]!))).toEqual([0x78, 0x3f, 0x3f, 0x79]);
  });

  it('throws the per-key TypeError for a key of the wrong kind', () => {
    expect(() => packAll('string', ['a', 5 as unknown as string])).toThrow(TypeError);
    expect(() => packAll('int', [1.5])).toThrow(RangeError);
  });
});

describe('batch hashes equal per-key hashes', () => {
  for (const wasm of [true, false]) {
    const mode = wasm ? 'WebAssembly' : 'JavaScript';
    for (const funnel of FUNNELS) {
      it(`XXH64, MurmurHash3 and MITZ_64 probes, ${funnel} (${mode})`, () => {
        useWasm(wasm);
        const keys = keysFor(funnel);
        const batch = packAll(funnel, keys);
        const n = keys.length;
        const xx = new Int32Array(2 * n);
        const mm = new Int32Array(4 * n);
        for (let s = 0; s < n; ) {
          const stop = xxh64Batch(batch, s, n);
          expect(stop).toBeGreaterThan(s);
          xx.set(batchScratch!.i32.subarray(hashIndex, hashIndex + 2 * (stop - s)), 2 * s);
          s = stop;
        }
        for (let s = 0; s < n; ) {
          const stop = murmur3Batch(batch, s, n);
          mm.set(batchScratch!.i32.subarray(hashIndex, hashIndex + 4 * (stop - s)), 4 * s);
          s = stop;
        }
        releaseBatch();
        const xxKey = new Int32Array(2 * n);
        const mmKey = new Int32Array(4 * n);
        for (let i = 0; i < n; i++) {
          xxh64Key(funnel, keys[i]!);
          xxKey.set(xxViews.hash, 2 * i);
          hashKey(funnel, keys[i]!);
          mmKey.set(views.hash, 4 * i);
        }
        expectSameArray(xx, xxKey, 'XXH64');
        expectSameArray(mm, mmKey, 'MurmurHash3');
        const k = 7;
        const mod = new Modulus(1_000_064);
        // Key j's probes: its k words, then its k masks.
        const probes = new Int32Array(2 * k * n);
        for (let s = 0; s < n; ) {
          const stop = mitz64Batch(batch, s, n, k, mod);
          probes.set(
            batchScratch!.i32.subarray(probeIndex, probeIndex + 2 * k * (stop - s)),
            2 * k * s,
          );
          s = stop;
        }
        releaseBatch();
        const perKey = new Int32Array(2 * k * n);
        for (let i = 0; i < n; i++) {
          mitz64Probes(funnel, keys[i]!, k, mod);
          perKey.set(views.words.subarray(0, k), 2 * k * i);
          perKey.set(views.masks.subarray(0, k), 2 * k * i + k);
        }
        expectSameArray(probes, perKey, 'MITZ_64 probes');
        expect(scratchBytes()).toBeLessThanOrEqual(1 << 20);
      });
    }
  }
});

describe('BloomKernel.batch', () => {
  it('answers and sets exactly as the per-key kernel calls, across chunks and an oversized key', () => {
    const keys = mixedStrings(5000, 11);
    keys.push('é'.repeat(60_000)); // longer than a kernel's key area: the caller's per-key path
    keys.push('after');
    const batch = packAll('string', keys);
    const bits = 1 << 20;
    const mod = new Modulus(bits);
    const k = 5;
    const a = BloomKernel.create(bits)!;
    const b = BloomKernel.create(bits)!;
    const n = keys.length;
    const half = n >> 1;
    // Add the first half: batch into a, per key into b.
    const added = new Uint8Array(n);
    let s = 0;
    const skipped: number[] = [];
    while (s < half) {
      const stop = a.batch(batch, s, half, k, mod, true, added);
      if (stop === s) {
        skipped.push(s);
        s++;
      } else s = stop;
    }
    expect(skipped).toEqual([]);
    const addedPerKey = new Uint8Array(n);
    for (let i = 0; i < half; i++) addedPerKey[i] = b.add('string', keys[i]!, k, mod);
    expectSameArray(added, addedPerKey, 'added');
    expectSameArray(a.data, b.data, 'bits');
    // Query everything.
    const found = new Uint8Array(n);
    s = 0;
    while (s < n) {
      const stop = a.batch(batch, s, n, k, mod, false, found);
      if (stop === s) {
        skipped.push(s);
        found[s] = a.has('string', keys[s]!, k, mod) === -1 ? 2 : 0;
        s++;
      } else s = stop;
    }
    expect(skipped).toEqual([n - 2]);
    const foundPerKey = new Uint8Array(n);
    for (let i = 0; i < n; i++)
      foundPerKey[i] = i === n - 2 ? 2 : b.has('string', keys[i]!, k, mod);
    expectSameArray(found, foundPerKey, 'found');
    expect(found.subarray(half, n - 2).some((v) => v === 0)).toBe(true);
  });
});

/** The same keys with `\r\n` between them, as `splitRecords` views a file: offsets and ends. */
function withSeparators(p: { bytes: Uint8Array; offsets: Uint32Array }) {
  const n = p.offsets.length - 1;
  const bytes = new Uint8Array(p.bytes.length + 2 * n);
  const offsets = new Uint32Array(n + 1);
  const ends = new Uint32Array(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = at;
    bytes.set(p.bytes.subarray(p.offsets[i]!, p.offsets[i + 1]!), at);
    at += p.offsets[i + 1]! - p.offsets[i]!;
    ends[i] = at;
    bytes[at++] = 0x0d;
    bytes[at++] = 0x0a;
  }
  offsets[n] = at;
  return { bytes, offsets, ends };
}

describe('packed keys with separators between them (ends)', () => {
  for (const wasm of [true, false]) {
    it(`hash as the contiguous batch does (${wasm ? 'WebAssembly' : 'JavaScript'})`, () => {
      useWasm(wasm);
      const plain = packAll('string', mixedStrings(1500, 3));
      const split = withSeparators(plain);
      const n = plain.offsets.length - 1;
      const collect = (batch: typeof plain, xx: boolean) => {
        const out = new Int32Array((xx ? 2 : 4) * n);
        for (let s = 0; s < n; ) {
          const stop = xx ? xxh64Batch(batch, s, n) : murmur3Batch(batch, s, n);
          const w = xx ? 2 : 4;
          out.set(batchScratch!.i32.subarray(hashIndex, hashIndex + w * (stop - s)), w * s);
          s = stop;
        }
        return out;
      };
      expectSameArray(collect(split, true), collect(plain, true), 'XXH64');
      expectSameArray(collect(split, false), collect(plain, false), 'MurmurHash3');
      releaseBatch();
      if (!wasm) return;
      const mod = new Modulus(1 << 16);
      const a = BloomKernel.create(1 << 16)!;
      const b = BloomKernel.create(1 << 16)!;
      const ra = new Uint8Array(n);
      const rb = new Uint8Array(n);
      for (let s = 0; s < n; ) s = a.batch(split, s, n, 3, mod, true, ra);
      for (let s = 0; s < n; ) s = b.batch(plain, s, n, 3, mod, true, rb);
      expectSameArray(ra, rb, 'added');
      expectSameArray(a.data, b.data, 'bits');
    });
  }
});
