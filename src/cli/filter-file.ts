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
 * | DCSO `bloom`      | u64 LE 1, then p in (0, 1), 1 ≤ k ≤ 255, 1 ≤ m ≤ 2^36 (its reader  |
 * |                   | then refuses a file shorter than the words announced)             |
 * | DCSO, gzip        | gzip (1f 8b) around a DCSO file (`bloom --gzip`); written back so  |
 * | Mozilla MLBF      | otherwise, a u16 version 0 to 2 that then decodes as a cascade     |
 *
 * Guava's and DCSO's bytes do not say how keys were encoded; `--funnel` says it (default
 * `string`: a line's bytes as they are, which is what DCSO's `bloom` hashes).
 *
 * What only some files need is imported when one is met: zlib for gzip files, the classic filter's
 * class for Guava's bytes, DCSO's filter for its files; a native file loads its own type's codec
 * only (bloomkit/node's `load`, over the lazy table of types), so `add` and `check` of a native
 * file load no other type and no zlib.
 */

import { closeSync, readSync } from 'node:fs';
import { FormatError } from '../errors.js';
import type { MembershipFilter, ReadonlyMembershipFilter } from '../filters/filter.js';
import { compressionAdvice, dcsoHeaderBits } from '../formats/detect.js';
import type { Funnel } from '../hash/keys.js';
import { writeAtomically } from '../node/atomic-file.js';
import { loadBlocking, save } from '../node/io.js';
import { NotRegularFileError, openRegularSync, readRegular } from '../node/regular-file.js';
import { CliError, type Command, type Invocation } from './command.js';
import { describeFsError } from './input.js';

export type FileKind =
  | 'native'
  | 'chunked'
  | 'sidecar'
  | 'parquet'
  | 'guava'
  | 'dcso'
  | 'dcso-gzip'
  | 'mlbf'
  | 'unknown';

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

/**
 * What kind of file `path` holds, from its first and last bytes. Anything but a regular file (a
 * directory, a FIFO, a device) is refused at once, never waited on.
 */
export async function sniff(path: string): Promise<Sniffed> {
  // Blocking calls: the command waits for the answer anyway (see openRegularSync).
  let opened: ReturnType<typeof openRegularSync>;
  try {
    opened = openRegularSync(path);
  } catch (error) {
    throw asCliError(path, error);
  }
  const { fd, info } = opened;
  try {
    const head = new Uint8Array(Math.min(48, info.size));
    readSync(fd, head, 0, head.length, 0);
    const tail = new Uint8Array(4);
    if (info.size >= 8) readSync(fd, tail, 0, 4, info.size - 4);
    const size = info.size;
    let kind: FileKind = 'unknown';
    if (startsWith(head, NATIVE_MAGIC)) kind = head[6] === CHUNKED_TYPE ? 'chunked' : 'native';
    else if (startsWith(head, SIDECAR_MAGIC)) kind = 'sidecar';
    else if (startsWith(head, PARQUET_MAGIC) && startsWith(tail, PARQUET_MAGIC)) kind = 'parquet';
    else if (size >= 6 && (head[0] === 0 || head[0] === 1) && head[1]! >= 1) {
      const words = new DataView(head.buffer, head.byteOffset, head.length).getInt32(2, false);
      if (words > 0 && size === 6 + 8 * words) kind = 'guava';
    }
    // By its header alone: a DCSO file cut short is read, and refused as truncated.
    if (kind === 'unknown' && dcsoHeaderBits(head) > 0) kind = 'dcso';
    if (kind === 'unknown' && head[0] === 0x1f && head[1] === 0x8b) {
      // gzip: DCSO's `bloom --gzip` files. The header is in the first inflated bytes: a few
      // KiB of the stream say what it holds (a cut stream inflates as far as it goes).
      const start = new Uint8Array(Math.min(size, 1 << 16));
      readSync(fd, start, 0, start.length, 0);
      let inner: Uint8Array = new Uint8Array(0);
      const { gunzipSync, constants: zlib } = await import('node:zlib');
      try {
        inner = gunzipSync(start, { finishFlush: zlib.Z_SYNC_FLUSH });
      } catch {
        // Not gzip after all: unknown.
      }
      if (dcsoHeaderBits(inner) > 0) kind = 'dcso-gzip';
    }
    if (kind === 'unknown' && size >= 3 && head[1] === 0 && head[0]! <= 2) kind = 'mlbf';
    return { kind, size, head };
  } finally {
    closeSync(fd);
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
    `${path}: not a filter file bloomkit reads (starts with ${hex(sniffed.head)}; expected bloomkit's native format "BLMK", a sidecar "BLMS", Parquet "PAR1", Guava writeTo bytes or a DCSO bloom file)`,
  );
}

/** The format a filter was read from, and is written back in. */
export type WritableFormat = 'native' | 'guava' | 'dcso' | 'dcso-gzip';

export interface LoadedFilter {
  readonly filter: MembershipFilter;
  readonly format: WritableFormat;
}

/**
 * Reads the in-memory filter stored at `path` (native, Guava or DCSO). Other formats are refused with a
 * message that says what the file is and which command reads it.
 */
export async function readFilter(path: string, funnel?: Funnel): Promise<LoadedFilter> {
  return readSniffed(path, await sniff(path), funnel);
}

/** {@link readFilter} of a file already sniffed (each file is opened and sniffed once). */
async function readSniffed(
  path: string,
  sniffed: Sniffed,
  funnel: Funnel | undefined,
): Promise<LoadedFilter> {
  try {
    switch (sniffed.kind) {
      case 'native': {
        const filter = (await loadBlocking(path)) as MembershipFilter;
        if (funnel !== undefined && filter.funnel !== funnel) {
          throw new CliError(
            `${path}: the filter's funnel is ${filter.funnel}; --funnel ${funnel} does not apply (leave it out)`,
          );
        }
        return { filter, format: 'native' };
      }
      case 'guava': {
        const { BloomFilter } = await import('../filters/bloom/filter.js');
        return {
          filter: BloomFilter.fromGuava(await readRegular(path), {
            funnel: funnel ?? 'string',
          }) as MembershipFilter,
          format: 'guava',
        };
      }
      case 'dcso': {
        const { DcsoBloomFilter } = await import('../filters/dcso/filter.js');
        return {
          filter: DcsoBloomFilter.fromDcso(await readRegular(path), {
            funnel: funnel ?? 'string',
          }) as MembershipFilter,
          format: 'dcso',
        };
      }
      case 'dcso-gzip': {
        const { DcsoBloomFilter } = await import('../filters/dcso/filter.js');
        return {
          filter: DcsoBloomFilter.fromDcso(await gunzipFile(path), {
            funnel: funnel ?? 'string',
          }) as MembershipFilter,
          format: 'dcso-gzip',
        };
      }
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
  if (sniffed.kind !== 'mlbf') return (await readSniffed(path, sniffed, funnel)).filter;
  // Loaded here only: the commands that never meet a cascade do not load its code.
  const { FilterCascade } = await import('../filters/cascade/filter.js');
  let cascade: ReadonlyMembershipFilter | null;
  try {
    cascade = FilterCascade.fromMlbf(await readRegular(path), {
      funnel: funnel ?? 'string',
    }) as ReadonlyMembershipFilter | null;
  } catch {
    throw unknownFormat(path, sniffed);
  }
  if (cascade === null) throw unknownFormat(path, sniffed);
  return cascade;
}

/** The inflated bytes of the gzip file at `path`; a `CliError` for damaged or cut gzip data. */
async function gunzipFile(path: string): Promise<Uint8Array> {
  const raw = await readRegular(path);
  const { gunzipSync } = await import('node:zlib');
  try {
    return new Uint8Array(gunzipSync(raw));
  } catch (error) {
    throw new CliError(`${path}: damaged gzip data (${(error as Error).message})`);
  }
}

/** A library error about a file, as one line naming the file. */
export function asCliError(path: string, error: unknown): unknown {
  if (error instanceof CliError) return error;
  if (error instanceof NotRegularFileError) {
    return new CliError(`${path}: is ${error.kind}, not a regular file (a filter file is one)`);
  }
  const code = (error as { code?: string } | null)?.code;
  if (code === 'EEXIST')
    return new CliError(`${path}: the file exists (use --force to replace it)`);
  if (code === 'ELOCKED') return new CliError((error as Error).message);
  if (error instanceof FormatError)
    return new CliError(`${path}: damaged filter file: ${error.message}`);
  if (error instanceof RangeError || error instanceof TypeError) {
    return new CliError(`${path}: ${error.message}`);
  }
  if ((error as { code?: string }).code !== undefined) return describeFsError(path, error);
  return error;
}

/**
 * Writes `filter` to `path` in `format`, atomically (src/node/atomic-file.ts: a temporary file
 * beside it, synced, then renamed over the target, so an interrupted write never leaves a
 * half-written filter; a symbolic link is written through to its target; only a regular file is
 * replaced, and only with `overwrite`).
 */
export async function writeFilter(
  path: string,
  filter: MembershipFilter,
  format: WritableFormat,
  overwrite = true,
): Promise<void> {
  try {
    if (format === 'native') {
      await save(filter, path, { overwrite });
      return;
    }
    if (format === 'dcso' || format === 'dcso-gzip') {
      const { DcsoBloomFilter } = await import('../filters/dcso/filter.js');
      if (!(filter instanceof DcsoBloomFilter)) {
        const { typeName } = await import('./describe.js');
        throw new CliError(
          `${path}: DCSO bloom's format holds a DCSO Bloom filter only (create one with --type dcso), not a ${typeName(filter)} filter`,
        );
      }
      const bytes = filter.toDcso();
      const gzipped = format === 'dcso' ? bytes : (await import('node:zlib')).gzipSync(bytes);
      await writeBytes(path, gzipped, overwrite);
      return;
    }
    const { BloomFilter } = await import('../filters/bloom/filter.js');
    if (!(filter instanceof BloomFilter)) {
      const { typeName } = await import('./describe.js');
      throw new CliError(
        `${path}: Guava's format holds a classic Bloom filter only, not a ${typeName(filter)} filter`,
      );
    }
    await writeBytes(path, filter.toGuava(), overwrite);
  } catch (error) {
    throw asCliError(path, error);
  }
}

/** Writes `bytes` to `path` as {@link writeFilter} writes a filter; errors as `CliError`s. */
export async function writeBytes(path: string, bytes: Uint8Array, overwrite: boolean) {
  try {
    await writeAtomically(path, (fh) => fh.writeFile(bytes), { overwrite });
  } catch (error) {
    throw asCliError(path, error);
  }
}

/**
 * How long a command waits for another process's lock on a filter file (`BLOOMKIT_LOCK_WAIT`,
 * in seconds; default 60).
 */
export function lockWaitMs(env: NodeJS.ProcessEnv | undefined): number {
  const text = (env ?? process.env).BLOOMKIT_LOCK_WAIT;
  if (text === undefined || text === '') return 60_000;
  const seconds = Number(text);
  if (!(seconds >= 0) || !Number.isFinite(seconds)) {
    throw new CliError(`BLOOMKIT_LOCK_WAIT must be a number of seconds >= 0, got "${text}"`);
  }
  return seconds * 1000;
}

/**
 * Takes the lock on the filter file at `path` for a read-modify-write (src/node/file-lock.ts),
 * waiting for another process's update to end; a `CliError` (exit 2) when the wait ends first.
 */
export async function lockForUpdate(
  path: string,
  env: NodeJS.ProcessEnv | undefined,
): Promise<{ release(): Promise<void> }> {
  const timeoutMs = lockWaitMs(env);
  const { lockFile } = await import('../node/file-lock.js');
  try {
    return await lockFile(path, { timeoutMs });
  } catch (error) {
    throw asCliError(path, error);
  }
}

/**
 * `command` with its `run` holding the lock on the filter file it reads, changes and writes back
 * (`fileOf`: its first argument by default; null for a run that keeps no file) from before the
 * read until after the write, released however the run ends.
 */
export function updatesFile(
  command: Command,
  fileOf: (invocation: Invocation) => string | null = (invocation) => invocation.args[0]!,
): Command {
  return {
    ...command,
    async run(invocation) {
      const file = fileOf(invocation);
      if (file === null) return command.run(invocation);
      // Ctrl-C or SIGTERM before the command handles them itself (its Interrupt, made once the
      // filter is read: a large one takes a second to load) would end the process with the
      // lock file left behind: it is removed first, then the signal does what it does. Set up
      // before the lock is taken: a signal handler runs between tasks, never between the lock
      // file's creation and `lock` being set.
      let lock: { release(): Promise<void> } | null = null;
      const early = (signal: NodeJS.Signals) => {
        if (process.listenerCount(signal) > 1) return; // the command's own handler has it
        stopEarly();
        void lock?.release(); // blocking calls: done before the next line
        process.kill(process.pid, signal);
      };
      const stopEarly = () => {
        process.off('SIGINT', early);
        process.off('SIGTERM', early);
      };
      process.on('SIGINT', early);
      process.on('SIGTERM', early);
      try {
        lock = await lockForUpdate(file, invocation.io.env);
        return await command.run(invocation);
      } finally {
        stopEarly();
        await lock?.release();
      }
    },
  };
}
