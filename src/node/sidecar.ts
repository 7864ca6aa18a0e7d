/**
 * Sidecar filters: skip data files that cannot hold a key, as HBase skips the HFiles whose Bloom
 * filter says "no". Each data file gets a filter of the values of one field (a line, a CSV/TSV
 * column, an NDJSON field), stored next to it as `<file>.bloom`; a `SidecarSet` answers "which
 * of these files may contain this key".
 *
 * Guarantee: a file that holds the key is always listed (no false negatives), provided its sidecar
 * describes the file as it is now. A sidecar records the data file's size and modification time;
 * a file whose sidecar is missing, damaged, or older than the file is always listed and reported
 * in `unchecked` (size and mtime are what `make` and `rsync` compare: a rewrite that keeps both
 * is not detected). A file without the key is listed with probability about `fpp` (default 1%).
 * A sidecar that is damaged, unreadable, or holds a filter that cannot answer its kind of key
 * (another funnel) is reported for its file alone, and the other files keep answering.
 *
 * Progress: `onProgress(bytesRead, totalBytes)` over the data file's passes (two when capacity
 * is counted first); `signal` is checked between records; an aborted build writes nothing.
 *
 * Two key kinds, as HBase's Bloom types:
 * - `'row'` (default): the field's value (a string; JSON values other than strings as their JSON
 *   text exactly as written in the file, so the NDJSON number 42 is the key "42" and `1.0` is
 *   "1.0", not "1"). Query with `filesFor(value)`.
 * - `'rowcol'`: one key per cell: (row = the field's value, family, qualifier = the name of each
 *   other column or field whose value is not empty), encoded by `rowColKey` so that ("ab", "c")
 *   and ("a", "bc") never collide. Query with `filesForCell(row, family, qualifier)`.
 * Empty CSV/TSV values and JSON `null` give no key; for `'lines'` every line is a key.
 *
 * The sidecar file itself (layout, reading, writing): sidecar-file.ts; the query object
 * (`SidecarSet`): sidecar-set.ts.
 */

import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { checkPositiveInteger, checkProbability, show } from '../errors.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { ProgressOptions } from '../filters/filter.js';
import { rowColKey } from '../hash/composite-keys.js';
import { checkProgress, throwIfAborted } from './progress.js';
import { type SidecarInfo, sidecarPath, writeSidecar } from './sidecar-file.js';
import {
  type JsonRecord,
  jsonFieldKey,
  type ReadPosition,
  readRecords,
  type SidecarFormat,
} from './sidecar-records.js';

export {
  decodeSidecar,
  encodeSidecarPrefix,
  readSidecar,
  type SidecarInfo,
  sidecarPath,
} from './sidecar-file.js';
export type { SidecarFormat } from './sidecar-records.js';
export { SidecarSet, type UncheckedFile } from './sidecar-set.js';

/** Options of {@link buildSidecar}. */
export interface SidecarOptions extends ProgressOptions {
  format: SidecarFormat;
  /**
   * The key field. CSV/TSV: a column name (the first line is then a header) or a 0-based column
   * index. NDJSON: a property name or a dotted path (`"user.id"`). Not used for `'lines'`.
   */
  field?: string | number;
  /** CSV/TSV: whether the first line is a header; default: true when `field` is a name. */
  header?: boolean;
  /** `'row'` (default) or `'rowcol'` (see the module comment). */
  bloom?: 'row' | 'rowcol';
  /** ROWCOL: the column family of every cell; default `''`. */
  family?: string;
  /** ROWCOL: the columns or NDJSON fields that make cells; default: every other one. */
  qualifiers?: readonly string[];
  /** Target false positive rate; default 0.01. */
  fpp?: number;
  /** Keys to size for; default: counted in a first pass over the file. */
  capacity?: number;
}

/** Records between two abort checks and progress reports. */
const PROGRESS_EVERY = 4096;

interface KeySource {
  keys(record: unknown, columns: readonly string[] | null): Iterable<string | Uint8Array>;
}

function checkOptions(options: SidecarOptions): Required<
  Omit<SidecarOptions, 'capacity' | 'qualifiers' | 'field' | keyof ProgressOptions>
> & {
  field: string | number | null;
  qualifiers: string[] | null;
} {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const { format } = options;
  if (format !== 'lines' && format !== 'csv' && format !== 'tsv' && format !== 'ndjson') {
    throw new RangeError(`format must be 'lines', 'csv', 'tsv' or 'ndjson', got ${show(format)}`);
  }
  const bloom = options.bloom ?? 'row';
  if (bloom !== 'row' && bloom !== 'rowcol') {
    throw new RangeError(`bloom must be 'row' or 'rowcol', got ${show(bloom)}`);
  }
  const field = options.field ?? null;
  if (format === 'lines') {
    if (field !== null)
      throw new RangeError(`field is not used for format 'lines', got ${show(field)}`);
    if (bloom === 'rowcol')
      throw new RangeError("bloom 'rowcol' needs columns: use csv, tsv or ndjson");
  } else if (format === 'ndjson') {
    if (typeof field !== 'string' || field === '') {
      throw new RangeError(`field must be a property name for format 'ndjson', got ${show(field)}`);
    }
  } else if (
    !(typeof field === 'string' && field !== '') &&
    !(typeof field === 'number' && Number.isSafeInteger(field) && field >= 0)
  ) {
    throw new RangeError(
      `field must be a column name or a 0-based column index for format '${format}', got ${show(field)}`,
    );
  }
  const tabular = format === 'csv' || format === 'tsv';
  if (!tabular && options.header !== undefined) {
    throw new RangeError(
      `header is only used for csv and tsv, got ${show(options.header)} for '${format}'`,
    );
  }
  const header = tabular ? (options.header ?? typeof field === 'string') : false;
  if (typeof header !== 'boolean')
    throw new TypeError(`header must be a boolean, got ${show(header)}`);
  if (typeof field === 'string' && format !== 'ndjson' && !header) {
    throw new RangeError(`field ${show(field)} is a column name, so the file needs a header line`);
  }
  if (bloom === 'rowcol' && format !== 'ndjson' && !header) {
    throw new RangeError(
      "bloom 'rowcol' on CSV/TSV needs a header line: qualifiers are column names",
    );
  }
  const family = options.family ?? '';
  if (typeof family !== 'string')
    throw new TypeError(`family must be a string, got ${show(family)}`);
  let qualifiers: string[] | null = null;
  if (options.qualifiers !== undefined) {
    if (
      !Array.isArray(options.qualifiers) ||
      options.qualifiers.some((q) => typeof q !== 'string')
    ) {
      throw new TypeError(
        `qualifiers must be an array of strings, got ${show(options.qualifiers)}`,
      );
    }
    qualifiers = [...options.qualifiers];
  }
  const fpp = checkProbability('fpp', options.fpp ?? 0.01);
  return { format, field, header, bloom, family, qualifiers, fpp };
}

function keySource(o: ReturnType<typeof checkOptions>): KeySource {
  if (o.format === 'lines') {
    return { keys: (record) => [record as string] };
  }
  if (o.format === 'ndjson') {
    const field = o.field as string;
    return {
      *keys(input) {
        const record = input as JsonRecord;
        const row = jsonFieldKey(record, field);
        if (row === undefined) return;
        if (o.bloom === 'row') {
          yield row;
          return;
        }
        const { value } = record;
        const names =
          o.qualifiers ??
          (value !== null && typeof value === 'object' && !Array.isArray(value)
            ? Object.keys(value)
            : []);
        for (const q of names) {
          if (q === field) continue;
          const cell = jsonFieldKey(record, q);
          if (cell !== undefined && cell !== '') yield rowColKey(row, o.family, q);
        }
      },
    };
  }
  return {
    *keys(record, columns) {
      const fields = record as string[];
      const at = typeof o.field === 'number' ? o.field : columns!.indexOf(o.field as string);
      const row = fields[at];
      if (row === undefined || row === '') return;
      if (o.bloom === 'row') {
        yield row;
        return;
      }
      const names = o.qualifiers ?? columns!;
      for (const q of names) {
        const i = columns!.indexOf(q);
        if (i === at || i < 0) continue;
        const value = fields[i];
        if (value !== undefined && value !== '') yield rowColKey(row, o.family, q);
      }
    },
  };
}

/** How far a build is: bytes read in earlier passes, this pass's position, the total. */
interface BuildProgress extends ProgressOptions {
  before: number;
  total: number;
}

/** Reads `path` once, calling `each` for every key; returns the record and key counts. */
async function scan(
  path: string,
  o: ReturnType<typeof checkOptions>,
  progress: BuildProgress,
  each: (key: string | Uint8Array) => void,
): Promise<{ records: number; keys: number }> {
  const source = keySource(o);
  const { signal, onProgress } = progress;
  const position: ReadPosition = { bytes: 0 };
  const report = () => {
    throwIfAborted(signal);
    onProgress?.(progress.before + position.bytes, progress.total);
  };
  let columns: string[] | null = null;
  let records = 0;
  let keys = 0;
  for await (const record of readRecords(path, o.format, position)) {
    if (records % PROGRESS_EVERY === 0) report();
    if (columns === null && o.header && (o.format === 'csv' || o.format === 'tsv')) {
      columns = record as string[];
      if (typeof o.field === 'string' && !columns.includes(o.field)) {
        throw new RangeError(
          `${path}: no column named ${show(o.field)} in the header (${columns.map((c) => show(c)).join(', ')})`,
        );
      }
      for (const q of o.qualifiers ?? []) {
        if (!columns.includes(q))
          throw new RangeError(`${path}: no column named ${show(q)} in the header`);
      }
      continue;
    }
    records++;
    for (const key of source.keys(record, columns)) {
      each(key);
      keys++;
    }
  }
  report();
  progress.before += position.bytes;
  return { records, keys };
}

/**
 * Builds the sidecar filter of one data file and writes it to `<dataPath>.bloom` (atomically).
 * Throws if the data file changes while it is read.
 */
export async function buildSidecar(
  dataPath: string,
  options: SidecarOptions,
): Promise<SidecarInfo> {
  if (typeof dataPath !== 'string')
    throw new TypeError(`dataPath must be a string, got ${show(dataPath)}`);
  const o = checkOptions(options);
  if (options.capacity !== undefined) checkPositiveInteger('capacity', options.capacity);
  checkProgress(options);
  const before = await stat(dataPath);
  const progress: BuildProgress = {
    signal: options.signal,
    onProgress: options.onProgress,
    before: 0,
    total: before.size * (options.capacity === undefined ? 2 : 1),
  };
  let capacity: number;
  if (options.capacity !== undefined) capacity = options.capacity;
  else capacity = Math.max(1, (await scan(dataPath, o, progress, () => {})).keys);
  const filter = BloomFilter.create({
    capacity,
    fpp: o.fpp,
    funnel: o.bloom === 'row' ? 'string' : 'bytes',
  });
  const counts = await scan(dataPath, o, progress, (key) => {
    filter.add(key);
  });
  const after = await stat(dataPath);
  if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
    throw new Error(`${dataPath} changed while its sidecar was being built; build it again`);
  }
  const info: SidecarInfo = {
    source: basename(dataPath),
    size: before.size,
    mtimeMs: before.mtimeMs,
    format: o.format,
    field: o.field,
    header: o.header,
    bloom: o.bloom,
    family: o.family,
    qualifiers: o.qualifiers,
    records: counts.records,
    keys: counts.keys,
    fpp: o.fpp,
  };
  throwIfAborted(options.signal);
  await writeSidecar(sidecarPath(dataPath), info, filter);
  return info;
}

/**
 * Builds the sidecars of several data files, one after another, with the same options.
 * `onProgress(filesDone, files)` after each file; an abort stops before the next file (the
 * sidecars already written stay, each complete).
 */
export async function buildSidecars(
  dataPaths: readonly string[],
  options: SidecarOptions,
): Promise<SidecarInfo[]> {
  if (!Array.isArray(dataPaths)) {
    throw new TypeError(`dataPaths must be an array of paths, got ${show(dataPaths)}`);
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${show(options)}`);
  }
  const { onProgress, ...each } = options;
  checkProgress(options);
  const out: SidecarInfo[] = [];
  for (const path of dataPaths) {
    out.push(await buildSidecar(path, each as SidecarOptions));
    onProgress?.(out.length, dataPaths.length);
  }
  return out;
}
