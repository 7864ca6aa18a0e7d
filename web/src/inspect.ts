/**
 * Reading a dropped file: which format it is (bloomkit's native container, Guava's `writeTo`
 * bytes), the filter it holds and everything the library can say about it. The bytes never
 * leave the page.
 */

import { wordDensity } from '../../src/formats/view.js';
import {
  BloomFilter,
  codecOf,
  DcsoBloomFilter,
  detectFormat,
  FilterCascade,
  type Funnel,
  fromBytes,
  type Key,
  SplitBlockBloomFilter,
} from '../../src/index.js';
import { type ParquetEntry, readParquet } from './optional.js';
import { formatBytes, formatInt, formatRate } from './units.js';

/** Whatever `fromBytes` returns: every filter type, read-only ones included. */
export type AnyFilter = ReturnType<typeof fromBytes>;

export type FileFormat =
  | 'native'
  | 'guava'
  | 'parquet'
  | 'parquet-bloom'
  | 'mlbf'
  | 'dcso'
  | 'unknown';

/** Funnels a Guava or MLBF file can be read with (their bytes do not record the funnel). */
export const GUAVA_FUNNELS = ['string', 'long', 'int'] as const;
export type GuavaFunnel = (typeof GUAVA_FUNNELS)[number];

/** The format the bytes look like (the core's `detectFormat`, from the first bytes). */
export function sniff(bytes: Uint8Array): FileFormat {
  const f = detectFormat(bytes);
  if (f === 'native' || f === 'chunked') return 'native';
  if (f === 'parquet-file') return 'parquet';
  return f;
}

/** A part of a filter: a scalable layer, a Parquet row group. */
export interface PartRow {
  readonly label: string;
  readonly cells: readonly string[];
}

export interface Inspection {
  readonly format: FileFormat;
  readonly filter: AnyFilter;
  readonly type: string;
  readonly shape: readonly [string, string][];
  readonly bytes: number;
  /** Fraction of cells set (bits, counters above 0, slots used). */
  readonly fill: number;
  readonly estimatedCount: number;
  readonly fpr: number;
  /** Density of set cells in up to 512 equal runs, for the fill map. */
  readonly density: Float32Array;
  readonly partHeader: readonly string[];
  readonly parts: readonly PartRow[];
  /** The key kind the filter takes. */
  readonly funnel: Funnel;
  /**
   * Answers for one typed key: one line for a single filter, one per row group for a Parquet
   * column (`column` picks it).
   */
  check(text: string, column?: string): { label: string; answer: boolean }[];
  /** Columns that can be checked (Parquet), else empty. */
  readonly columns: readonly string[];
}

/**
 * Reads `bytes` (native, Parquet, or Guava / MLBF with `guavaFunnel`, since their bytes do not
 * record the key encoding); throws the library's error when the bytes are bad.
 */
export async function inspect(
  bytes: Uint8Array,
  guavaFunnel: GuavaFunnel = 'string',
  name = 'file',
): Promise<Inspection> {
  const format = sniff(bytes);
  if (format === 'parquet') {
    if (readParquet === null) {
      throw new RangeError('this build of the library has no browser-side Parquet reader');
    }
    return describeParquet(await readParquet(bytes, name), bytes.length);
  }
  if (format === 'unknown') {
    throw new RangeError(
      `not a filter file this page reads: ${bytes.length} bytes that are none of bloomkit's native format, Guava's writeTo bytes, a Parquet file or filter, an MLBF cascade, or a DCSO bloom file`,
    );
  }
  let filter: AnyFilter;
  if (format === 'guava') filter = BloomFilter.fromGuava(bytes, { funnel: guavaFunnel });
  else if (format === 'parquet-bloom') filter = SplitBlockBloomFilter.fromParquet(bytes);
  else if (format === 'dcso') filter = DcsoBloomFilter.fromDcso(bytes);
  else if (format === 'mlbf') {
    const cascade = FilterCascade.fromMlbf(bytes, { funnel: guavaFunnel });
    if (cascade === null) throw new RangeError('this MLBF file is empty: it holds no cascade');
    filter = cascade;
  } else filter = fromBytes(bytes);
  return describe(format, filter, bytes.length);
}

/** What the bytes' format adds to a type's title. */
const FORMAT_NOTE: Partial<Record<FileFormat, string>> = {
  guava: 'Guava',
  mlbf: 'MLBF',
  dcso: 'DCSO bloom file',
};

/**
 * The inspection of one filter: its row of the codec table says what to show of it (`view`),
 * so every type the library reads is shown, a new one included.
 */
export function describe(format: FileFormat, filter: AnyFilter, size: number): Inspection {
  const common = {
    format,
    filter,
    bytes: size,
    estimatedCount: filter.estimatedCount(),
    fpr: 'expectedFpp' in filter ? (filter as { expectedFpp(): number }).expectedFpp() : Number.NaN,
    funnel: filter.funnel,
    partHeader: [] as string[],
    parts: [] as PartRow[],
    columns: [] as string[],
    check: (text: string) => [
      {
        label: '',
        answer: (filter as { has(key: Key): boolean }).has(parseKey(filter.funnel, text)),
      },
    ],
  };
  const view = codecOf(filter)?.view?.(filter);
  if (view === undefined) {
    return {
      ...common,
      type: 'A filter this page does not describe in detail',
      shape: [['size', formatBytes(size)]],
      fill: Number.NaN,
      density: new Float32Array(0),
    };
  }
  const note = FORMAT_NOTE[format];
  return {
    ...common,
    type: note === undefined ? view.title : `${view.title} (${note})`,
    shape: view.shape,
    fill: view.fill,
    density: view.density,
    ...(view.fpr === undefined ? {} : { fpr: view.fpr }),
    ...(view.parts === undefined ? {} : { parts: view.parts, partHeader: view.partHeader ?? [] }),
  };
}

/** A Parquet file: one split-block filter per column chunk, summed over the file. */
export function describeParquet(entries: readonly ParquetEntry[], size: number): Inspection {
  if (entries.length === 0) {
    throw new RangeError('this Parquet file has no Bloom filters (its writer did not write any)');
  }
  let bits = 0;
  let set = 0;
  let count = 0;
  let fpr = 0;
  const parts: PartRow[] = entries.map((e) => {
    const fill = e.filter.bitCount / e.filter.bitSize;
    bits += e.filter.bitSize;
    set += e.filter.bitCount;
    count += e.filter.estimatedCount();
    fpr += e.filter.expectedFpp();
    return {
      label: String(e.rowGroup),
      cells: [
        e.column,
        e.type,
        formatBytes(e.filter.bitSize / 8),
        `${(100 * fill).toFixed(1)}%`,
        formatInt(e.filter.estimatedCount()),
        formatRate(e.filter.expectedFpp()),
      ],
    };
  });
  const columns = [...new Set(entries.map((e) => e.column))];
  const rowGroups = new Set(entries.map((e) => e.rowGroup)).size;
  const first = entries[0]!;
  return {
    format: 'parquet',
    filter: first.filter,
    type: `Parquet file: ${entries.length} split-block filters`,
    shape: [
      ['row groups with filters', formatInt(rowGroups)],
      ['columns with filters', columns.join(', ')],
      ['filter bytes in all', formatBytes(bits / 8)],
    ],
    bytes: size,
    fill: set / bits,
    estimatedCount: count,
    fpr: fpr / entries.length,
    density: wordDensity(first.filter.bits.data),
    partHeader: ['Row group', 'Column', 'Type', 'Filter', 'Fill', 'Distinct values (est.)', 'Rate'],
    parts,
    funnel: first.filter.funnel,
    columns,
    check: (text, column = columns[0]) =>
      entries
        .filter((e) => e.column === column)
        .map((e) => ({
          label: `row group ${e.rowGroup}`,
          answer: e.filter.has(parseParquetValue(e.type, text)),
        })),
  };
}

/** A typed value as the column's physical type takes it (text, integer, floating point). */
export function parseParquetValue(type: string, text: string): Key {
  if (type === 'INT64') return parseKey('long', text);
  if (type === 'INT32') return parseKey('int', text);
  if (type === 'FLOAT' || type === 'DOUBLE') {
    const v = Number(text.trim());
    if (text.trim() === '' || Number.isNaN(v))
      throw new RangeError(`a ${type} value must be a number, got "${text}"`);
    return v;
  }
  return text;
}

/** Parses a key typed for a filter of `funnel`: text for strings, an integer for int/long. */
export function parseKey(funnel: Funnel, text: string): string | number | bigint {
  if (funnel === 'long') {
    if (!/^-?\d+$/.test(text.trim()))
      throw new RangeError(`a long key must be an integer, got "${text}"`);
    return BigInt(text.trim());
  }
  if (funnel === 'int') {
    const v = Number(text.trim());
    if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31)
      throw new RangeError(`an int key must be a 32-bit integer, got "${text}"`);
    return v;
  }
  return text;
}
