/**
 * The chunked filter file (native filter type id 7), byte by byte. All fields little-endian.
 *
 * | offset            | size          | field                                                  |
 * |-------------------|---------------|--------------------------------------------------------|
 * | 0                 | 24            | native header: `BLMK`, version 1, type 7, hash scheme 1 (MURMUR128_MITZ_64), funnel id, flags 0, P = 64, reserved, L |
 * | 24                | 64            | parameters (below)                                     |
 * | 88                | C · (B + 8)   | C chunk records of B + 8 bytes each (below)            |
 * | 88 + C·(B + 8)    | I             | the index (below)                                      |
 * | 88 + C·(B+8) + I  | 4             | CRC-32C of header ‖ parameters ‖ index                 |
 *
 * L = C·(B + 8) + I, so the file is 24 + P + L + 4 bytes, as for every native container; only the
 * trailer differs: it covers what `open` reads (header, parameters, index) and each chunk carries
 * its own CRC, checked when the chunk is read, so opening never reads the chunks.
 *
 * Parameters (64 bytes):
 *
 * | offset | size | field                                                                    |
 * |--------|------|--------------------------------------------------------------------------|
 * | 0      | 1    | routing: 0 = by hash, 1 = by key range (sorted input, HBase)             |
 * | 1      | 3    | reserved, 0                                                              |
 * | 4      | 4    | k, hash functions per key, u32 (1..255)                                  |
 * | 8      | 4    | B, bytes of bits per chunk, u32, a multiple of 8 in [64, 2^27]           |
 * | 12     | 4    | C, number of chunks, u32 (≥ 1 for hash routing, ≤ 2^22)                  |
 * | 16     | 8    | keys added, u64 (the sum of the index's per-chunk counts)                |
 * | 24     | 8    | capacity requested at build, u64                                         |
 * | 32     | 8    | fpp requested at build, f64 in (0, 1)                                    |
 * | 40     | 8    | keys per chunk before a new chunk starts (range routing), u64; 0 for hash |
 * | 48     | 8    | index offset, u64 = 88 + C·(B + 8)                                       |
 * | 56     | 8    | I, index length, u64 = 8·C + first-key bytes, padded to a multiple of 8, |
 * |        |      | at most 2^27 (so `open` never holds more than 128 MiB of index)          |
 *
 * Chunk record c (at 88 + c·(B + 8)): B bytes of bits (a classic Bloom filter of 8·B bits; bit i
 * is bit i & 7 of byte i >>> 3), then the number of keys added to the chunk (u32), then the
 * CRC-32C of those B + 4 bytes followed by c as a u32 (so a chunk copied to the wrong slot fails).
 * A chunk whose index entry counts 0 keys has no bits set, and its record need not be written: a
 * writer leaves it as a hole (a sparse file, which reads as zeros), so a file costs disk in
 * proportion to the chunks that hold keys, not to the capacity it was sized for. Readers never read
 * the record of an empty chunk (the index, covered by the trailer's CRC, already says it is empty);
 * one that does accepts all zeros or a valid record with count 0.
 *
 * Index: C entries of 8 bytes (keys in the chunk, u32; length of the chunk's first key, u32: 0 for
 * hash routing), then the first keys' funnel bytes one after another, then zero bytes up to a
 * multiple of 8. With range routing the first keys are strictly increasing (unsigned bytewise).
 *
 * Routing. Each key is hashed once: h1, h2 = MurmurHash3 x64 128 (seed 0) of its funnel bytes.
 * By hash: chunk = ⌊(h1 >>> 32) · C / 2^32⌋ (the top 32 bits of h1, Lemire's multiply-shift; the
 * same choice as the Redis shards of `redis/layout.ts`).
 * By range: chunk = the last chunk whose first key ≤ the key's bytes; a key before chunk 0 is
 * absent (HBase `rootBlockContainingKey`). Inside the chunk the k positions are Guava's
 * MURMUR128_MITZ_64 over 8·B bits: (h1 + i·h2 mod 2^63) mod 8·B. With B a power of two these use
 * only the low bits of h1 and h2, disjoint from the top bits that chose the chunk (for other B,
 * h1's bits within one chunk still range over 2^63/C consecutive values: uniform to within
 * 8·B·C/2^63). In every case a chunk holds exactly the bits of a
 * `BloomFilter({ bits: 8·B, hashes: k })` given the keys routed to it.
 */

import { FormatError } from '../errors.js';
import { crc32c } from '../formats/crc32c.js';
import {
  checkAnnouncedSize,
  checkHashCount,
  checkParamsLength,
  decodeHeader,
  encodeHeader,
  FILTER_TYPES,
  getU64,
  HASH_SCHEMES,
  HEADER_BYTES,
  headerFunnel,
  setU64,
} from '../formats/native.js';
import { FUNNEL_IDS } from '../hash/keys.js';
import type { ChunkedShape } from './chunked-info.js';

export const PARAMS_BYTES = 64;
/** Offset of chunk 0. */
export const CHUNKS_OFFSET = HEADER_BYTES + PARAMS_BYTES;
/** Bytes after each chunk's bits: key count and CRC. */
export const CHUNK_TRAILER_BYTES = 8;
export const MIN_CHUNK_BYTES = 64;
export const MAX_CHUNK_BYTES = 2 ** 27;
/**
 * Most chunks in a file: the index (8 bytes a chunk) that `open` reads and keeps stays within
 * 32 MiB. With the largest chunks (2^27 bytes) that still allows 2^49 bytes of bits.
 */
export const MAX_CHUNKS = 2 ** 22;
/** Most index bytes (entries and range routing's first keys) a file may have. */
export const MAX_INDEX_BYTES = 2 ** 27;
/** HBase's `io.storefile.bloom.block.size`. */
export const DEFAULT_CHUNK_BYTES = 131072;

/** How keys are assigned to chunks. */
export type ChunkedRouting = 'hash' | 'range';
const ROUTING_IDS: Readonly<Record<ChunkedRouting, number>> = { hash: 0, range: 1 };

/** Everything the header, parameters and index say about a chunked file. */
export interface ChunkedLayout extends ChunkedShape {
  /** Byte length of the index, I. */
  readonly indexLength: number;
}

/** Bytes from the start of one chunk record to the next. */
export function chunkStride(chunkBytes: number): number {
  return chunkBytes + CHUNK_TRAILER_BYTES;
}

export function chunkOffset(layout: ChunkedLayout, chunk: number): number {
  return CHUNKS_OFFSET + chunk * chunkStride(layout.chunkBytes);
}

export function indexOffset(layout: ChunkedLayout): number {
  return CHUNKS_OFFSET + layout.chunks * chunkStride(layout.chunkBytes);
}

/** Total file size. */
export function fileSize(layout: ChunkedLayout): number {
  return indexOffset(layout) + layout.indexLength + 4;
}

/**
 * ⌊x · n / 2^32⌋ for 0 ≤ x < 2^32 and 0 < n < 2^32, exactly (the product can exceed 2^53, so it
 * is split in 16-bit halves of n).
 */
export function fastRange32(x: number, n: number): number {
  const a = x * Math.floor(n / 65536);
  const b = x * (n % 65536);
  return Math.floor((a + Math.floor(b / 65536)) / 65536);
}

/** Hash routing: the chunk of a key whose hash is `h` = [h1 lo, h1 hi, h2 lo, h2 hi]. */
export function hashChunk(h: Int32Array, chunks: number): number {
  return fastRange32(h[1]! >>> 0, chunks);
}

/** Unsigned bytewise comparison (HBase `Bytes.compareTo`). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Range routing: the last chunk whose first key ≤ `key`, or −1 if `key` sorts before chunk 0. */
export function rangeChunk(firstKeys: readonly Uint8Array[], key: Uint8Array): number {
  let lo = 0;
  let hi = firstKeys.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compareBytes(firstKeys[mid]!, key) <= 0) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/** CRC-32C of a chunk record's bits and key count, bound to its position `chunk`. */
export function chunkCrc(bitsAndCount: Uint8Array, chunk: number): number {
  const position = new Uint8Array(4);
  new DataView(position.buffer).setUint32(0, chunk, true);
  return crc32c(position, crc32c(bitsAndCount));
}

/** Header and parameters, bytes [0, 88). */
export function encodeHead(layout: ChunkedLayout): Uint8Array {
  const stride = chunkStride(layout.chunkBytes);
  const out = new Uint8Array(CHUNKS_OFFSET);
  out.set(
    encodeHeader(
      FILTER_TYPES.chunked,
      HASH_SCHEMES.murmur128Mitz64,
      FUNNEL_IDS[layout.funnel],
      PARAMS_BYTES,
      layout.chunks * stride + layout.indexLength,
    ),
  );
  const v = new DataView(out.buffer, HEADER_BYTES, PARAMS_BYTES);
  v.setUint8(0, ROUTING_IDS[layout.routing]);
  v.setUint32(4, layout.hashes, true);
  v.setUint32(8, layout.chunkBytes, true);
  v.setUint32(12, layout.chunks, true);
  setU64(v, 16, layout.keys);
  setU64(v, 24, layout.capacity);
  v.setFloat64(32, layout.fpp, true);
  setU64(v, 40, layout.keysPerChunk);
  setU64(v, 48, indexOffset(layout));
  setU64(v, 56, layout.indexLength);
  return out;
}

/**
 * Parses and checks the header and parameters (bytes [0, 88)) against the file size. Every
 * length is checked here, before the caller allocates anything for the index.
 */
export function decodeHead(head: Uint8Array, size: number): ChunkedLayout {
  const header = decodeHeader(head);
  if (header.type !== FILTER_TYPES.chunked) {
    throw new FormatError(
      `not a chunked filter file: the header holds filter type id ${header.type}, expected ${FILTER_TYPES.chunked}; use load() for it`,
    );
  }
  checkParamsLength(header, PARAMS_BYTES, 'chunked filter');
  if (head.length < CHUNKS_OFFSET) {
    throw new FormatError(
      `truncated: the parameters end at byte ${CHUNKS_OFFSET}, got ${head.length}`,
    );
  }
  if (header.hash !== HASH_SCHEMES.murmur128Mitz64) {
    throw new FormatError(
      `hash scheme id ${header.hash} is not defined for a chunked filter (only 1)`,
    );
  }
  const funnel = headerFunnel(header);
  const v = new DataView(head.buffer, head.byteOffset + HEADER_BYTES, PARAMS_BYTES);
  const routingId = v.getUint8(0);
  const routing = routingId === 0 ? 'hash' : routingId === 1 ? 'range' : undefined;
  if (routing === undefined) throw new FormatError(`unknown routing id ${routingId}`);
  if (v.getUint8(1) !== 0 || v.getUint16(2, true) !== 0) {
    throw new FormatError('reserved chunked filter parameter bytes are not zero');
  }
  const hashes = v.getUint32(4, true);
  checkHashCount(hashes);
  const chunkBytes = v.getUint32(8, true);
  if (chunkBytes < MIN_CHUNK_BYTES || chunkBytes > MAX_CHUNK_BYTES || chunkBytes % 8 !== 0) {
    throw new FormatError(
      `bad chunk size ${chunkBytes}: must be a multiple of 8 in [${MIN_CHUNK_BYTES}, ${MAX_CHUNK_BYTES}]`,
    );
  }
  const chunks = v.getUint32(12, true);
  if (chunks > MAX_CHUNKS) {
    throw new FormatError(`chunk count ${chunks} is more than the limit ${MAX_CHUNKS}`);
  }
  if (chunks === 0 && routing === 'hash') {
    throw new FormatError('a hash-routed chunked filter needs at least one chunk, got 0');
  }
  const keys = getU64(v, 16, 'key count');
  const capacity = getU64(v, 24, 'capacity');
  const fpp = v.getFloat64(32, true);
  if (!(fpp > 0 && fpp < 1)) throw new FormatError(`bad fpp ${fpp}: must be in (0, 1)`);
  const keysPerChunk = getU64(v, 40, 'keys per chunk');
  if ((routing === 'range') !== keysPerChunk > 0) {
    throw new FormatError(
      `keys per chunk is ${keysPerChunk}: it must be positive for range routing and 0 for hash routing`,
    );
  }
  const indexLength = getU64(v, 56, 'index length');
  if (indexLength > MAX_INDEX_BYTES) {
    throw new FormatError(`index length ${indexLength} is more than the limit ${MAX_INDEX_BYTES}`);
  }
  const layout: ChunkedLayout = {
    routing,
    funnel,
    hashes,
    chunkBytes,
    chunks,
    keys,
    capacity,
    fpp,
    keysPerChunk,
    indexLength,
  };
  const storedIndexOffset = getU64(v, 48, 'index offset');
  if (storedIndexOffset !== indexOffset(layout)) {
    throw new FormatError(
      `length mismatch: index offset is ${storedIndexOffset}, ${chunks} chunks of ${chunkBytes} bytes put it at ${indexOffset(layout)}`,
    );
  }
  if (indexLength < 8 * chunks || indexLength % 8 !== 0) {
    throw new FormatError(
      `bad index length ${indexLength}: must be a multiple of 8 of at least 8 × ${chunks} chunks`,
    );
  }
  if (header.payloadLength !== layout.chunks * chunkStride(chunkBytes) + indexLength) {
    throw new FormatError(
      `length mismatch: the header's payload length ${header.payloadLength} is not chunks (${layout.chunks * chunkStride(chunkBytes)}) + index (${indexLength})`,
    );
  }
  checkAnnouncedSize(fileSize(layout), size, 'the file has');
  return layout;
}

/** The parsed index: per-chunk key counts and (range routing) first keys. */
export interface ChunkedIndex {
  readonly counts: Uint32Array;
  readonly firstKeys: readonly Uint8Array[];
}

/** Builds the index bytes. */
export function encodeIndex(counts: Uint32Array, firstKeys: readonly Uint8Array[]): Uint8Array {
  let keyBytes = 0;
  for (const k of firstKeys) keyBytes += k.length;
  const length = 8 * counts.length + Math.ceil(keyBytes / 8) * 8;
  const out = new Uint8Array(length);
  const v = new DataView(out.buffer);
  let p = 8 * counts.length;
  for (let i = 0; i < counts.length; i++) {
    v.setUint32(8 * i, counts[i]!, true);
    const key = firstKeys[i];
    v.setUint32(8 * i + 4, key === undefined ? 0 : key.length, true);
    if (key !== undefined) {
      out.set(key, p);
      p += key.length;
    }
  }
  return out;
}

/** Parses and checks the index (its CRC was already checked with the header's). */
export function decodeIndex(layout: ChunkedLayout, index: Uint8Array): ChunkedIndex {
  const v = new DataView(index.buffer, index.byteOffset, index.byteLength);
  const counts = new Uint32Array(layout.chunks);
  const firstKeys: Uint8Array[] = [];
  let p = 8 * layout.chunks;
  let total = 0;
  for (let i = 0; i < layout.chunks; i++) {
    counts[i] = v.getUint32(8 * i, true);
    total += counts[i]!;
    const length = v.getUint32(8 * i + 4, true);
    if (layout.routing === 'hash') {
      if (length !== 0) throw new FormatError(`chunk ${i} has a first key, but routing is by hash`);
      continue;
    }
    if (length > index.length - p) {
      throw new FormatError(`chunk ${i}'s first key (${length} bytes) runs past the index`);
    }
    const key = index.subarray(p, p + length);
    p += length;
    const previous = firstKeys[i - 1];
    if (previous !== undefined && compareBytes(previous, key) >= 0) {
      throw new FormatError(`first keys are not strictly increasing at chunk ${i}`);
    }
    firstKeys.push(key);
  }
  if (Math.ceil(p / 8) * 8 !== index.length) {
    throw new FormatError(
      `length mismatch: the index holds ${p} bytes of entries and keys, its length is ${index.length}`,
    );
  }
  for (let i = p; i < index.length; i++) {
    if (index[i] !== 0) throw new FormatError('index padding bytes are not zero');
  }
  if (total !== layout.keys) {
    throw new FormatError(
      `length mismatch: the chunks hold ${total} keys, the header says ${layout.keys}`,
    );
  }
  return { counts, firstKeys };
}
