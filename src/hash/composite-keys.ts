/**
 * Composite keys: several fields as one unambiguous byte string, for HBase-style ROW and ROWCOL
 * filters and anything else keyed by more than one field. Use them with the
 * `'bytes'` funnel: `filter.add(rowColKey('user42', 'cf', 'email'))`.
 *
 * Concatenating fields is ambiguous: ("ab", "c") and ("a", "bc") both give "abc". Every encoder
 * here length-prefixes all fields but the last, so two different tuples never give the same bytes
 * (each encoding parses back to exactly one tuple). Strings are UTF-8 with Java's `?` for a lone
 * surrogate, as the `'string'` funnel writes them; `Uint8Array` fields are taken as they are.
 *
 * HBase's ROWCOL Bloom key (hbase-common `RowColBloomHashKey`, REFERENCE.md §5) is the KeyValue key
 * layout with the family left out and the newest timestamp and the `Maximum` type appended:
 *
 * | size | field                                                       |
 * |------|-------------------------------------------------------------|
 * | 2    | row length, big-endian (at most 32767, `Short.MAX_VALUE`)   |
 * | r    | row                                                         |
 * | 1    | 0x00, the family length: the family is not part of the key  |
 * | q    | qualifier                                                   |
 * | 8    | `LATEST_TIMESTAMP` = Long.MAX_VALUE, big-endian: 7F FF … FF  |
 * | 1    | `KeyValue.Type.Maximum` = 0xFF                              |
 *
 * {@link hbaseRowColBloomKey} reproduces these bytes exactly. HBase leaves the family out because
 * each HFile (and so each Bloom filter) holds one column family. {@link rowColKey} keeps the same
 * layout but writes the family (length byte, then bytes) and drops the constant 9-byte tail, so one
 * filter can hold cells of several families. Neither makes a bloomkit filter answer like an HBase
 * one: HBase hashes these bytes with its own 32-bit Murmur (`h2 = hash(key, h1)`), bloomkit with
 * MurmurHash3 x64 128; the key layout is reproduced, the bits are not.
 */

import { mustBe } from '../errors.js';
import { keyBytes } from './keys.js';

/** One field of a composite key: a string (UTF-8) or raw bytes. */
export type KeyPart = string | Uint8Array;

/** HBase's row length limit (`Short.MAX_VALUE`). */
export const MAX_ROW_BYTES = 32767;
/** HBase's family length limit (`Byte.MAX_VALUE`). */
export const MAX_FAMILY_BYTES = 127;

function partBytes(name: string, part: unknown): Uint8Array {
  if (typeof part === 'string') return keyBytes('string', part);
  if (part instanceof Uint8Array) return part;
  throw mustBe(name, 'a string or a Uint8Array', part, TypeError);
}

/** HBase ROW key: the row's bytes, nothing more (a single field needs no prefix). */
export function rowKey(row: KeyPart): Uint8Array {
  const bytes = partBytes('row', row);
  return typeof row === 'string' ? bytes : bytes.slice();
}

function checkedRow(row: KeyPart): Uint8Array {
  const r = partBytes('row', row);
  if (r.length > MAX_ROW_BYTES) {
    throw new RangeError(`row must be at most ${MAX_ROW_BYTES} bytes, got ${r.length}`);
  }
  return r;
}

/**
 * A ROWCOL key with its family: `rowLen (u16 BE) | row | familyLen (u8) | family | qualifier`,
 * the leading fields of HBase's KeyValue key. Unambiguous: rows up to 32767 bytes, families up to
 * 127 bytes (HBase's own limits), any qualifier.
 */
export function rowColKey(row: KeyPart, family: KeyPart, qualifier: KeyPart): Uint8Array {
  const r = checkedRow(row);
  const f = partBytes('family', family);
  const q = partBytes('qualifier', qualifier);
  if (f.length > MAX_FAMILY_BYTES) {
    throw new RangeError(`family must be at most ${MAX_FAMILY_BYTES} bytes, got ${f.length}`);
  }
  const out = new Uint8Array(2 + r.length + 1 + f.length + q.length);
  out[0] = r.length >>> 8;
  out[1] = r.length & 0xff;
  out.set(r, 2);
  out[2 + r.length] = f.length;
  out.set(f, 3 + r.length);
  out.set(q, 3 + r.length + f.length);
  return out;
}

/** HBase's exact ROWCOL Bloom key bytes (`RowColBloomHashKey`): see the table above. */
export function hbaseRowColBloomKey(row: KeyPart, qualifier: KeyPart): Uint8Array {
  const r = checkedRow(row);
  const q = partBytes('qualifier', qualifier);
  const out = new Uint8Array(2 + r.length + 1 + q.length + 9);
  out[0] = r.length >>> 8;
  out[1] = r.length & 0xff;
  out.set(r, 2);
  // out[2 + r.length] = 0: the family length.
  const tail = 3 + r.length + q.length;
  out.set(q, 3 + r.length);
  out[tail] = 0x7f;
  out.fill(0xff, tail + 1, tail + 9);
  return out;
}

/**
 * Any number of fields, each written as its byte length (unsigned LEB128 varint) followed by its
 * bytes. Prefix-free, so no two different tuples (of any lengths) share an encoding.
 */
export function compositeKey(parts: readonly KeyPart[]): Uint8Array {
  if (!Array.isArray(parts)) throw mustBe('parts', 'an array', parts, TypeError);
  const encoded = parts.map((p, i) => partBytes(`parts[${i}]`, p));
  let size = 0;
  for (const e of encoded) size += varintSize(e.length) + e.length;
  const out = new Uint8Array(size);
  let p = 0;
  for (const e of encoded) {
    let n = e.length;
    while (n >= 0x80) {
      out[p++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    out[p++] = n;
    out.set(e, p);
    p += e.length;
  }
  return out;
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}
