/**
 * DcsoBloomFilter without the `bloom` binary (test/dcso-interop.test.ts compares with the real
 * tool): the sizing of DCSO's `Initialize`, the positions against a BigInt transcription of the
 * Go `Fingerprint` (uint64 arithmetic that wraps), and the file reader refusing bytes that are
 * cut, foreign or absurd with a `FormatError` naming the field, never a filter that loses keys.
 */
import { describe, expect, it } from 'vitest';
import { dcsoPositions } from '../src/filters/dcso/hash.js';
import {
  DcsoBloomFilter,
  dcsoSize,
  detectFormat,
  FormatError,
  fromBytes,
  keyBytes,
} from '../src/index.js';
import { lcg } from './support/random.js';

/** DCSO's Go `Fingerprint`, transcribed with BigInt (uint64: products wrap at 2^64). */
function goFingerprint(bytes: Uint8Array, k: number, m: bigint): number[] {
  const P = 2n ** 64n - 59n;
  const G = 18446744073709550147n;
  const U64 = 2n ** 64n;
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h * 0x100000001b3n) % U64) ^ BigInt(b);
  h %= P;
  const out: number[] = [];
  for (let i = 0; i < k; i++) {
    h = ((h * G) % U64) % P;
    out.push(Number(h % m));
  }
  return out;
}

describe('DcsoBloomFilter', () => {
  it("sizes as DCSO's Initialize (what bloom show prints for -n 1000 -p 0.01: 9585 bits, k = 7)", () => {
    expect(dcsoSize(1000, 0.01)).toEqual({ bits: 9585, hashes: 7 });
    expect(dcsoSize(10, 0.3)).toEqual({ bits: 25, hashes: 2 });
    expect(() => dcsoSize(1000, 1.5)).toThrow(/fpp must be in \(0, 1\), got 1.5/);
    expect(() => dcsoSize(0, 0.01)).toThrow(RangeError);
  });

  it('computes the positions of the Go code, in 32-bit halves (random keys, sizes up to 2^36)', () => {
    const next = lcg(11);
    const out = new Float64Array(9);
    for (let t = 0; t < 3000; t++) {
      const bytes = new Uint8Array(next() % 50).map(() => next() & 255);
      const m = [1, 25, 9585, 2 ** 32 + 5, 2 ** 36, 1 + (next() % 1e9)][t % 6]!;
      dcsoPositions(bytes, m, out);
      expect(Array.from(out), `${bytes} m=${m}`).toEqual(goFingerprint(bytes, 9, BigInt(m)));
    }
    const f = DcsoBloomFilter.create({ capacity: 100, fpp: 0.01 });
    f.add('héllo 🙂');
    dcsoPositions(keyBytes('string', 'héllo 🙂'), f.bitSize, out.subarray(0, f.hashes));
    for (const p of out.subarray(0, f.hashes)) expect(f.bits.get(p)).toBe(true);
  });

  it('round-trips through its file and the native format, keeping N and the attached data', () => {
    const f = DcsoBloomFilter.create({ capacity: 500, fpp: 0.02 });
    for (let i = 0; i < 400; i++) f.add(`k${i}`);
    f.data = new TextEncoder().encode('owner: x\n');
    for (const g of [DcsoBloomFilter.fromDcso(f.toDcso()), fromBytes(f.toBytes())]) {
      const d = g as DcsoBloomFilter;
      expect(d.bits.data).toEqual(f.bits.data);
      expect([d.count, d.bitSize, d.hashes, d.capacity, d.fpp]).toEqual([
        f.count,
        f.bitSize,
        f.hashes,
        f.capacity,
        f.fpp,
      ]);
      expect(new TextDecoder().decode(d.data)).toBe('owner: x\n');
      for (let i = 0; i < 400; i++) expect(d.has(`k${i}`)).toBe(true);
    }
    expect(detectFormat(f.toDcso())).toBe('dcso');
  });

  it('refuses cut, foreign and absurd files with a FormatError naming what is wrong', () => {
    const f = DcsoBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    f.add('a');
    const good = f.toDcso();
    const with_ = (offset: number, write: (v: DataView) => void): Uint8Array => {
      const b = good.slice();
      write(new DataView(b.buffer, offset));
      return b;
    };
    const cases: [Uint8Array, RegExp][] = [
      [good.subarray(0, 47), /header needs 48 bytes, got 47/],
      [good.subarray(0, good.length - 1), /truncated: the header announces 9585 bits in 1248/],
      [with_(0, (v) => v.setUint8(0, 2)), /version byte is 2, expected 1/],
      [with_(16, (v) => v.setFloat64(0, 1.5, true)), /fpp p must be in \(0, 1\), got 1.5/],
      [with_(24, (v) => v.setBigUint64(0, 0n, true)), /k must be in 1..255, got 0/],
      [with_(24, (v) => v.setBigUint64(0, 300n, true)), /k must be in 1..255, got 300/],
      [with_(32, (v) => v.setBigUint64(0, 0n, true)), /m must be in 1..68719476736, got 0/],
      [with_(8, (v) => v.setBigUint64(0, 0n, true)), /capacity n must be at least 1/],
      // Bit 9585 lies past m = 9585: DCSO never sets it.
      [with_(48 + 8 * 149, (v) => v.setUint8(6, 0x02)), /bits at or past m = 9585 are set/],
    ];
    for (const [bytes, message] of cases) {
      expect(() => DcsoBloomFilter.fromDcso(bytes), String(message)).toThrow(FormatError);
      expect(() => DcsoBloomFilter.fromDcso(bytes), String(message)).toThrow(message);
    }
    // The native container's CRC catches a flipped bit the DCSO format cannot.
    const native = f.toBytes();
    native[100]! ^= 1;
    expect(() => fromBytes(native)).toThrow(/checksum mismatch/);
  });

  it('joins as DCSO Join: same n, p, k, m required; N adds up', () => {
    const a = DcsoBloomFilter.create({ capacity: 100, fpp: 0.01 });
    const b = DcsoBloomFilter.create({ capacity: 100, fpp: 0.01 });
    a.add('x');
    b.add('y');
    b.add('z');
    a.union(b);
    expect([a.has('x'), a.has('y'), a.has('z'), a.count]).toEqual([true, true, true, 3]);
    expect(() => a.union(DcsoBloomFilter.create({ capacity: 100, fpp: 0.02 }))).toThrow(
      /have the same fpp/,
    );
  });
});
