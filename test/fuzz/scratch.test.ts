/**
 * The shared hashing scratch memory grows for one oversized key and then shrinks back, so one huge
 * key (50 M characters used to pin 100 MiB) does not hold its size for the life of the process.
 */
import { describe, expect, it } from 'vitest';
import { hashKey, scratchBytes, useWasm, usingWasm, views } from '../../src/hash/hasher.js';
import { murmur3x64_128 } from '../../src/hash/murmur3.js';
import { BloomFilter } from '../../src/index.js';

describe('hashing scratch memory after an oversized key', () => {
  for (const wasm of [true, false]) {
    it(`shrinks back to at most 1 MiB (${wasm ? 'WebAssembly' : 'JavaScript'} hasher)`, () => {
      useWasm(wasm);
      try {
        expect(usingWasm()).toBe(wasm);
        const huge = 'é'.repeat(4_000_000); // 8 MB of UTF-8
        const filter = BloomFilter.create({ capacity: 100, fpp: 0.01 });
        filter.add(huge);
        expect(scratchBytes()).toBeLessThanOrEqual(1 << 20);
        expect(filter.has(huge)).toBe(true);
        // The results of the oversized call survive the shrink.
        hashKey('bytes', new Uint8Array(3_000_000).fill(7));
        const expected = murmur3x64_128(new Uint8Array(3_000_000).fill(7), 0);
        expect(scratchBytes()).toBeLessThanOrEqual(1 << 20);
        const h = views.hash;
        const h1 = (BigInt(h[1]! >>> 0) << 32n) | BigInt(h[0]! >>> 0);
        expect(h1).toBe(BigInt.asUintN(64, expected[0]));
      } finally {
        useWasm(true);
      }
    });
  }
});
