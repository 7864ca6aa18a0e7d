/**
 * The file format of DCSO's `bloom` (github.com/DCSO/bloom 0.2.4, `BloomFilter.Write` / `Read`),
 * byte for byte, all integers little-endian:
 *
 * | offset | size | field                                                           |
 * |--------|------|-----------------------------------------------------------------|
 * | 0      | 8    | flags, u64: the low byte is the version, 1 (DCSO writes exactly 1) |
 * | 8      | 8    | n, the capacity it was sized for, u64                           |
 * | 16     | 8    | p, the false positive rate it was sized for, float64            |
 * | 24     | 8    | k, the number of hash functions, u64                            |
 * | 32     | 8    | m, the number of bits, u64                                     |
 * | 40     | 8    | N, the element counter, u64                                     |
 * | 48     | 8·M  | the bits: M = ⌈m/64⌉ words, u64; bit i is bit (i & 63) of word i >>> 6 |
 * | 48+8·M | rest | the attached data (`bloom set-data`), to the end of the file    |
 *
 * The format has no magic beyond the version, no checksum and no length for the data, so what
 * can be checked is checked: the version, n ≥ 1, 0 < p < 1, 1 ≤ k ≤ 255, 1 ≤ m ≤ 2^36, that the
 * file holds the M words its header announces (a file cut inside its header or bits is refused,
 * as `bloom` refuses it with "unexpected EOF"), and that no bit at or past m is set (DCSO never
 * sets one: such a file is damaged or not DCSO's). A file cut inside its data cannot be told
 * from a shorter data. `bloom --gzip` files are gzip around these bytes (gzip's CRC-32 catches
 * truncation); `gunzip` them first (the command line does it when it reads one).
 */

import { checkBytes, checkOptions, FormatError } from '../../errors.js';
import { checkFunnel, type Funnel } from '../../hash/keys.js';
import { MAX_BITS } from '../../math.js';
import type { DcsoBloomFilter } from './filter.js';

/** Bytes of the header. */
export const DCSO_HEADER_BYTES = 48;

/** Writes `filter` as DCSO's `bloom` writes it. */
export function writeDcso(filter: DcsoBloomFilter): Uint8Array {
  const words = Math.ceil(filter.bitSize / 64);
  const out = new Uint8Array(DCSO_HEADER_BYTES + 8 * words + filter.data.length);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, 1n, true);
  view.setBigUint64(8, BigInt(filter.capacity), true);
  view.setFloat64(16, filter.fpp, true);
  view.setBigUint64(24, BigInt(filter.hashes), true);
  view.setBigUint64(32, BigInt(filter.bitSize), true);
  view.setBigUint64(40, BigInt(filter.count), true);
  const data = filter.bits.data;
  for (let w = 0; w < 2 * words; w++) view.setUint32(DCSO_HEADER_BYTES + 4 * w, data[w]!, true);
  out.set(filter.data, DCSO_HEADER_BYTES + 8 * words);
  return out;
}

/** A u64 field read as a number, or −1 when it is 2^53 or more. */
function u64(view: DataView, offset: number): number {
  const value = view.getBigUint64(offset, true);
  return value < 2n ** 53n ? Number(value) : -1;
}

/** The facts of a header, for messages. */
function facts(n: number, p: number, k: number, m: number): string {
  return `n: ${n} p: ${p} k: ${k} m: ${m}`;
}

/** Reads DCSO's bytes, rejecting truncated or foreign ones with a `FormatError` naming the field. */
export function readDcso(
  bytes: Uint8Array,
  options: { funnel?: Funnel },
  Filter: typeof DcsoBloomFilter,
): DcsoBloomFilter {
  bytes = checkBytes('bytes', bytes);
  checkOptions('options', options);
  const funnel = checkFunnel(options.funnel ?? 'string');
  if (bytes.length < DCSO_HEADER_BYTES) {
    throw new FormatError(
      `DCSO bloom file truncated: the header needs ${DCSO_HEADER_BYTES} bytes, got ${bytes.length}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint8(0);
  if (version !== 1) {
    throw new FormatError(`not a DCSO bloom file: version byte is ${version}, expected 1`);
  }
  const n = u64(view, 8);
  const p = view.getFloat64(16, true);
  const k = u64(view, 24);
  const m = u64(view, 32);
  const count = u64(view, 40);
  const about = facts(n, p, k, m);
  const bad = (what: string): FormatError => new FormatError(`DCSO bloom file (${about}): ${what}`);
  if (n < 1) throw bad(`capacity n must be at least 1`);
  if (!(p > 0 && p < 1)) throw bad(`fpp p must be in (0, 1), got ${p}`);
  if (k < 1 || k > 255) throw bad(`k must be in 1..255, got ${k}`);
  if (m < 1 || m > MAX_BITS) throw bad(`m must be in 1..${MAX_BITS}, got ${m}`);
  if (count < 0) throw bad('element count N is 2^53 or more');
  const words = Math.ceil(m / 64);
  const need = DCSO_HEADER_BYTES + 8 * words;
  if (bytes.length < need) {
    throw bad(`truncated: the header announces ${m} bits in ${need} bytes, got ${bytes.length}`);
  }
  const filter = new Filter({
    capacity: n,
    fpp: p,
    bits: m,
    hashes: k,
    funnel,
    count,
    data: bytes.slice(need),
  });
  const data = filter.bits.data;
  for (let w = 0; w < 2 * words; w++) data[w] = view.getUint32(DCSO_HEADER_BYTES + 4 * w, true);
  checkTail(data, m, bad);
  filter.bits.recount();
  return filter;
}

/** Throws unless every bit at or past `m` in `data` is clear. */
export function checkTail(data: Uint32Array, m: number, bad: (what: string) => FormatError): void {
  const last = (m / 32) | 0;
  const tail = m % 32 === 0 ? 0 : data[last]! >>> (m % 32);
  let stray = tail !== 0;
  for (let w = last + (m % 32 === 0 ? 0 : 1); w < data.length && !stray; w++) {
    stray = data[w] !== 0;
  }
  if (stray) throw bad(`bits at or past m = ${m} are set (DCSO never sets them)`);
}
