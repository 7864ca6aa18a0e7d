/**
 * Seeded fuzzing of every reader of stored bytes: flip bytes, truncate, splice garbage, forge
 * fields behind a recomputed checksum. The property: a reader either throws FormatError, or (for
 * forgeries that pass every check) returns a filter without any other kind of failure; damaged
 * bytes are never accepted as a filter that silently answers wrong.
 */

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSidecar, encodeSidecarPrefix } from '../src/node/sidecar.js';
import {
  BloomFilter,
  ChunkedBloomFilter,
  crc32c,
  FormatError,
  type MembershipFilter,
} from '../src/node.js';
import { decodeAny, loadAny } from './support/any-filter.js';
import { mulberry32 } from './support/random.js';

const PROBES = Array.from({ length: 300 }, (_, i) => `probe-${i}`);

function originals(): BloomFilter[] {
  const make = (o: Parameters<typeof BloomFilter.create>[0], n: number) => {
    const f = BloomFilter.create(o);
    for (let i = 0; i < n; i++) f.add(`probe-${i}`);
    return f;
  };
  return [
    make({ capacity: 10, fpp: 0.1 }, 10),
    make({ capacity: 1000, fpp: 0.01 }, 150),
    make({ capacity: 500, fpp: 0.001, strategy: 'MURMUR128_MITZ_32' }, 150),
  ];
}

/** Decodes; returns the filter, or null for a FormatError; rethrows anything else. */
function tryDecode(bytes: Uint8Array): MembershipFilter | null {
  try {
    return decodeAny(bytes);
  } catch (error) {
    if (error instanceof FormatError) return null;
    throw error;
  }
}

function sameAnswers(a: MembershipFilter, b: MembershipFilter): boolean {
  return PROBES.every((k) => a.has(k) === b.has(k));
}

describe('fuzzing the native format', () => {
  it('flipped bytes are always rejected (3,000 seeded mutations)', () => {
    const random = mulberry32(0xb100f);
    let rejected = 0;
    let accepted = 0;
    for (const original of originals()) {
      const good = original.toBytes();
      for (let round = 0; round < 1000; round++) {
        const bad = good.slice();
        const flips = 1 + Math.floor(random() * 4);
        for (let f = 0; f < flips; f++) {
          const at = Math.floor(random() * bad.length);
          bad[at]! ^= 1 + Math.floor(random() * 255);
        }
        const decoded = tryDecode(bad);
        if (decoded === null) rejected++;
        else {
          accepted++;
          // Only acceptable if the flips cancelled out exactly; then the answers are the same.
          expect(sameAnswers(decoded, original)).toBe(true);
        }
      }
    }
    expect(rejected).toBeGreaterThan(2990);
    expect(accepted).toBeLessThan(10);
  });

  it('truncation at every offset is rejected, and so is trailing garbage', () => {
    const random = mulberry32(7);
    for (const original of originals()) {
      const good = original.toBytes();
      for (let n = 0; n < good.length; n++) {
        expect(tryDecode(good.subarray(0, n)), `length ${n}`).toBeNull();
      }
      for (let round = 0; round < 50; round++) {
        const extra = new Uint8Array(1 + Math.floor(random() * 40));
        for (let i = 0; i < extra.length; i++) extra[i] = Math.floor(random() * 256);
        const longer = new Uint8Array(good.length + extra.length);
        longer.set(good);
        longer.set(extra, good.length);
        expect(tryDecode(longer)).toBeNull();
      }
    }
  });

  it('random garbage, with or without a valid magic, is rejected', () => {
    const random = mulberry32(99);
    for (let round = 0; round < 2000; round++) {
      const bytes = new Uint8Array(Math.floor(random() * 200));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
      if (round % 2 === 0 && bytes.length >= 8) bytes.set([0x42, 0x4c, 0x4d, 0x4b, 1, 0, 1], 0);
      expect(tryDecode(bytes)).toBeNull();
    }
  });

  it('forged header and parameter fields behind a fixed CRC: only k, strategy and funnel pass', () => {
    // A CRC guards against damage, not forgery: a forger who fixes it can change k, the strategy
    // or the funnel (well-formed filters that answer differently). Every other field is checked
    // against the bytes: a forged length or size is a FormatError, before any allocation.
    const passed = new Set<number>();
    for (const original of originals()) {
      const good = original.toBytes();
      // Every value of every header and parameter byte: 3 × 40 × 255 forgeries.
      for (let at = 0; at < 40; at++) {
        for (let value = 0; value < 256; value++) {
          if (value === good[at]) continue;
          const bad = good.slice();
          bad[at] = value;
          const body = bad.length - 4;
          new DataView(bad.buffer).setUint32(body, crc32c(bad.subarray(0, body)), true);
          if (tryDecode(bad) !== null) passed.add(at);
        }
      }
    }
    expect([...passed].sort((a, b) => a - b)).toEqual([7, 8, 32]);
  });

  it('the streaming reader rejects exactly what fromBytes rejects', async () => {
    const random = mulberry32(31337);
    const good = originals()[1]!.toBytes();
    for (let round = 0; round < 300; round++) {
      const bad = good.slice();
      if (round % 3 === 0) {
        const cut = Math.floor(random() * bad.length);
        const chunks = [bad.subarray(0, cut >> 1), bad.subarray(cut >> 1, cut)];
        await expect(loadAny(Readable.from(chunks))).rejects.toThrow(FormatError);
        continue;
      }
      bad[Math.floor(random() * bad.length)]! ^= 1 + Math.floor(random() * 255);
      const sizes = [1, 7, 64, 4096][round % 4]!;
      const chunks: Uint8Array[] = [];
      for (let p = 0; p < bad.length; p += sizes) chunks.push(bad.subarray(p, p + sizes));
      await expect(loadAny(Readable.from(chunks))).rejects.toThrow(FormatError);
    }
  });
});

describe('fuzzing sidecar and chunked files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bloomkit-fuzz-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a sidecar with any flipped byte or any truncation is rejected', () => {
    const f = BloomFilter.create({ capacity: 50, fpp: 0.01 });
    for (let i = 0; i < 50; i++) f.add(`v${i}`);
    const prefix = encodeSidecarPrefix({
      source: 'x.csv',
      size: 1,
      mtimeMs: 2,
      format: 'csv',
      field: 'id',
      header: true,
      bloom: 'row',
      family: '',
      qualifiers: null,
      records: 50,
      keys: 50,
      fpp: 0.01,
    });
    const good = new Uint8Array(prefix.length + f.toBytes().length);
    good.set(prefix);
    good.set(f.toBytes(), prefix.length);
    expect(decodeSidecar(good).filter.has('v1')).toBe(true);
    const random = mulberry32(5);
    for (let at = 0; at < good.length; at++) {
      const bad = good.slice();
      bad[at]! ^= 1 + Math.floor(random() * 255);
      expect(() => decodeSidecar(bad), `byte ${at}`).toThrow(FormatError);
      expect(() => decodeSidecar(good.subarray(0, at)), `length ${at}`).toThrow(FormatError);
    }
  });

  it('a chunked file with a flipped byte fails open() or verify(), never answers', async () => {
    const path = join(dir, 'good.blmk');
    const keys = Array.from({ length: 600 }, (_, i) => `c${i}`);
    await ChunkedBloomFilter.build(path, keys, { capacity: 600, fpp: 0.01, chunkBytes: 128 });
    const good = new Uint8Array(await readFile(path));
    const random = mulberry32(77);
    const bad = join(dir, 'bad.blmk');
    const offsets = new Set<number>();
    for (let i = 0; i < 88; i++) offsets.add(i); // every header and parameter byte
    while (offsets.size < 400) offsets.add(Math.floor(random() * good.length));
    for (const at of offsets) {
      const bytes = good.slice();
      bytes[at]! ^= 1 + Math.floor(random() * 255);
      await writeFile(bad, bytes);
      let failed = false;
      try {
        const f = await ChunkedBloomFilter.open(bad, { cacheBytes: 0 });
        try {
          await f.verify();
        } finally {
          await f.close();
        }
      } catch (error) {
        expect(error, `byte ${at}`).toBeInstanceOf(FormatError);
        failed = true;
      }
      expect(failed, `byte ${at} was not detected`).toBe(true);
    }
    for (let n = 0; n < good.length; n += 1 + Math.floor(random() * 40)) {
      await writeFile(bad, good.subarray(0, n));
      await expect(ChunkedBloomFilter.open(bad), `length ${n}`).rejects.toThrow(FormatError);
    }
  });
});
