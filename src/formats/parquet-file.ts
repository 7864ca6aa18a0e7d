/**
 * Reading the split-block Bloom filters that Parquet writers (parquet-java, Arrow, DuckDB, ...)
 * store in a file, so that a value can be ruled out of a row group without reading its pages.
 * Browser-safe: it reads from bytes in memory or from any source of byte ranges (bloomkit/node
 * adds a file path variant).
 *
 * The footer (FileMetaData) is parsed with hyparquet; for each column chunk whose ColumnMetaData
 * has `bloom_filter_offset` (field 14), the header and bitset are read from there
 * (`bloom_filter_length`, field 15, when the writer recorded it; else the header is parsed first
 * to learn numBytes). Only the footer and the filters are read, never the data pages.
 *
 * Hostile files: every offset and length is checked against the real size before anything is
 * read or allocated, the filters together may not claim more bytes than the file has (so the
 * work is bounded by the file, however many column chunks point at the same bytes), the filter
 * headers are read by the bounded Thrift reader (parquet-thrift.ts), and every failure is a
 * `FormatError` naming the file, the column, the row group, the field and the value; hyparquet's
 * own errors on a damaged footer are wrapped the same way (I/O errors of the source pass through).
 */

import { parquetMetadataAsync } from 'hyparquet';
import { FormatError, show } from '../errors.js';
import { type ParquetPhysicalType, SplitBlockBloomFilter } from '../filters/split-block/filter.js';
import { decodeParquetHeader } from '../filters/split-block/format.js';

/** One column chunk's Bloom filter. */
export interface ParquetBloomFilterEntry {
  /** The column's path in the schema, dotted (`a.b.c` for nested columns). */
  column: string;
  /** Index of the row group (0-based). */
  rowGroup: number;
  /** The column's physical type, which decides how `filter.has(value)` encodes a value. */
  type: ParquetPhysicalType;
  /** The filter; `has(value)` is false only if `value` is certainly not in this column chunk. */
  filter: SplitBlockBloomFilter;
}

/** Byte ranges of a Parquet file, wherever it lives. */
export interface ParquetByteSource {
  /** The file's size in bytes. */
  readonly byteLength: number;
  /** Bytes [start, end) of the file (`end` ≤ `byteLength`). */
  read(start: number, end: number): Promise<Uint8Array>;
}

const SUPPORTED = new Set<string>([
  'INT32',
  'INT64',
  'INT96',
  'FLOAT',
  'DOUBLE',
  'BYTE_ARRAY',
  'FIXED_LEN_BYTE_ARRAY',
]);

/** How many bytes to read when the writer did not record a filter's length (header first). */
const HEADER_PROBE = 256;

/**
 * Reads every split-block Bloom filter of the Parquet file held in `bytes` (the whole file): one
 * entry per column chunk that has one, in row-group then column order. BOOLEAN columns (no
 * defined value encoding) are skipped. Throws `FormatError` for a damaged or foreign file, naming
 * `name` (default "Parquet file").
 *
 *   const entries = await readParquetBloomFilters(new Uint8Array(await (await fetch(url)).arrayBuffer()));
 */
export function readParquetBloomFilters(
  bytes: Uint8Array | ArrayBuffer,
  name = 'Parquet file',
): Promise<ParquetBloomFilterEntry[]> {
  const view =
    bytes instanceof ArrayBuffer
      ? new Uint8Array(bytes)
      : bytes instanceof Uint8Array
        ? bytes
        : undefined;
  if (view === undefined) {
    return Promise.reject(
      new TypeError(`bytes must be a Uint8Array or an ArrayBuffer, got ${show(bytes)}`),
    );
  }
  return readParquetBloomFiltersFrom(
    { byteLength: view.length, read: async (start, end) => view.subarray(start, end) },
    name,
  );
}

/** {@link readParquetBloomFilters} over any {@link ParquetByteSource}; errors name `name`. */
export async function readParquetBloomFiltersFrom(
  source: ParquetByteSource,
  name: string,
): Promise<ParquetBloomFilterEntry[]> {
  const size = source.byteLength;
  const ioErrors = new Set<unknown>();
  const read = async (start: number, end: number): Promise<Uint8Array> => {
    try {
      return await source.read(start, end);
    } catch (error) {
      ioErrors.add(error);
      throw error;
    }
  };
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>;
  try {
    metadata = await parquetMetadataAsync({
      byteLength: size,
      slice: async (start: number, end?: number) => {
        const bytes = await read(start, end ?? size);
        const copy = new Uint8Array(bytes.length);
        copy.set(bytes);
        return copy.buffer;
      },
    });
  } catch (error) {
    if (ioErrors.has(error)) throw error;
    throw new FormatError(
      `${name}: not a readable Parquet footer (${size} bytes): ${(error as Error)?.message ?? show(error)}`,
      { cause: error },
    );
  }
  function fail(where: string, message: string): never {
    throw new FormatError(`${name}: ${where}: ${message}`);
  }
  const entries: ParquetBloomFilterEntry[] = [];
  let claimed = 0;
  const rowGroups: unknown = metadata.row_groups;
  if (!Array.isArray(rowGroups)) fail('footer', `row_groups is ${show(rowGroups)}, not a list`);
  for (let rowGroup = 0; rowGroup < metadata.row_groups.length; rowGroup++) {
    const columns: unknown = metadata.row_groups[rowGroup]?.columns;
    if (!Array.isArray(columns)) {
      fail(`row group ${rowGroup}`, `columns is ${show(columns)}, not a list`);
    }
    for (const chunk of metadata.row_groups[rowGroup]!.columns) {
      const meta = chunk?.meta_data;
      if (meta?.bloom_filter_offset === undefined) continue;
      if (!SUPPORTED.has(meta.type)) continue;
      const path: unknown = meta.path_in_schema;
      const column = Array.isArray(path) ? path.join('.') : '?';
      const where = `column ${column}, row group ${rowGroup}`;
      const offset = toSafeInteger(meta.bloom_filter_offset);
      if (offset === undefined || offset < 0 || offset >= size) {
        fail(
          where,
          `bloom_filter_offset ${show(meta.bloom_filter_offset)} is outside the ${size}-byte file`,
        );
      }
      let length: number | undefined;
      if (meta.bloom_filter_length !== undefined) {
        length = toSafeInteger(meta.bloom_filter_length);
        if (length === undefined || length <= 0 || length > size - offset) {
          fail(
            where,
            `bloom_filter_length ${show(meta.bloom_filter_length)} at offset ${offset} does not fit the ${size}-byte file (at most ${size - offset})`,
          );
        }
      }
      const header = (bytes: Uint8Array) => {
        try {
          return decodeParquetHeader(bytes);
        } catch (error) {
          if (!(error instanceof FormatError)) throw error;
          return fail(`${where}, bloom filter at ${offset}`, error.message);
        }
      };
      if (length === undefined) {
        const head = header(await read(offset, Math.min(size, offset + HEADER_PROBE)));
        length = head.headerLength + head.numBytes;
        if (length > size - offset) {
          fail(
            where,
            `a ${length}-byte bloom filter at ${offset} does not fit the ${size}-byte file`,
          );
        }
      }
      claimed += length;
      if (claimed > size) {
        fail(
          where,
          `the bloom filters claim ${claimed} bytes so far, more than the ${size}-byte file holds`,
        );
      }
      const bytes = await read(offset, offset + length);
      const { headerLength, numBytes } = header(bytes);
      if (headerLength + numBytes > bytes.length) {
        fail(
          where,
          `bloom filter at ${offset}: a ${headerLength}-byte header and ${numBytes}-byte bitset need ${headerLength + numBytes} bytes, bloom_filter_length is ${length}`,
        );
      }
      const type = meta.type as ParquetPhysicalType;
      const filter = SplitBlockBloomFilter.fromBitset(
        bytes.subarray(headerLength, headerLength + numBytes),
        { type },
      );
      entries.push({ column, rowGroup, type, filter });
    }
  }
  return entries;
}

function toSafeInteger(value: unknown): number | undefined {
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : undefined;
  }
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}
