/**
 * bloomkit's native binary format, version 1: one container for every filter type.
 *
 * All multi-byte fields are little-endian. Byte by byte:
 *
 * | offset    | size | field                                                               |
 * |-----------|------|---------------------------------------------------------------------|
 * | 0         | 4    | magic `BLMK` (42 4C 4D 4B)                                          |
 * | 4         | 2    | format version, u16 = 1                                             |
 * | 6         | 1    | filter type id ({@link FILTER_TYPES})                               |
 * | 7         | 1    | hash scheme id ({@link HASH_SCHEMES})                               |
 * | 8         | 1    | key encoding (funnel) id (`FUNNEL_IDS` in hash/keys.ts)             |
 * | 9         | 1    | flags, 0 (no flag is defined; a reader rejects any set bit)         |
 * | 10        | 2    | P, length of the parameters, u16, a multiple of 8, at most 4096     |
 * | 12        | 4    | reserved, 0                                                         |
 * | 16        | 8    | L, length of the payload, u64 (below 2^53)                          |
 * | 24        | P    | parameters: fixed layout per filter type (see each codec)           |
 * | 24 + P    | L    | payload: the filter's bits, counters or slots                       |
 * | 24 + P + L| 4    | CRC-32C of bytes [0, 24 + P + L), u32                               |
 *
 * The header is 24 bytes and P is a multiple of 8, so the payload starts 8-byte aligned and can be
 * viewed as 32- or 64-bit words without a copy. Ids are never reused or reordered: a new filter
 * type, hash scheme or funnel takes the next free number. A reader rejects, with a `FormatError`
 * that says what is wrong: a wrong magic, an unknown version, type, hash scheme or funnel, set
 * flags, a length that does not match the bytes given, and a bad checksum.
 *
 * One type bends the trailer rule: a chunked filter file (type 7, `node/chunked-format.ts`) keeps
 * this header and size, but its trailer covers the header, parameters and index only, and each
 * chunk carries its own CRC. The whole specification, every type's parameters and payload
 * included, is docs/FORMAT.md. Streaming writers and readers use {@link containerParts} and a
 * codec's {@link PayloadSink} (see `node/io.ts`). Each type declares its header fields and its
 * ways in and out once, in native-type.ts terms (`NativeType`, `nativeFormat`).
 */

import { checkBytes, FormatError } from '../errors.js';
import { crc32cOf } from './crc32c.js';
import { adviceFor } from './detect.js';
import { checkTypeId } from './header-checks.js';

/** The checks every codec makes of a header and parameters (header-checks.ts), also from here. */
export {
  checkHashCount,
  checkHashScheme,
  checkParamsLength,
  checkStoredBits,
  checkTypeId,
  headerFunnel,
} from './header-checks.js';
/** Word payloads (words.ts), also reachable from here. */
export { bytesToWords, wordsToBytes } from './words.js';

/** Filter type ids. Never reuse or reorder; the next free id is 11. */
export const FILTER_TYPES = {
  bloom: 1,
  counting: 2,
  scalable: 3,
  cuckoo: 4,
  blocked: 5,
  splitBlock: 6,
  /** A chunked filter file (`ChunkedBloomFilter` in bloomkit/node); see docs/FORMAT.md. */
  chunked: 7,
  /** A sharded Bloom filter (`ShardedBloomFilter`, `RedisBloomFilter`'s layout); see
   * src/sharded/sharded-codec.ts. */
  shardedBloom: 8,
  /** A filter cascade (`FilterCascade`); its payload is an MLBF file, see filters/cascade/format.ts. */
  cascade: 9,
  /** A binary fuse filter (`BinaryFuseFilter`); see filters/binary-fuse/format.ts. */
  binaryFuse: 10,
  /** DCSO's Bloom filter (`DcsoBloomFilter`, the Go `bloom` tool's); see filters/dcso/format.ts. */
  dcso: 11,
} as const;

/**
 * Hash scheme ids: how a key's hash becomes positions. Never reuse or reorder; next free id is 7.
 * A format names its id as a literal checked against this table at compile time
 * (`1 satisfies typeof HASH_SCHEMES.murmur128Mitz64`), so a bundle carries the table only where
 * it is read at run time.
 */
export const HASH_SCHEMES = {
  /** Guava MURMUR128_MITZ_32 (ordinal 0). */
  murmur128Mitz32: 0,
  /** Guava MURMUR128_MITZ_64 (ordinal 1). */
  murmur128Mitz64: 1,
  /**
   * The cuckoo filter's partial-key hashing over MurmurHash3 x64 128 (h1, h2) with B buckets and
   * f-bit fingerprints: i1 = (h1 mod 2^32) mod B, fp = ((h2 >>> 32) mod (2^f − 1)) + 1,
   * i2 = i1 XOR o with o = fmix32(fp) mod B, or 1 if that is 0 and B > 1. See filters/cuckoo.ts.
   */
  cuckooMurmur128: 2,
  /**
   * The blocked filter's positions: XXH64 (seed 0) of the funnel bytes; block ⌊lo32·z/2^32⌋,
   * k probes x = hi32, bit x >>> 23, x *= 0x9e3779b9. See filters/blocked.ts.
   */
  xxh64Blocked: 3,
  /**
   * Parquet's split-block positions: XXH64 (seed 0) of the PLAIN encoding; block
   * ⌊hi32·z/2^32⌋, bit (lo32·salt[i]) >>> 27 of word i. See filters/split-block.ts.
   */
  xxh64SplitBlock: 4,
  /** Mozilla MLBF: each layer of the payload names its algorithm (filters/cascade/hashing.ts). */
  mlbf: 5,
  /** Binary fuse: MurmurHash3 x64 128 h1, mixed with the seed (filters/binary-fuse/filter.ts). */
  binaryFuseMurmur128: 6,
  /**
   * DCSO's positions: FNV-1 64 of the funnel bytes mod P = 2^64 − 59, then k steps
   * h = ((h · (2^64 − 1469)) mod 2^64) mod P, position h mod m. See filters/dcso/hash.ts.
   */
  dcsoFnv: 7,
} as const;

export const MAGIC = 0x4b4d4c42; // "BLMK" read as a little-endian u32
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 24;
export const TRAILER_BYTES = 4;
export const MAX_PARAMS_BYTES = 4096;

/** The fixed fields of a native header. */
export interface NativeHeader {
  readonly version: number;
  readonly type: number;
  readonly hash: number;
  readonly funnel: number;
  readonly paramsLength: number;
  readonly payloadLength: number;
}

/** A decoded container: the header, the parameters and the payload (views, not copies). */
export interface NativeContainer {
  readonly header: NativeHeader;
  /** Parameters, readable little-endian. */
  readonly params: DataView;
  /** The payload bytes, a view into the input. */
  readonly payload: Uint8Array;
}

const KNOWN_TYPES = new Set<number>(Object.values(FILTER_TYPES));

/** The 24-byte header for a container; the caller appends params, payload and the CRC. */
export function encodeHeader(
  type: number,
  hash: number,
  funnel: number,
  paramsLength: number,
  payloadLength: number,
): Uint8Array {
  if (paramsLength % 8 !== 0 || paramsLength > MAX_PARAMS_BYTES) {
    throw new RangeError(
      `params length must be a multiple of 8 up to ${MAX_PARAMS_BYTES}, got ${paramsLength}`,
    );
  }
  const out = new Uint8Array(HEADER_BYTES);
  const v = new DataView(out.buffer);
  v.setUint32(0, MAGIC, true);
  v.setUint16(4, FORMAT_VERSION, true);
  v.setUint8(6, type);
  v.setUint8(7, hash);
  v.setUint8(8, funnel);
  // Bytes 9 (flags) and 12..15 (reserved) stay 0.
  v.setUint16(10, paramsLength, true);
  v.setUint32(16, payloadLength % 4294967296, true);
  v.setUint32(20, Math.floor(payloadLength / 4294967296), true);
  return out;
}

/**
 * Parses and checks the 24-byte header (everything that can be checked before the payload is
 * read, so a streaming reader can refuse a forged length before allocating anything). Bytes of
 * another format get a `FormatError` that names it and says how to read it (`formats/detect.ts`).
 */
export function decodeHeader(bytes: Uint8Array, totalLength = bytes.length): NativeHeader {
  return parseHeader(bytes, totalLength, adviceFor);
}

/** The checks of {@link decodeHeader}; `advise` explains bytes without the magic ('' if it cannot). */
function parseHeader(
  bytes: Uint8Array,
  totalLength: number,
  advise: (bytes: Uint8Array, totalLength: number) => string,
): NativeHeader {
  if (bytes.length < HEADER_BYTES) {
    throw new FormatError(
      `not a bloomkit filter: ${bytes.length} bytes is shorter than the ${HEADER_BYTES}-byte header`,
    );
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const magic = v.getUint32(0, true);
  if (magic !== MAGIC) {
    const hex = Array.from(bytes.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
    const advice = advise(bytes, totalLength);
    throw new FormatError(
      `not a bloomkit filter: magic is ${hex}, expected 42 4c 4d 4b ("BLMK")${advice && `: ${advice}`}`,
    );
  }
  const version = v.getUint16(4, true);
  if (version !== FORMAT_VERSION) {
    throw new FormatError(
      `unsupported bloomkit format version ${version}; this bloomkit reads version ${FORMAT_VERSION}`,
    );
  }
  const type = v.getUint8(6);
  if (!KNOWN_TYPES.has(type)) throw new FormatError(`unknown filter type id ${type}`);
  const flags = v.getUint8(9);
  if (flags !== 0)
    throw new FormatError(`unknown flags 0x${flags.toString(16)} (none are defined)`);
  const paramsLength = v.getUint16(10, true);
  if (paramsLength % 8 !== 0 || paramsLength > MAX_PARAMS_BYTES) {
    throw new FormatError(
      `bad params length ${paramsLength}: must be a multiple of 8 up to ${MAX_PARAMS_BYTES}`,
    );
  }
  if (v.getUint32(12, true) !== 0)
    throw new FormatError('reserved header bytes 12..15 are not zero');
  const high = v.getUint32(20, true);
  if (high >= 2 ** 21) throw new FormatError(`payload length is absurd (high word ${high})`);
  const payloadLength = high * 4294967296 + v.getUint32(16, true);
  return { version, type, hash: v.getUint8(7), funnel: v.getUint8(8), paramsLength, payloadLength };
}

/** Total container size for a header. */
export function containerSize(h: NativeHeader): number {
  return HEADER_BYTES + h.paramsLength + h.payloadLength + TRAILER_BYTES;
}

/**
 * Throws a `FormatError` unless `actual`, the bytes at hand (`has` says whose: `'got'`, `'the file
 * has'`), is the `size` the header announces: too few is a truncation, too many a mismatch.
 */
export function checkAnnouncedSize(size: number, actual: number, has = 'got'): void {
  if (actual < size) {
    throw new FormatError(`truncated: the header announces ${size} bytes, ${has} ${actual}`);
  }
  if (actual > size) {
    throw new FormatError(`length mismatch: the header announces ${size} bytes, ${has} ${actual}`);
  }
}

/**
 * Checks a whole container held in memory (lengths and CRC-32C) and returns views of its parts.
 * `expectedType`, when given, must match the type id. This is each filter class's own reader: a
 * bad magic is explained only by `advise`, the confusion that class invites (the classic filter
 * passes `guavaAdvice`), so that a bundle importing one filter type does not carry every format's
 * detection; `fromBytes` and `load`, which read any filter, check the header first with
 * {@link decodeHeader} and explain them all.
 */
export function decodeContainer(
  bytes: Uint8Array,
  expectedType?: number,
  advise: (bytes: Uint8Array, totalLength: number) => string = () => '',
): NativeContainer {
  bytes = checkBytes('bytes', bytes);
  const header = parseHeader(bytes, bytes.length, advise);
  if (expectedType !== undefined) checkTypeId(header, expectedType);
  const size = containerSize(header);
  checkAnnouncedSize(size, bytes.length);
  const body = size - TRAILER_BYTES;
  const stored = new DataView(bytes.buffer, bytes.byteOffset + body, 4).getUint32(0, true);
  const actual = crc32cOf(bytes.subarray(0, body));
  if (stored !== actual) {
    throw new FormatError(
      `checksum mismatch: stored CRC-32C 0x${stored.toString(16).padStart(8, '0')}, computed 0x${actual.toString(16).padStart(8, '0')}`,
    );
  }
  const paramsStart = bytes.byteOffset + HEADER_BYTES;
  return {
    header,
    params: new DataView(bytes.buffer, paramsStart, header.paramsLength),
    payload: bytes.subarray(HEADER_BYTES + header.paramsLength, body),
  };
}

/** Builds a whole container in memory from its parts. */
export function encodeContainer(
  type: number,
  hash: number,
  funnel: number,
  params: Uint8Array,
  payload: readonly Uint8Array[],
): Uint8Array {
  return joinContainer(containerParts(type, hash, funnel, params, payload));
}

/** The whole container of `parts` in one buffer, with its CRC-32C trailer (what `save` streams). */
export function joinContainer(parts: ContainerParts): Uint8Array {
  const out = new Uint8Array(parts.size);
  out.set(parts.head, 0);
  let p = parts.head.length;
  for (const part of parts.payload) {
    out.set(part, p);
    p += part.length;
  }
  new DataView(out.buffer).setUint32(p, crc32cOf(out.subarray(0, p)), true);
  return out;
}

/**
 * A container as the pieces a streaming writer emits in order, so that a multi-GiB filter is
 * written without a second copy: `head` is the 24-byte header followed by the parameters (freshly
 * built), `payload` are views of the filter's own memory (not copies). The writer appends the
 * 4-byte CRC-32C trailer, computed over head and payload as it writes them.
 */
export interface ContainerParts {
  /** Header and parameters: bytes [0, 24 + P). */
  readonly head: Uint8Array;
  /** The payload in order; the lengths add up to the header's L. */
  readonly payload: readonly Uint8Array[];
  /** Total container size in bytes, trailer included. */
  readonly size: number;
}

/** Splits a container into {@link ContainerParts} (no payload byte is copied). */
export function containerParts(
  type: number,
  hash: number,
  funnel: number,
  params: Uint8Array,
  payload: readonly Uint8Array[],
): ContainerParts {
  let payloadLength = 0;
  for (const part of payload) payloadLength += part.length;
  const head = new Uint8Array(HEADER_BYTES + params.length);
  head.set(encodeHeader(type, hash, funnel, params.length, payloadLength), 0);
  head.set(params, HEADER_BYTES);
  return { head, payload, size: head.length + payloadLength + TRAILER_BYTES };
}

/**
 * Where a streaming reader puts a payload: the new filter's own storage, as byte views to fill in
 * order (their lengths add up to the header's L), then `finish()` returns the filter. A codec
 * builds a sink only after checking the header and parameters, so nothing is allocated for a
 * forged length. `finish()` must be called only after every byte and the CRC were checked.
 *
 * `targets` may be lazy (a generator): the reader asks for the next view only once every earlier
 * view is filled, so a codec whose payload describes itself (the scalable filter's layer headers)
 * reads what arrived, checks it against the bytes left of L, and only then allocates and yields
 * the storage for what follows. Such a codec throws a `FormatError` when the views would not add
 * up to L.
 */
export interface PayloadSink<F> {
  readonly targets: Iterable<Uint8Array>;
  finish(): F;
}

/** Options of the `fromBytes` functions. */
export interface DecodeOptions {
  /**
   * `false`: when the payload is suitably aligned in `bytes` (and the host is little-endian), the
   * filter views it instead of copying it, so `bytes` must then stay untouched for the filter's
   * life (and writes to the filter change `bytes`). Otherwise the payload is copied, as with the
   * default `true`. The checksum is verified either way. A classic filter that views `bytes`
   * probes in JavaScript: the WebAssembly kernel needs its bits inside its own memory.
   */
  copy?: boolean;
}

/** Reads a u64 LE field that must be a safe integer. */
export function getU64(v: DataView, offset: number, field: string): number {
  const high = v.getUint32(offset + 4, true);
  if (high >= 2 ** 21) throw new FormatError(`${field} is absurd (high word ${high})`);
  return high * 4294967296 + v.getUint32(offset, true);
}

/** Writes a safe-integer u64 LE field. */
export function setU64(v: DataView, offset: number, value: number): void {
  v.setUint32(offset, value % 4294967296, true);
  v.setUint32(offset + 4, Math.floor(value / 4294967296), true);
}
