/**
 * Parts of the core that the page uses when this build of the library has them: a feature is
 * looked up on the barrel at run time, so the page builds against any version of the core and
 * gains the feature when the core exports it.
 */

import type { ParquetPhysicalType, SplitBlockBloomFilter } from '../../src/index.js';
import * as core from '../../src/index.js';

/** One column chunk's filter, as the core's browser-safe Parquet reader returns it. */
export interface ParquetEntry {
  readonly column: string;
  readonly rowGroup: number;
  readonly type: ParquetPhysicalType;
  readonly filter: SplitBlockBloomFilter;
}

export type ParquetReader = (bytes: Uint8Array, name?: string) => Promise<ParquetEntry[]>;

const lib = core as unknown as Record<string, unknown>;

/** `readParquetBloomFilters(bytes, name)` from the core barrel, or null when it has none. */
export const readParquet: ParquetReader | null =
  typeof lib.readParquetBloomFilters === 'function'
    ? (lib.readParquetBloomFilters as ParquetReader)
    : null;
