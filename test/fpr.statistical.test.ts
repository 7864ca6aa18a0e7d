/**
 * Seeded statistical test of the false positive rate (fastbloom's `target_fp_is_accurate`, with a
 * real tolerance).
 *
 * For fpp from 1e-1 to 1e-4 and n up to 10^6, a filter sized by `BloomFilter.create` is filled
 * with n distinct keys and probed with 5·10^5 to 4·10^6 distinct keys that were never added. The
 * number of false positives is Binomial(P, p) with p = falsePositiveRate(n, m, k) for the
 * filter's actual m and k (Bloom's (1 − e^(−kn/m))^k; for these m the exact rate differs from it
 * by far less than the noise). The measured rate must lie within 4 standard deviations of p:
 * a test that fails about once in 16,000 runs if the filter is right, and every time if the rate
 * is off by more than the band, 4/√(P·p) relative: ±1.8% at p = 1e-1 (5·10^5 probes), ±4% at 1e-2
 * (10^6), ±9% at 1e-3 (2·10^6), ±20% at 1e-4 (4·10^6); the rate of a broken index derivation
 * (correlated probes, a wrong modulus) is off by far more. Each case's band is in its title.
 * Every case goes through the batch paths (`addBatch`, `hasBatch`; their answers are `add`'s and
 * `has`'s for every funnel and strategy: test/batch.test.ts): every key written straight into
 * one reused chunk buffer, 65,536 keys at a time, without a string, number or array per key
 * (key by key, hashing a number or 16 bytes cost a call into WebAssembly per key, most of this
 * file's time; packing arrays of numbers, a third of what was left; a new buffer per chunk and
 * the string keys made by a general sequence packer, about a fifth of the rest). Each key set's
 * packing is checked against `packKeys` of the keys themselves on its first chunk.
 * The keys are fixed (sequences and a seeded generator), so the outcome is deterministic.
 *
 * Every inserted key is checked too: a single false negative fails the test.
 */
import { describe, expect, it } from 'vitest';
import {
  BloomFilter,
  type Funnel,
  falsePositiveRate,
  type Key,
  type PackedKeys,
  packKeys,
  type StrategyName,
} from '../src/index.js';
import { expectBytes } from './support/bytes.js';
import { countFound } from './support/packed-keys.js';

/** The i-th inserted (present) or probed (absent) key; present and absent sets are disjoint. */
type KeyMaker = (i: number, present: boolean) => Key;

/** int: a bijective scramble of 0..2^32 − 1; present keys are i < n, absent ones n ≤ i < n + P. */
const intKey = (n: number): KeyMaker => {
  return (i, present) => Math.imul((present ? i : n + i) >>> 0, 0x9e3779b1) | 0;
};

/**
 * long: i·300,000,007 − 2^51 (distinct safe integers; negative at every index used here, where
 * i < n + P ≤ 5·10^6, with both 32-bit halves varying).
 */
const longKey = (n: number): KeyMaker => {
  return (i, present) => (present ? i : n + i) * 300_000_007 - 2 ** 51;
};

/** The prefixes of stringKey's present and absent keys (ASCII), which keep the sets disjoint. */
const ITEM = 'https://example.com/item/';
const MISSING = 'https://example.com/missing/';

/** string: URL-like keys, a prefix and i in decimal. */
const stringKey: KeyMaker = (i, present) => `${present ? ITEM : MISSING}${i}`;

/** Writes bytesKey(i, present) into `b` at `at`. */
function writeBytesKey(i: number, present: boolean, b: Uint8Array, at: number): void {
  let x = (i + 1) * 0x9e3779b1;
  for (let j = 0; j < 15; j++) {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + j;
    b[at + j] = x >>> 24;
  }
  b[at + 15] = present ? 1 : 2;
  // Make the key unique in i: write i into bytes 8..11.
  b[at + 8] = i & 0xff;
  b[at + 9] = (i >>> 8) & 0xff;
  b[at + 10] = (i >>> 16) & 0xff;
  b[at + 11] = i >>> 24;
}

/** bytes: 16 seeded bytes with a tag byte that separates the sets. */
const bytesKey: KeyMaker = (i, present) => {
  const b = new Uint8Array(16);
  writeBytesKey(i, present, b, 0);
  return b;
};

interface Case {
  fpp: number;
  n: number;
  funnel: Funnel;
  probes: number;
  strategy?: StrategyName;
  key: (n: number) => KeyMaker;
}

const CASES: Case[] = [
  { fpp: 1e-1, n: 1_000_000, funnel: 'int', probes: 500_000, key: intKey },
  { fpp: 1e-2, n: 1_000_000, funnel: 'long', probes: 1_000_000, key: longKey },
  { fpp: 1e-3, n: 1_000_000, funnel: 'int', probes: 2_000_000, key: intKey },
  { fpp: 1e-4, n: 1_000_000, funnel: 'long', probes: 4_000_000, key: longKey },
  {
    fpp: 1e-2,
    n: 300_000,
    funnel: 'string',
    probes: 1_000_000,
    key: () => stringKey,
  },
  {
    fpp: 1e-4,
    n: 100_000,
    funnel: 'string',
    probes: 2_000_000,
    key: () => stringKey,
  },
  { fpp: 1e-3, n: 200_000, funnel: 'bytes', probes: 1_000_000, key: () => bytesKey },
  {
    fpp: 1e-2,
    n: 200_000,
    funnel: 'int',
    probes: 1_000_000,
    strategy: 'MURMUR128_MITZ_32',
    key: intKey,
  },
];

/** Keys per packed chunk. */
const CHUNK = 1 << 16;

/**
 * One chunk's key bytes, reused for every chunk (the filters read a batch during the call only):
 * room for CHUNK keys of up to 48 bytes (stringKey's are at most 35).
 */
const chunkBytes = new Uint8Array(CHUNK * 48);
const chunkInts = new Int32Array(chunkBytes.buffer);
const chunkWords = new Uint32Array(chunkBytes.buffer);
/** The offsets of a chunk of string keys, rewritten for each chunk. */
const stringOffsets = new Uint32Array(CHUNK + 1);
/** hasBatch's answers for one chunk, reused. */
const chunkFound = new Uint8Array(CHUNK);
/** The offsets of a chunk of keys of each fixed width (4, 8, 16 bytes): the same every chunk. */
const fixedOffsets = new Map<number, Uint32Array>();

function offsetsFor(width: number): Uint32Array {
  let offsets = fixedOffsets.get(width);
  if (offsets === undefined) {
    offsets = new Uint32Array(CHUNK + 1);
    for (let j = 0; j <= CHUNK; j++) offsets[j] = j * width;
    fixedOffsets.set(width, offsets);
  }
  return offsets;
}

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const PREFIXES = { item: ascii(ITEM), missing: ascii(MISSING) };

/** Writes stringKey(i, present)'s UTF-8 bytes (an ASCII prefix, i in decimal) at `p`; the end. */
function writeStringKey(i: number, present: boolean, b: Uint8Array, p: number): number {
  const prefix = present ? PREFIXES.item : PREFIXES.missing;
  b.set(prefix, p);
  const at = p + prefix.length;
  let end = at + 1;
  for (let v = i; v >= 10; v = (v / 10) | 0) end++;
  for (let j = end - 1, v = i; j >= at; j--) {
    const q = (v / 10) | 0;
    b[j] = 48 + v - 10 * q;
    v = q;
  }
  return end;
}

/**
 * Keys [from, from + count) (count ≤ CHUNK) packed straight into the chunk buffer instead of
 * through an array of keys, one loop per funnel: an 'int' or 'long' KeyMaker's numbers as those
 * funnels encode them (4 or 8 bytes, little-endian two's complement; a long as hi·2^32 + lo, lo
 * in [0, 2^32)), bytesKey's 16 bytes, or stringKey's UTF-8 (no string made per key). A platform
 * whose typed arrays are not little-endian fails the check against `packKeys` in eachChunk.
 */
function packDirect(
  funnel: 'int' | 'long' | 'bytes' | 'string',
  key: KeyMaker,
  from: number,
  count: number,
  present: boolean,
): PackedKeys {
  if (funnel === 'string') {
    let p = 0;
    for (let j = 0; j < count; j++) {
      p = writeStringKey(from + j, present, chunkBytes, p);
      stringOffsets[j + 1] = p;
    }
    return { bytes: chunkBytes.subarray(0, p), offsets: stringOffsets.subarray(0, count + 1) };
  }
  const width = funnel === 'int' ? 4 : funnel === 'long' ? 8 : 16;
  if (funnel === 'int') {
    for (let j = 0; j < count; j++) chunkInts[j] = key(from + j, present) as number;
  } else if (funnel === 'long') {
    for (let j = 0; j < count; j++) {
      const v = key(from + j, present) as number;
      const hi = Math.floor(v / 2 ** 32);
      chunkWords[2 * j] = v - hi * 2 ** 32;
      chunkInts[2 * j + 1] = hi;
    }
  } else {
    for (let j = 0; j < count; j++) writeBytesKey(from + j, present, chunkBytes, j * 16);
  }
  return {
    bytes: chunkBytes.subarray(0, count * width),
    offsets: offsetsFor(width).subarray(0, count + 1),
  };
}

/**
 * Calls `use` on the keys `key(0, present)` … `key(count − 1, present)`, packed for `funnel`
 * CHUNK at a time (each chunk valid during the call only) by {@link packDirect}; with `verify`,
 * its first chunk is checked against `packKeys` of the same keys, byte for byte.
 */
function eachChunk(
  funnel: Funnel,
  key: KeyMaker,
  count: number,
  present: boolean,
  verify: boolean,
  use: (keys: PackedKeys) => void,
): void {
  for (let from = 0; from < count; from += CHUNK) {
    const size = Math.min(CHUNK, count - from);
    const list = () => Array.from({ length: size }, (_, j) => key(from + j, present));
    if (funnel !== 'int' && funnel !== 'long' && funnel !== 'bytes' && funnel !== 'string') {
      use(packKeys(funnel, list()));
      continue;
    }
    const packed = packDirect(funnel, key, from, size, present);
    if (verify && from === 0) {
      const reference = packKeys(funnel, list());
      const offsets = (p: PackedKeys) =>
        new Uint8Array(p.offsets.buffer, p.offsets.byteOffset, 4 * (size + 1));
      expectBytes(packed.bytes, reference.bytes, `${funnel} keys packed`);
      expectBytes(offsets(packed), offsets(reference), `${funnel} offsets`);
    }
    use(packed);
  }
}

/** How many of the chunk's keys `f` holds (hasBatch into the reused answer buffer). */
function foundIn(
  f: { hasBatch(keys: PackedKeys, out: Uint8Array): Uint8Array },
  keys: PackedKeys,
): number {
  return countFound(f.hasBatch(keys, chunkFound.subarray(0, keys.offsets.length - 1)));
}

describe('measured false positive rate lies within 4 sigma of (1 − e^(−kn/m))^k', () => {
  it.each(
    CASES.map(
      (c) =>
        [
          c.fpp,
          c.n,
          c.funnel,
          c.strategy ?? 'MURMUR128_MITZ_64',
          `±${((400 / Math.sqrt(c.probes * c.fpp)) | 0) + 1}%`,
          c,
        ] as const,
    ),
  )('fpp %d, n = %d, %s keys, %s: the rate within %s', (fpp, n, funnel, strategy, _band, c) => {
    const f = BloomFilter.create({ capacity: n, fpp, funnel, strategy });
    const key = c.key(n);
    let falseNegatives = 0;
    let positives = 0;
    // Each key set's packing is checked once, on its first pass.
    eachChunk(funnel, key, n, true, true, (keys) => f.addBatch(keys));
    eachChunk(funnel, key, n, true, false, (keys) => {
      falseNegatives += keys.offsets.length - 1 - foundIn(f, keys);
    });
    eachChunk(funnel, key, c.probes, false, true, (keys) => {
      positives += foundIn(f, keys);
    });
    expect(falseNegatives).toBe(0);

    const measured = positives / c.probes;
    const p = falsePositiveRate(n, f.bitSize, f.hashes);
    const sigma = Math.sqrt((p * (1 - p)) / c.probes);
    const deviation = (measured - p) / sigma;
    expect(
      Math.abs(deviation),
      `measured ${measured} (${positives}/${c.probes}) vs formula ${p}: ${deviation.toFixed(2)} sigma`,
    ).toBeLessThanOrEqual(4);
    // The sizing delivers the requested rate: the formula at the real m, k is close to fpp.
    expect(p).toBeLessThan(fpp * 1.1);
    expect(p).toBeGreaterThan(fpp * 0.8);
    // And the bit-count estimate agrees with the formula too (it is what users can observe).
    expect(Math.abs(f.expectedFpp() - p) / p).toBeLessThan(0.05);
  });
});
