/**
 * Which filter format a buffer holds, from its first bytes, so that a reader given the wrong kind
 * of file says what it is and how to read it (`this is a Guava BloomFilter: use
 * BloomFilter.fromGuava(bytes, { funnel })`) instead of only "bad magic".
 *
 * | format          | how it is recognised                                                       |
 * |-----------------|----------------------------------------------------------------------------|
 * | `native`        | "BLMK" magic (bloomkit's container, docs/FORMAT.md); type id 7 = `chunked` |
 * | `guava`         | byte 0 = strategy 0 or 1, byte 1 = k ≥ 1, u32 BE N ≥ 1, length 6 + 8N       |
 * | `parquet-file`  | "PAR1" at the start (a Parquet file: its column chunks hold the filters)   |
 * | `parquet-bloom` | a thrift BloomFilterHeader: field 1 (numBytes, i32) first, byte 0x15       |
 * | `mlbf`          | u16 LE version 1 (then a hash algorithm 1..3) or 2 (inverted 0/1, salt)     |
 * | `dcso`          | u64 LE 1, then p in (0, 1), k in 1..255, m ≥ 1, at least 48 + 8·⌈m/64⌉ bytes |
 *
 * The checks are cheap and can be fooled by crafted bytes: a detection picks the reader to try,
 * and that reader still checks everything.
 */

export type FilterFormat =
  | 'native'
  | 'chunked'
  | 'guava'
  | 'parquet-file'
  | 'parquet-bloom'
  | 'mlbf'
  | 'dcso'
  | 'unknown';

const MAGIC = [0x42, 0x4c, 0x4d, 0x4b]; // "BLMK"
const CHUNKED_TYPE = 7;

/** The byte at `i`, or −1 past the end. */
function byteAt(bytes: Uint8Array, i: number): number {
  return bytes[i] ?? -1;
}

/** True if `bytes` start with bloomkit's "BLMK" magic (a native container or a chunked file). */
function isBloomkit(bytes: Uint8Array): boolean {
  return MAGIC.every((b, i) => byteAt(bytes, i) === b);
}

/** True if `bytes` (the first bytes of `totalLength`) look like Guava's `writeTo` bytes. */
function isGuava(bytes: Uint8Array, totalLength: number): boolean {
  const at = (i: number): number => byteAt(bytes, i);
  if (!((at(0) === 0 || at(0) === 1) && at(1) >= 1 && bytes.length >= 6)) return false;
  const words = ((at(2) << 24) | (at(3) << 16) | (at(4) << 8) | at(5)) >>> 0;
  return words >= 1 && 6 + 8 * words === totalLength;
}

/**
 * True if `bytes` (the first 48 or more bytes of `totalLength`) look like a file of DCSO's
 * `bloom` (filters/dcso/file.ts): the u64 version 1, a rate in (0, 1), 1 ≤ k ≤ 255, 1 ≤ m ≤ 2^36
 * and room for the ⌈m/64⌉ words the header announces.
 */
export function isDcso(bytes: Uint8Array, totalLength = bytes.length): boolean {
  const m = dcsoHeaderBits(bytes);
  return m > 0 && totalLength >= 48 + 8 * Math.ceil(m / 64);
}

/**
 * The bit count m of a DCSO header (the u64 version 1, a rate in (0, 1), 1 ≤ k ≤ 255,
 * 1 ≤ m ≤ 2^36) in the first 48 bytes of `bytes`, or −1 when they are not one. Whether the file
 * is long enough is {@link isDcso}'s question: a reader told "DCSO" by the header alone says
 * "truncated" instead of "unknown format".
 */
export function dcsoHeaderBits(bytes: Uint8Array): number {
  if (bytes.length < 48) return -1;
  const v = new DataView(bytes.buffer, bytes.byteOffset, 48);
  if (v.getUint32(0, true) !== 1 || v.getUint32(4, true) !== 0) return -1;
  const p = v.getFloat64(16, true);
  const k = v.getUint32(24, true);
  const m = v.getUint32(36, true) * 4294967296 + v.getUint32(32, true);
  if (!(p > 0 && p < 1) || v.getUint32(28, true) !== 0 || k < 1 || k > 255) return -1;
  return m >= 1 && m <= 2 ** 36 ? m : -1;
}

/**
 * The format `bytes` most likely holds. `totalLength` is the whole input's length when `bytes`
 * is only its beginning (a streaming reader's first bytes); it defaults to `bytes.length`.
 */
export function detectFormat(bytes: Uint8Array, totalLength = bytes.length): FilterFormat {
  const at = (i: number): number => byteAt(bytes, i);
  if (isBloomkit(bytes)) return at(6) === CHUNKED_TYPE ? 'chunked' : 'native';
  if (at(0) === 0x50 && at(1) === 0x41 && at(2) === 0x52 && at(3) === 0x31) return 'parquet-file';
  if (isGuava(bytes, totalLength)) return 'guava';
  if (isDcso(bytes, totalLength)) return 'dcso';
  if (at(1) === 0) {
    if (at(0) === 1 && at(2) >= 1 && at(2) <= 3) return 'mlbf';
    if (at(0) === 2 && (at(2) === 0 || at(2) === 1) && bytes.length >= 4) {
      const algo = at(4 + at(3));
      if (algo === -1 || (algo >= 1 && algo <= 3)) return 'mlbf';
    }
  }
  if (at(0) === 0x15) return 'parquet-bloom';
  return 'unknown';
}

const NATIVE = 'this is a bloomkit filter: use fromBytes(bytes), or load(path) from bloomkit/node';
const CHUNKED =
  "this is a chunked bloomkit filter file: open it with ChunkedBloomFilter.open(path) from 'bloomkit/node'";
const GUAVA =
  'this is a Guava BloomFilter (writeTo bytes): use BloomFilter.fromGuava(bytes, { funnel }) with the funnel the Java side used';

/** How to read a buffer of `format`, in one sentence (for error messages). */
export function formatAdvice(format: FilterFormat): string {
  switch (format) {
    case 'native':
      return NATIVE;
    case 'chunked':
      return CHUNKED;
    case 'guava':
      return GUAVA;
    case 'parquet-file':
      return 'this is a Parquet file: read its column chunks’ filters with readParquetBloomFilters(pathOrBytes)';
    case 'parquet-bloom':
      return 'this looks like a Parquet bloom filter (thrift header + bitset): use SplitBlockBloomFilter.fromParquet(bytes, { type })';
    case 'mlbf':
      return 'this looks like a Mozilla MLBF filter cascade: use FilterCascade.fromMlbf(bytes)';
    case 'dcso':
      return 'this looks like a file of DCSO bloom: use DcsoBloomFilter.fromDcso(bytes)';
    default:
      return 'no known filter format starts with these bytes';
  }
}

/** Compressed containers a filter file is often found in, by their magic bytes. */
const COMPRESSED: readonly (readonly [string, string, readonly number[]])[] = [
  ['gzip', 'gunzip FILE, or zcat', [0x1f, 0x8b]],
  ['zstd', 'zstd -d FILE', [0x28, 0xb5, 0x2f, 0xfd]],
  ['xz', 'xz -d FILE', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['bzip2', 'bunzip2 FILE', [0x42, 0x5a, 0x68]],
  ['zip', 'unzip FILE', [0x50, 0x4b, 0x03, 0x04]],
];

/**
 * For bytes that start like a compressed file (gzip `1f 8b`, zstd, xz, bzip2, zip): one sentence
 * saying so and how to decompress it; else ''. Filters are read uncompressed.
 */
export function compressionAdvice(bytes: Uint8Array): string {
  for (const [name, how, magic] of COMPRESSED) {
    if (bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b)) {
      return `this is ${name}-compressed data, not a filter: decompress it first (${how})`;
    }
  }
  return '';
}

/**
 * {@link formatAdvice} of the detected format; for an unknown one, {@link compressionAdvice}
 * (or '').
 */
export function adviceFor(bytes: Uint8Array, totalLength = bytes.length): string {
  const format = detectFormat(bytes, totalLength);
  return format === 'unknown' ? compressionAdvice(bytes) : formatAdvice(format);
}

// The two confusions a filter class's own reader explains, without the whole table above (so a
// bundle that imports one filter type does not carry every format's detection and advice): the
// format-agnostic readers (`fromBytes`, `load`, the command's `info`) use {@link adviceFor}.

/** For a native reader given other bytes: the advice if they are Guava's, else ''. */
export function guavaAdvice(bytes: Uint8Array, totalLength = bytes.length): string {
  return isGuava(bytes, totalLength) ? GUAVA : '';
}

/** For a Guava reader given other bytes: the advice if they are bloomkit's, else ''. */
export function bloomkitAdvice(bytes: Uint8Array): string {
  if (!isBloomkit(bytes)) return '';
  return byteAt(bytes, 6) === CHUNKED_TYPE ? CHUNKED : NATIVE;
}
