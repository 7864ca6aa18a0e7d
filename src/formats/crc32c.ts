/**
 * CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum of bloomkit's
 * native format, as used by iSCSI, ext4, RocksDB and LevelDB. Slicing-by-8 tables; incremental:
 * `crc32c(b, crc32c(a))` equals `crc32c(a ++ b)`. Check value: crc32c("123456789") = 0xE3069283.
 */

import { checkUint8Array, mustBe } from '../errors.js';

const TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let s = 1; s < 8; s++) {
      c = (c >>> 8) ^ t[c & 0xff]!;
      t[s * 256 + n] = c >>> 0;
    }
  }
  return t;
})();

/** CRC-32C of `bytes`, continuing from `crc` (the value of the bytes before; 0 to start). */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  checkUint8Array('bytes', bytes);
  if (!Number.isInteger(crc) || crc < 0 || crc > 0xffffffff) {
    throw mustBe('crc', 'an integer in [0, 2^32)', crc);
  }
  return crc32cOf(bytes, crc);
}

/** {@link crc32c} without checking its arguments, for the format's own readers and writers. */
export function crc32cOf(bytes: Uint8Array, crc = 0): number {
  const t = TABLES;
  let c = ~crc;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n & 7);
  for (; i < end8; i += 8) {
    const lo =
      c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    const hi = bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24);
    c =
      t[1792 + (lo & 0xff)]! ^
      t[1536 + ((lo >>> 8) & 0xff)]! ^
      t[1280 + ((lo >>> 16) & 0xff)]! ^
      t[1024 + (lo >>> 24)]! ^
      t[768 + (hi & 0xff)]! ^
      t[512 + ((hi >>> 8) & 0xff)]! ^
      t[256 + ((hi >>> 16) & 0xff)]! ^
      t[hi >>> 24]!;
  }
  for (; i < n; i++) c = (c >>> 8) ^ t[(c ^ bytes[i]!) & 0xff]!;
  return ~c >>> 0;
}
