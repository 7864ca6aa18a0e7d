/**
 * Filter files as the command meets them: it tells the formats apart by their bytes (never by
 * the file name) and reads and writes them with the library's own readers and writers.
 *
 * | format            | how it is recognised                                               |
 * |-------------------|--------------------------------------------------------------------|
 * | bloomkit native   | magic `BLMK` (type 7 = a chunked filter file)                      |
 * | sidecar           | magic `BLMS` (a sidecar filter, `buildSidecar`)                    |
 * | Parquet           | `PAR1` at the start and the end (its split-block filters)          |
 * | Guava `writeTo`   | strategy ordinal 0 or 1, k ≥ 1, and exactly 6 + 8·N bytes for the  |
 * |                   | N 64-bit words its big-endian header announces                     |
 * | Mozilla MLBF      | otherwise, a u16 version 0 to 2 that then decodes as a cascade     |
 *
 * Guava's bytes do not say how keys were encoded; `--funnel` says it (default `string`).
 */

import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FormatError } from '../errors.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { MembershipFilter, ReadonlyMembershipFilter } from '../filters/filter.js';
import { compressionAdvice } from '../formats/detect.js';
import type { Funnel } from '../hash/keys.js';
import { load, save } from '../node/io.js';
import { CliError } from './command.js';
import { describeFsError } from './input.js';

export type FileKind = 'native' | 'chunked' | 'sidecar' | 'parquet' | 'guava' | 'mlbf' | 'unknown';

export interface Sniffed {
  readonly kind: FileKind;
  readonly size: number;
  /** The first bytes, for messages. */
  readonly head: Uint8Array;
}

const NATIVE_MAGIC = [0x42, 0x4c, 0x4d, 0x4b]; // BLMK
const SIDECAR_MAGIC = [0x42, 0x4c, 0x4d, 0x53]; // BLMS
const PARQUET_MAGIC = [0x50, 0x41, 0x52, 0x31]; // PAR1
const CHUNKED_TYPE = 7;

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

/** What kind of file `path` holds, from its first and last bytes. */
export async function sniff(path: string): Promise<Sniffed> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw describeFsError(path, error);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new CliError(`${path}: is a directory, not a filter file`);
    const head = new Uint8Array(Math.min(16, info.size));
    await handle.read(head, 0, head.length, 0);
    const tail = new Uint8Array(4);
    if (info.size >= 8) await handle.read(tail, 0, 4, info.size - 4);
    const size = info.size;
    let kind: FileKind = 'unknown';
    if (startsWith(head, NATIVE_MAGIC)) kind = head[6] === CHUNKED_TYPE ? 'chunked' : 'native';
    else if (startsWith(head, SIDECAR_MAGIC)) kind = 'sidecar';
    else if (startsWith(head, PARQUET_MAGIC) && startsWith(tail, PARQUET_MAGIC)) kind = 'parquet';
    else if (size >= 6 && (head[0] === 0 || head[0] === 1) && head[1]! >= 1) {
      const words = new DataView(head.buffer, head.byteOffset, head.length).getInt32(2, false);
      if (words > 0 && size === 6 + 8 * words) kind = 'guava';
    }
    if (kind === 'unknown' && size >= 3 && head[1] === 0 && head[0]! <= 2) kind = 'mlbf';
    return { kind, size, head };
  } finally {
    await handle.close();
  }
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
}

/** The message for a file that is no filter format the command knows. */
export function unknownFormat(path: string, sniffed: Sniffed): CliError {
  if (sniffed.size === 0) return new CliError(`${path}: the file is empty, not a filter file`);
  const compressed = compressionAdvice(sniffed.head);
  if (compressed !== '') return new CliError(`${path}: ${compressed}`);
  return new CliError(
    `${path}: not a filter file bloomkit reads (starts with ${hex(sniffed.head)}; expected bloomkit's native format "BLMK", a sidecar "BLMS", Parquet "PAR1", or Guava writeTo bytes)`,
  );
}

/** The format a filter was read from, and is written back in. */
export type WritableFormat = 'native' | 'guava';

export interface LoadedFilter {
  readonly filter: MembershipFilter;
  readonly format: WritableFormat;
}

/**
 * Reads the in-memory filter stored at `path` (native or Guava). Other formats are refused with a
 * message that says what the file is and which command reads it.
 */
export async function readFilter(path: string, funnel?: Funnel): Promise<LoadedFilter> {
  const sniffed = await sniff(path);
  try {
    switch (sniffed.kind) {
      case 'native': {
        const filter = (await load(path)) as MembershipFilter;
        if (funnel !== undefined && filter.funnel !== funnel) {
          throw new CliError(
            `${path}: the filter's funnel is ${filter.funnel}; --funnel ${funnel} does not apply (leave it out)`,
          );
        }
        return { filter, format: 'native' };
      }
      case 'guava':
        return {
          filter: BloomFilter.fromGuava(new Uint8Array(await readFile(path)), {
            funnel: funnel ?? 'string',
          }) as MembershipFilter,
          format: 'guava',
        };
      case 'chunked':
        throw new CliError(
          `${path}: a chunked filter file (read in place, not loaded whole); "bloomkit info" describes it`,
        );
      case 'sidecar':
        throw new CliError(`${path}: a sidecar filter; query it with "bloomkit which DIR KEY"`);
      case 'mlbf':
        throw new CliError(
          `${path}: an MLBF filter cascade: it can be checked and described, not added to`,
        );
      case 'parquet':
        throw new CliError(
          `${path}: a Parquet file; "bloomkit info" lists its column chunks' filters`,
        );
      default:
        throw unknownFormat(path, sniffed);
    }
  } catch (error) {
    throw asCliError(path, error);
  }
}

/**
 * A filter that can only answer (an MLBF filter cascade), or any filter `readFilter` reads: what
 * `check` and `info` accept.
 */
export async function readQueryable(
  path: string,
  funnel?: Funnel,
): Promise<ReadonlyMembershipFilter> {
  const sniffed = await sniff(path);
  if (sniffed.kind !== 'mlbf') return (await readFilter(path, funnel)).filter;
  // Loaded here only: the commands that never meet a cascade do not load its code.
  const { FilterCascade } = await import('../filters/cascade/filter.js');
  let cascade: ReadonlyMembershipFilter | null;
  try {
    cascade = FilterCascade.fromMlbf(new Uint8Array(await readFile(path)), {
      funnel: funnel ?? 'string',
    }) as ReadonlyMembershipFilter | null;
  } catch {
    throw unknownFormat(path, sniffed);
  }
  if (cascade === null) throw unknownFormat(path, sniffed);
  return cascade;
}

/** A library error about a file, as one line naming the file. */
export function asCliError(path: string, error: unknown): unknown {
  if (error instanceof CliError) return error;
  if (error instanceof FormatError)
    return new CliError(`${path}: damaged filter file: ${error.message}`);
  if (error instanceof RangeError || error instanceof TypeError) {
    return new CliError(`${path}: ${error.message}`);
  }
  if ((error as { code?: string }).code !== undefined) return describeFsError(path, error);
  return error;
}

/**
 * Writes `filter` to `path` in `format`, atomically: a temporary file beside it, synced, then
 * renamed over the target, so an interrupted write never leaves a half-written filter.
 */
export async function writeFilter(
  path: string,
  filter: MembershipFilter,
  format: WritableFormat,
): Promise<void> {
  try {
    if (format === 'native') {
      await save(filter, path);
      return;
    }
    if (!(filter instanceof BloomFilter)) {
      const { typeName } = await import('./describe.js');
      throw new CliError(
        `${path}: Guava's format holds a classic Bloom filter only, not a ${typeName(filter)} filter`,
      );
    }
    await writeAtomically(path, filter.toGuava());
  } catch (error) {
    throw asCliError(path, error);
  }
}

/** Writes `bytes` to a temporary file next to `path`, syncs it and renames it over `path`. */
export async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}
