/**
 * The native container and the classic filter's codec: exact layout, zero-copy decoding, and
 * rejection of every kind of bad input with a FormatError that says what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { containerParts, encodeContainer, HEADER_BYTES } from '../src/formats/native.js';
import {
  BloomFilter,
  CountingBloomFilter,
  crc32c,
  FILTER_TYPES,
  FormatError,
  fromBytes,
  HASH_SCHEMES,
} from '../src/index.js';

function sample(n = 500): BloomFilter {
  const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
  for (let i = 0; i < n; i++) f.add(`key-${i}`);
  return f;
}

/** Rewrites the trailing CRC so that a forged field reaches the semantic checks. */
function fixCrc(bytes: Uint8Array): Uint8Array {
  const body = bytes.length - 4;
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(
    body,
    crc32c(bytes.subarray(0, body)),
    true,
  );
  return bytes;
}

function forge(edit: (v: DataView, b: Uint8Array) => void, base = sample().toBytes()): Uint8Array {
  const b = base.slice();
  edit(new DataView(b.buffer), b);
  return fixCrc(b);
}

function rejects(bytes: Uint8Array, message: RegExp): void {
  expect(() => fromBytes(bytes)).toThrow(FormatError);
  expect(() => fromBytes(bytes)).toThrow(message);
}

describe('native container layout', () => {
  it('writes the header byte by byte as docs/FORMAT.md says', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    const b = f.toBytes();
    const v = new DataView(b.buffer);
    expect(Array.from(b.subarray(0, 4))).toEqual([0x42, 0x4c, 0x4d, 0x4b]); // "BLMK"
    expect(v.getUint16(4, true)).toBe(1); // version
    expect(b[6]).toBe(FILTER_TYPES.bloom);
    expect(b[7]).toBe(HASH_SCHEMES.murmur128Mitz64);
    expect(b[8]).toBe(1); // funnel 'string'
    expect(b[9]).toBe(0); // flags
    expect(v.getUint16(10, true)).toBe(16); // P
    expect(v.getUint32(12, true)).toBe(0);
    expect(v.getUint32(16, true) + v.getUint32(20, true) * 2 ** 32).toBe(9600 / 8); // L
    expect(v.getUint32(24, true)).toBe(9600); // m (low word)
    expect(v.getUint32(28, true)).toBe(0); // m (high word)
    expect(v.getUint32(32, true)).toBe(7); // k
    expect(v.getUint32(36, true)).toBe(0);
    expect(b.length).toBe(24 + 16 + 1200 + 4);
    expect(v.getUint32(b.length - 4, true)).toBe(crc32c(b.subarray(0, b.length - 4)));
  });

  it('puts bit i at byte 40 + (i >>> 3), mask 1 << (i & 7)', () => {
    const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
    f.add('a'); // Guava MITZ_64 positions for "a" (REFERENCE.md §1.6)
    const b = f.toBytes();
    for (const i of [6793, 6883, 8765, 1047, 2929, 4811, 4901]) {
      expect(b[40 + (i >>> 3)]! & (1 << (i & 7))).not.toBe(0);
    }
    let set = 0;
    for (const byte of b.subarray(40, 40 + 1200))
      for (let j = 0; j < 8; j++) set += (byte >> j) & 1;
    expect(set).toBe(7);
  });

  it('containerParts gives the same bytes as encodeContainer, without copying the payload', () => {
    const payload = [new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), new Uint8Array(8).fill(9)];
    const params = new Uint8Array(16).fill(4);
    const whole = encodeContainer(1, 1, 1, params, payload);
    const parts = containerParts(1, 1, 1, params, payload);
    expect(parts.payload[0]).toBe(payload[0]);
    expect(parts.size).toBe(whole.length);
    const joined = new Uint8Array(parts.size);
    joined.set(parts.head);
    joined.set(payload[0]!, parts.head.length);
    joined.set(payload[1]!, parts.head.length + 8);
    joined.set(whole.subarray(whole.length - 4), parts.size - 4);
    expect(joined).toEqual(whole);
    expect(parts.head.length).toBe(HEADER_BYTES + 16);
  });
});

describe('round trips', () => {
  it('fromBytes(toBytes(f)) equals f for every shape, strategy and funnel', () => {
    const cases: BloomFilter[] = [
      sample(),
      BloomFilter.create({ capacity: 10, fpp: 0.5 }),
      BloomFilter.create({ capacity: 1000, fpp: 0.01, strategy: 'MURMUR128_MITZ_32' }),
      BloomFilter.create({ capacity: 1000, fpp: 0.001, funnel: 'int' }),
      BloomFilter.create({ capacity: 1000, fpp: 0.001, funnel: 'bytes', shared: true }),
    ];
    for (const f of cases) {
      const g = fromBytes(f.toBytes());
      expect(g).toBeInstanceOf(BloomFilter);
      expect((g as BloomFilter).equals(f)).toBe(true);
      expect((g as BloomFilter).bitCount).toBe(f.bitCount);
    }
  });

  it('copies by default, so the filter survives changes to the bytes', () => {
    const f = sample();
    const bytes = f.toBytes();
    const g = BloomFilter.fromBytes(bytes);
    bytes.fill(0, 40, 1240);
    expect(g.equals(f)).toBe(true);
  });

  it('with { copy: false } views an aligned payload instead of copying it', () => {
    const f = sample();
    const bytes = f.toBytes();
    const g = BloomFilter.fromBytes(bytes, { copy: false });
    expect(g.equals(f)).toBe(true);
    expect(g.bits.data.buffer).toBe(bytes.buffer);
    expect(g.bits.data.byteOffset).toBe(40);
    expect(g.bitCount).toBe(f.bitCount);
    const before = bytes.slice(40, 1240);
    expect(g.add('new key')).toBe(true);
    expect(bytes.subarray(40, 1240)).not.toEqual(before); // the filter writes into `bytes`
    // The top-level fromBytes passes the option on.
    const h = fromBytes(f.toBytes(), { copy: false }) as BloomFilter;
    expect(h.equals(f)).toBe(true);
  });

  it('with { copy: false } still copies a payload that is not 4-byte aligned', () => {
    const f = sample();
    const raw = f.toBytes();
    const shifted = new Uint8Array(raw.length + 1);
    shifted.set(raw, 1);
    const g = BloomFilter.fromBytes(shifted.subarray(1), { copy: false });
    expect(g.equals(f)).toBe(true);
    expect(g.bits.data.buffer === shifted.buffer).toBe(false);
  });

  it('with { copy: false } still verifies the checksum', () => {
    const b = sample().toBytes();
    b[100]! ^= 1;
    expect(() => BloomFilter.fromBytes(b, { copy: false })).toThrow(/checksum mismatch/);
  });
});

describe('rejecting bad bytes', () => {
  it('wrong magic', () => {
    rejects(
      forge((_, b) => b.set([0x42, 0x4c, 0x4d, 0x4c], 0)),
      /magic is 42 4c 4d 4c, expected/,
    );
    rejects(new TextEncoder().encode('{"bits":[1,2,3],"k":3,"pad":"............."}'), /magic/);
  });

  it('unknown version, type, hash scheme and funnel; flags and reserved bytes', () => {
    rejects(
      forge((v) => v.setUint16(4, 2, true)),
      /unsupported bloomkit format version 2/,
    );
    rejects(
      forge((v) => v.setUint16(4, 0, true)),
      /version 0/,
    );
    rejects(
      forge((v) => v.setUint8(6, 200)),
      /unknown filter type id 200/,
    );
    rejects(
      forge((v) => v.setUint8(6, 0)),
      /unknown filter type id 0/,
    );
    rejects(
      forge((v) => v.setUint8(7, 2)),
      /unknown hash scheme id 2/,
    );
    rejects(
      forge((v) => v.setUint8(8, 5)),
      /unknown funnel id 5/,
    );
    rejects(
      forge((v) => v.setUint8(9, 0x80)),
      /unknown flags 0x80/,
    );
    rejects(
      forge((v) => v.setUint8(13, 1)),
      /reserved header bytes/,
    );
    rejects(
      forge((v) => v.setUint32(36, 1, true)),
      /reserved bloom parameter bytes/,
    );
  });

  it('a bad checksum, wherever the damage is', () => {
    const good = sample().toBytes();
    for (const at of [0, 6, 10, 16, 24, 32, 40, 700, good.length - 5, good.length - 1]) {
      const b = good.slice();
      b[at]! ^= 0x10;
      expect(() => fromBytes(b), `byte ${at}`).toThrow(FormatError);
    }
    const b = good.slice();
    b[600]! ^= 0xff;
    rejects(b, /checksum mismatch: stored CRC-32C 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}/);
  });

  it('truncation at every header and parameter offset, and inside the payload', () => {
    const good = sample().toBytes();
    for (let n = 0; n < 40; n++) {
      expect(() => fromBytes(good.subarray(0, n)), `length ${n}`).toThrow(FormatError);
    }
    rejects(good.subarray(0, 10), /shorter than the 24-byte header/);
    for (const n of [40, 41, 500, 1239, 1240, 1243]) {
      rejects(good.subarray(0, n), /truncated: the header announces 1244 bytes, got/);
    }
  });

  it('a length field that does not match the bytes', () => {
    const good = sample().toBytes();
    const longer = new Uint8Array(good.length + 8);
    longer.set(good);
    rejects(longer, /length mismatch: the header announces 1244 bytes, got 1252/);
    // L one word too small: the sizes disagree with the bytes given.
    rejects(
      forge((v) => v.setUint32(16, 1192, true)),
      /length mismatch/,
    );
    // L consistent with the bytes, but not with m.
    const params = new Uint8Array(16);
    new DataView(params.buffer).setUint32(0, 9600, true);
    new DataView(params.buffer).setUint32(8, 7, true);
    rejects(
      encodeContainer(1, 1, 1, params, [new Uint8Array(1192)]),
      /payload has 1192 bytes, a 9600-bit filter needs 1200/,
    );
    // Parameters of the wrong size for the type.
    rejects(
      encodeContainer(1, 1, 1, new Uint8Array(24), [new Uint8Array(8)]),
      /params must be 16 bytes, got 24/,
    );
    rejects(
      forge((v) => v.setUint16(10, 12, true)),
      /bad params length 12/,
    );
    rejects(
      forge((v) => v.setUint16(10, 8192, true)),
      /bad params length 8192/,
    );
  });

  it('absurd parameters, without allocating for a forged length', () => {
    const before = process.memoryUsage().arrayBuffers;
    // A forged 2^50-byte payload: refused from the header alone, nothing is allocated.
    rejects(
      forge((v) => v.setUint32(20, 2 ** 18, true)),
      /truncated: the header announces 1125899906843868 bytes, got 1244/,
    );
    // A payload length beyond 2^53.
    rejects(
      forge((v) => v.setUint32(20, 2 ** 21, true)),
      /payload length is absurd/,
    );
    // m beyond 2^36, with L = m/8 consistent: the lengths disagree with the bytes first.
    const params = new Uint8Array(16);
    const pv = new DataView(params.buffer);
    pv.setUint32(4, 2 ** 14, true); // m = 2^46
    pv.setUint32(8, 7, true);
    rejects(encodeContainer(1, 1, 1, params, [new Uint8Array(64)]), /bad bit size 70368744177664/);
    pv.setUint32(4, 0, true);
    pv.setUint32(0, 100, true); // not a multiple of 64
    rejects(encodeContainer(1, 1, 1, params, [new Uint8Array(8)]), /bad bit size 100/);
    pv.setUint32(0, 0, true);
    rejects(encodeContainer(1, 1, 1, params, []), /bad bit size 0/);
    pv.setUint32(0, 64, true);
    pv.setUint32(8, 0, true);
    rejects(
      encodeContainer(1, 1, 1, params, [new Uint8Array(8)]),
      /bad number of hash functions 0/,
    );
    pv.setUint32(8, 256, true);
    rejects(
      encodeContainer(1, 1, 1, params, [new Uint8Array(8)]),
      /bad number of hash functions 256/,
    );
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 2 ** 20);
  });

  it('bytes of another type given to a type-specific reader, and a chunked file', () => {
    const counting = CountingBloomFilter.create({ capacity: 100, fpp: 0.01 }).toBytes();
    expect(() => BloomFilter.fromBytes(counting)).toThrow(
      /expected filter type id 1, the bytes hold type id 2/,
    );
    rejects(
      forge((v) => v.setUint8(6, FILTER_TYPES.chunked)),
      /chunked filter file.*ChunkedBloomFilter\.open/,
    );
  });

  it('something that is not bytes is a TypeError', () => {
    expect(() => fromBytes('BLMK' as never)).toThrow(TypeError);
    expect(() => fromBytes([1, 2, 3] as never)).toThrow(TypeError);
    expect(() => BloomFilter.fromBytes(null as never)).toThrow(TypeError);
  });

  it('FormatError is an exported Error subclass with its own name', () => {
    try {
      fromBytes(new Uint8Array(3));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(FormatError);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).name).toBe('FormatError');
    }
  });
});
