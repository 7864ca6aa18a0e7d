/**
 * Bytes of Parquet's split-block Bloom filter: the thrift header Parquet writers store before the
 * bitset, and bloomkit's native format (filter type id 6, hash scheme 4 = `xxh64SplitBlock`).
 *
 * Parquet (parquet.thrift, thrift compact protocol):
 *
 *   struct BloomFilterHeader {
 *     1: required i32 numBytes;                          // bitset length, a multiple of 32
 *     2: required BloomFilterAlgorithm algorithm;        // union { 1: SplitBlockAlgorithm BLOCK }
 *     3: required BloomFilterHash hash;                  // union { 1: XxHash XXHASH }
 *     4: required BloomFilterCompression compression;    // union { 1: Uncompressed UNCOMPRESSED }
 *   }
 *
 * which a writer emits as `15 <zigzag varint numBytes> 1C 1C 00 00 1C 1C 00 00 1C 1C 00 00 00`
 * (16 bytes for a 4 KiB bitset, as DuckDB writes it), followed by the bitset: 32-bit words
 * little-endian. The reader below accepts any field order and skips unknown fields.
 *
 * Native parameters (16 bytes, little-endian):
 *
 * | offset | size | field                                                   |
 * |--------|------|---------------------------------------------------------|
 * | 0      | 8    | number of 256-bit blocks z, u64 (1..2^28)               |
 * | 8      | 4    | Parquet physical type, u32 (parquet.thrift `Type` enum) |
 * | 12     | 4    | reserved, 0                                             |
 *
 * Native payload: the Parquet bitset, 32·z bytes. The header's funnel byte holds the funnel
 * nearest to the type (INT32 → int, INT64 → long, BYTE_ARRAY → string, else bytes).
 *
 * {@link splitBlockFormat} is this type for the word-payload format (formats/word-payload.ts), as
 * for the classic filter: parts whose payload views the filter's words, the decoder (with
 * `{ copy: false }` the words view a 4-byte-aligned payload on a little-endian host) and the
 * streaming sink.
 */

import { FormatError } from '../../errors.js';
import {
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  type NativeHeader,
  setU64,
} from '../../formats/native.js';
import { withSink } from '../../formats/native-type.js';
import { CompactReader } from '../../formats/parquet-thrift.js';
import { type WordType, wordFormatCore, wordSink } from '../../formats/word-payload.js';
import { FUNNEL_IDS, type Funnel } from '../../hash/keys.js';
import type { SplitBlockBloomFilter } from './filter.js';
import {
  MAX_SPLIT_BLOCKS,
  PARQUET_FUNNELS,
  PARQUET_TYPE_IDS,
  type ParquetPhysicalType,
  SPLIT_BLOCK_BITS,
} from './sizing.js';

// ------------------------------------------------------------------------------------------------
// Parquet's thrift header

/** The thrift compact bytes of a `BloomFilterHeader` for a bitset of `numBytes` bytes. */
export function encodeParquetHeader(numBytes: number): Uint8Array {
  const out: number[] = [0x15];
  let z = numBytes * 2; // zigzag of a non-negative i32
  while (z >= 0x80) {
    out.push((z & 0x7f) | 0x80);
    z = Math.floor(z / 128);
  }
  out.push(z);
  // algorithm = BLOCK, hash = XXHASH, compression = UNCOMPRESSED: each a union whose field 1 is
  // an empty struct.
  for (let i = 0; i < 3; i++) out.push(0x1c, 0x1c, 0x00, 0x00);
  out.push(0x00);
  return Uint8Array.from(out);
}

/** What {@link decodeParquetBloomFilter} reads from a header. */
export interface ParquetBloomFilterHeader {
  /** Bitset length in bytes. */
  readonly numBytes: number;
  /** Header length in bytes: the bitset starts there. */
  readonly headerLength: number;
}

/**
 * Reads the thrift `BloomFilterHeader` at the start of `bytes` (the bitset need not follow).
 * Throws `FormatError` unless the filter is BLOCK / XXHASH / UNCOMPRESSED with a positive
 * numBytes that is a multiple of 32, or if the header itself is cut short.
 */
export function decodeParquetHeader(bytes: Uint8Array): ParquetBloomFilterHeader {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array');
  const r = new CompactReader(bytes, 0, 'Parquet bloom filter header');
  let numBytes = -1;
  let algorithm = -1;
  let hash = -1;
  let compression = -1;
  r.struct((id, type) => {
    if (id === 1 && type === 5) numBytes = r.zigzag('numBytes');
    else if (id === 2 && type === 12) algorithm = r.union('algorithm', 1);
    else if (id === 3 && type === 12) hash = r.union('hash', 1);
    else if (id === 4 && type === 12) compression = r.union('compression', 1);
    else r.skip(type, 1);
  }, 0);
  if (r.pos > bytes.length) throw new FormatError('truncated Parquet bloom filter header');
  if (!(numBytes > 0) || numBytes % 32 !== 0 || numBytes / 32 > MAX_SPLIT_BLOCKS) {
    throw new FormatError(
      `Parquet bloom filter numBytes must be a positive multiple of 32 up to ${MAX_SPLIT_BLOCKS * 32}, got ${numBytes}`,
    );
  }
  if (algorithm !== 1) {
    throw new FormatError(`unsupported Parquet bloom filter algorithm ${algorithm} (1 = BLOCK)`);
  }
  if (hash !== 1)
    throw new FormatError(`unsupported Parquet bloom filter hash ${hash} (1 = XXHASH)`);
  if (compression !== 1) {
    throw new FormatError(
      `unsupported Parquet bloom filter compression ${compression} (1 = UNCOMPRESSED)`,
    );
  }
  return { numBytes, headerLength: r.pos };
}

/** {@link decodeParquetHeader}, and checks that the whole bitset follows the header. */
export function decodeParquetBloomFilter(bytes: Uint8Array): ParquetBloomFilterHeader {
  const header = decodeParquetHeader(bytes);
  if (bytes.length < header.headerLength + header.numBytes) {
    throw new FormatError(
      `truncated Parquet bloom filter: ${header.headerLength}-byte header and ${header.numBytes}-byte bitset, got ${bytes.length} bytes`,
    );
  }
  return header;
}

// ------------------------------------------------------------------------------------------------
// bloomkit's native format

/** The physical type stored under `id` (looked up at call time: this module and the filter's import each other). */
function typeFromId(id: number): ParquetPhysicalType | undefined {
  for (const [name, value] of Object.entries(PARQUET_TYPE_IDS)) {
    if (value === id) return name as ParquetPhysicalType;
  }
  return undefined;
}

/**
 * Checks the parameters, including that L matches z and that the funnel is the type's (the
 * header's fields are checked).
 */
function checkSplitBlock(
  header: NativeHeader,
  params: DataView,
  funnel: Funnel,
): { blocks: number; type: ParquetPhysicalType } {
  const blocks = getU64(params, 0, 'block count');
  if (blocks < 1 || blocks > MAX_SPLIT_BLOCKS) {
    throw new FormatError(`bad block count ${blocks}: must be 1..${MAX_SPLIT_BLOCKS}`);
  }
  const typeId = params.getUint32(8, true);
  const type = typeFromId(typeId);
  if (type === undefined) throw new FormatError(`unknown Parquet physical type id ${typeId}`);
  if (params.getUint32(12, true) !== 0) {
    throw new FormatError('reserved split-block parameter bytes are not zero');
  }
  if (header.payloadLength !== blocks * 32) {
    throw new FormatError(
      `payload has ${header.payloadLength} bytes, ${blocks} blocks need ${blocks * 32}`,
    );
  }
  // The funnel follows from the type.
  if (funnel !== PARQUET_FUNNELS[type]) {
    throw new FormatError(
      `funnel id ${header.funnel} does not match a ${type} split-block filter (expected ${FUNNEL_IDS[PARQUET_FUNNELS[type]]})`,
    );
  }
  return { blocks, type };
}

const SPLIT_BLOCK: WordType<{ blocks: number; type: ParquetPhysicalType }, SplitBlockBloomFilter> =
  {
    native: {
      typeId: FILTER_TYPES.splitBlock,
      what: 'split-block filter',
      paramsBytes: 16,
      schemes: { xxh64SplitBlock: 4 satisfies typeof HASH_SCHEMES.xxh64SplitBlock },
    },
    writeParams(v, filter) {
      setU64(v, 0, filter.blocks);
      v.setUint32(8, PARQUET_TYPE_IDS[filter.type], true);
    },
    check: checkSplitBlock,
    bitsOf: (shape) => shape.blocks * SPLIT_BLOCK_BITS,
  };

/** The split-block filter in the native format, without the streaming sink (what the class uses). */
export const splitBlockFormatCore = /* @__PURE__ */ wordFormatCore(SPLIT_BLOCK);

/** The split-block filter in the native format. */
export const splitBlockFormat = /* @__PURE__ */ withSink(
  splitBlockFormatCore,
  /* @__PURE__ */ wordSink(SPLIT_BLOCK),
);
