/**
 * `readParquetBloomFilters` for a file path, reading only the footer and the filters with
 * positional reads (the browser-safe reader of bytes is in formats/parquet-file.ts; this adds the
 * file). Errors name the file.
 */

import { show } from '../errors.js';
import {
  type ParquetBloomFilterEntry,
  readParquetBloomFilters as readFromBytes,
  readParquetBloomFiltersFrom,
} from '../formats/parquet-file.js';
import { openRegular } from './regular-file.js';

export type { ParquetBloomFilterEntry } from '../formats/parquet-file.js';

/**
 * Reads every split-block Bloom filter stored in a Parquet file, given its path (only the footer
 * and the filters are read) or its bytes: one entry per column chunk that has one, in row-group
 * then column order. BOOLEAN columns (no defined value encoding) are skipped. Throws
 * `FormatError` naming the file for a damaged or foreign one; I/O errors as Node gives them.
 *
 *   for (const { column, rowGroup, filter } of await readParquetBloomFilters('t.parquet')) {
 *     if (column === 'user_id' && !filter.has(42n)) console.log(`row group ${rowGroup}: no 42`);
 *   }
 */
export async function readParquetBloomFilters(
  pathOrBytes: string | Uint8Array | ArrayBuffer,
): Promise<ParquetBloomFilterEntry[]> {
  if (pathOrBytes instanceof Uint8Array || pathOrBytes instanceof ArrayBuffer) {
    return readFromBytes(pathOrBytes);
  }
  if (typeof pathOrBytes !== 'string') {
    throw new TypeError(
      `pathOrBytes must be a path, a Uint8Array or an ArrayBuffer, got ${show(pathOrBytes)}`,
    );
  }
  const path = pathOrBytes;
  const { handle: file, info } = await openRegular(path);
  try {
    const { size } = info;
    return await readParquetBloomFiltersFrom(
      {
        byteLength: size,
        async read(start, end) {
          const out = new Uint8Array(end - start);
          let done = 0;
          while (done < out.length) {
            const { bytesRead } = await file.read(out, done, out.length - done, start + done);
            if (bytesRead === 0) break;
            done += bytesRead;
          }
          return done === out.length ? out : out.subarray(0, done);
        },
      },
      path,
    );
  } finally {
    await file.close();
  }
}
