/**
 * Reading the split-block Bloom filters that Parquet writers (parquet-java, Arrow, DuckDB, ...)
 * store in a file, so that a value can be ruled out of a row group without reading its pages.
 *
 * The file's footer (FileMetaData) is parsed with hyparquet; for each column chunk whose
 * ColumnMetaData has `bloom_filter_offset` (field 14), the header and bitset are read from there
 * (`bloom_filter_length`, field 15, when the writer recorded it; else the header is parsed first
 * to learn numBytes). Only the footer and the filters are read, never the data pages.
 */

import { open } from 'node:fs/promises';
import { parquetMetadataAsync } from 'hyparquet';
import { FormatError } from '../errors.js';
import { type ParquetPhysicalType, SplitBlockBloomFilter } from '../filters/split-block.js';
import { decodeParquetHeader } from '../formats/split-block-codec.js';

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
const HEADER_PROBE = 64;

/**
 * Reads every split-block Bloom filter stored in the Parquet file at `path`: one entry per
 * column chunk that has one, in row-group then column order. BOOLEAN columns (no defined value
 * encoding) are skipped. Throws `FormatError` for a filter whose header is not BLOCK / XXHASH /
 * UNCOMPRESSED or that lies outside the file; hyparquet's errors for a file that is not Parquet.
 *
 *   for (const { column, rowGroup, filter } of await readParquetBloomFilters('t.parquet')) {
 *     if (column === 'user_id' && !filter.has(42n)) console.log(`row group ${rowGroup}: no 42`);
 *   }
 */
export async function readParquetBloomFilters(path: string): Promise<ParquetBloomFilterEntry[]> {
  if (typeof path !== 'string') throw new TypeError(`path must be a string, got ${typeof path}`);
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const read = async (start: number, end: number): Promise<Uint8Array<ArrayBuffer>> => {
      const out = new Uint8Array(end - start);
      let done = 0;
      while (done < out.length) {
        const { bytesRead } = await file.read(out, done, out.length - done, start + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === out.length ? out : out.subarray(0, done);
    };
    const metadata = await parquetMetadataAsync({
      byteLength: size,
      slice: async (start: number, end?: number) => {
        const bytes = await read(start, end ?? size);
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      },
    });
    const entries: ParquetBloomFilterEntry[] = [];
    for (let rowGroup = 0; rowGroup < metadata.row_groups.length; rowGroup++) {
      for (const chunk of metadata.row_groups[rowGroup]!.columns) {
        const meta = chunk.meta_data;
        if (meta?.bloom_filter_offset === undefined) continue;
        if (!SUPPORTED.has(meta.type)) continue;
        const column = meta.path_in_schema.join('.');
        const offset = Number(meta.bloom_filter_offset);
        if (!(offset >= 0 && offset < size)) {
          throw new FormatError(
            `column ${column}, row group ${rowGroup}: bloom_filter_offset ${offset} is outside the ${size}-byte file`,
          );
        }
        let length = meta.bloom_filter_length;
        if (length === undefined) {
          const prefix = await read(offset, Math.min(size, offset + HEADER_PROBE));
          const head = decodeParquetHeader(prefix);
          length = head.headerLength + head.numBytes;
        }
        if (!(length > 0 && offset + length <= size)) {
          throw new FormatError(
            `column ${column}, row group ${rowGroup}: a ${length}-byte bloom filter at ${offset} does not fit the ${size}-byte file`,
          );
        }
        const type = meta.type as ParquetPhysicalType;
        const filter = SplitBlockBloomFilter.fromParquet(await read(offset, offset + length), {
          type,
        });
        entries.push({ column, rowGroup, type, filter });
      }
    }
    return entries;
  } finally {
    await file.close();
  }
}
