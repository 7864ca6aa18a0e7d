/**
 * The sidecar file: a data file's filter and what it was built from, stored as `<file>.bloom`.
 *
 * Sidecar file layout (all little-endian):
 *
 * | offset | size | field                                                             |
 * |--------|------|-------------------------------------------------------------------|
 * | 0      | 4    | magic `BLMS` (42 4C 4D 53)                                        |
 * | 4      | 2    | sidecar version, u16 = 1                                          |
 * | 6      | 2    | reserved, 0                                                       |
 * | 8      | 4    | M, metadata length, u32 (at most 1 MiB)                           |
 * | 12     | 4    | CRC-32C of bytes [0, 12) followed by the metadata                 |
 * | 16     | M    | metadata: UTF-8 JSON (see `SidecarInfo`)                          |
 * | 16 + M | 0..7 | zero bytes up to a multiple of 8                                  |
 * | …      | …    | the filter: one native container (`BLMK`…, docs/FORMAT.md) to the end |
 *
 * Reading is strict: a sidecar from elsewhere may hold anything, so every metadata field is
 * checked, and so is the filter's key encoding against the sidecar's kind (`'row'` needs a
 * `'string'` filter, `'rowcol'` a `'bytes'` one). Every failure is a `FormatError` that names the
 * sidecar file.
 */

import { readFile } from 'node:fs/promises';
import { FormatError, show } from '../errors.js';
import type { BloomFilter } from '../filters/bloom/filter.js';
import type { ReadonlyMembershipFilter } from '../filters/filter.js';
import { crc32c } from '../formats/crc32c.js';
import { fromBytes } from '../formats/registry.js';
import { writeAtomically } from './atomic-file.js';
import { saveToHandle } from './io.js';
import type { SidecarFormat } from './sidecar-records.js';

/** What a sidecar records (its metadata JSON). */
export interface SidecarInfo {
  /** Base name of the data file. */
  source: string;
  /** Data file size and modification time when the sidecar was built. */
  size: number;
  mtimeMs: number;
  format: SidecarFormat;
  field: string | number | null;
  header: boolean;
  bloom: 'row' | 'rowcol';
  family: string;
  qualifiers: string[] | null;
  /** Records read and keys added. */
  records: number;
  keys: number;
  fpp: number;
}

const MAGIC = 0x534d4c42; // "BLMS" as a little-endian u32
const VERSION = 1;
const MAX_META = 1 << 20;
/** Where the sidecar of `dataPath` lives. */
export function sidecarPath(dataPath: string): string {
  return `${dataPath}.bloom`;
}

/** The sidecar prefix: header, metadata and padding (bytes before the filter). */
export function encodeSidecarPrefix(info: SidecarInfo): Uint8Array {
  const meta = new TextEncoder().encode(JSON.stringify(info));
  if (meta.length > MAX_META)
    throw new RangeError(`sidecar metadata is ${meta.length} bytes, more than ${MAX_META}`);
  const out = new Uint8Array(16 + Math.ceil(meta.length / 8) * 8);
  const v = new DataView(out.buffer);
  v.setUint32(0, MAGIC, true);
  v.setUint16(4, VERSION, true);
  v.setUint32(8, meta.length, true);
  out.set(meta, 16);
  v.setUint32(12, crc32c(meta, crc32c(out.subarray(0, 12))), true);
  return out;
}

export async function writeSidecar(
  path: string,
  info: SidecarInfo,
  filter: BloomFilter,
): Promise<void> {
  // The one atomic writer of every output (atomic-file.ts): temp file, fsync, rename.
  await writeAtomically(path, async (fh) => {
    await fh.writeFile(encodeSidecarPrefix(info));
    await saveToHandle(filter, fh);
  });
}

/** The metadata fields and what each must be (a sidecar from elsewhere may hold anything). */
const INFO_FIELDS: Readonly<Record<keyof SidecarInfo, (v: unknown) => boolean>> = {
  source: (v) => typeof v === 'string',
  size: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  mtimeMs: (v) => typeof v === 'number' && Number.isFinite(v),
  format: (v) => v === 'lines' || v === 'csv' || v === 'tsv' || v === 'ndjson',
  field: (v) => v === null || typeof v === 'string' || Number.isSafeInteger(v),
  header: (v) => typeof v === 'boolean',
  bloom: (v) => v === 'row' || v === 'rowcol',
  family: (v) => typeof v === 'string',
  qualifiers: (v) => v === null || (Array.isArray(v) && v.every((q) => typeof q === 'string')),
  records: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  keys: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  fpp: (v) => typeof v === 'number' && v > 0 && v < 1,
};

/** The funnel a sidecar's filter must have to answer its kind of key. */
const KIND_FUNNEL = { row: 'string', rowcol: 'bytes' } as const;

function checkInfo(info: unknown, source: string): SidecarInfo {
  if (info === null || typeof info !== 'object' || Array.isArray(info)) {
    throw new FormatError(`${source}: sidecar metadata must be a JSON object, got ${show(info)}`);
  }
  for (const [field, valid] of Object.entries(INFO_FIELDS)) {
    const value = (info as Record<string, unknown>)[field];
    if (!valid(value)) {
      throw new FormatError(
        `${source}: sidecar metadata field ${field} is invalid: ${show(value)}`,
      );
    }
  }
  return info as SidecarInfo;
}

/**
 * Parses a sidecar file's bytes: its metadata and its filter. Throws `FormatError` (naming
 * `source`, the file, when given) for damaged bytes and for a filter that cannot answer the
 * sidecar's kind of key.
 */
export function decodeSidecar(
  bytes: Uint8Array,
  source = 'sidecar',
): { info: SidecarInfo; filter: ReadonlyMembershipFilter } {
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(`bytes must be a Uint8Array, got ${show(bytes)}`);
  }
  try {
    return decodeSidecarBytes(bytes);
  } catch (error) {
    if (!(error instanceof FormatError)) throw error;
    throw new FormatError(`${source}: ${error.message}`, { cause: error });
  }
}

function decodeSidecarBytes(bytes: Uint8Array): {
  info: SidecarInfo;
  filter: ReadonlyMembershipFilter;
} {
  if (bytes.length < 16)
    throw new FormatError(
      `not a sidecar: ${bytes.length} bytes is shorter than its 16-byte header`,
    );
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0, true) !== MAGIC)
    throw new FormatError('not a bloomkit sidecar: magic is not "BLMS"');
  const version = v.getUint16(4, true);
  if (version !== VERSION)
    throw new FormatError(`unsupported sidecar version ${version}; this bloomkit reads ${VERSION}`);
  if (v.getUint16(6, true) !== 0)
    throw new FormatError('reserved sidecar header bytes are not zero');
  const m = v.getUint32(8, true);
  const start = 16 + Math.ceil(m / 8) * 8;
  if (m > MAX_META || start > bytes.length) {
    throw new FormatError(
      `sidecar metadata length ${m} does not fit a file of ${bytes.length} bytes`,
    );
  }
  const meta = bytes.subarray(16, 16 + m);
  const stored = v.getUint32(12, true);
  if (crc32c(meta, crc32c(bytes.subarray(0, 12))) !== stored) {
    throw new FormatError('sidecar metadata checksum mismatch');
  }
  for (let i = 16 + m; i < start; i++)
    if (bytes[i] !== 0) throw new FormatError('sidecar padding is not zero');
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(meta));
  } catch (error) {
    throw new FormatError(`sidecar metadata is not valid JSON: ${(error as Error).message}`);
  }
  const info = checkInfo(parsed, 'metadata');
  const filter = fromBytes(bytes.subarray(start), { copy: false });
  const funnel = KIND_FUNNEL[info.bloom];
  if (filter.funnel !== funnel) {
    throw new FormatError(
      `a ${info.bloom.toUpperCase()} sidecar needs a filter of funnel ${show(funnel)}, this one has ${show(filter.funnel)}`,
    );
  }
  return { info, filter };
}

/** Reads the sidecar of `dataPath`. Throws `FormatError` naming the sidecar for a damaged one. */
export async function readSidecar(
  dataPath: string,
): Promise<{ info: SidecarInfo; filter: ReadonlyMembershipFilter }> {
  const path = sidecarPath(dataPath);
  return decodeSidecar(new Uint8Array(await readFile(path)), path);
}
