/**
 * Streaming persistence for every filter in bloomkit's native format (docs/FORMAT.md):
 * `save(filter, path | Writable)` and `load(path | Readable)`.
 *
 * Neither holds two copies of a filter. `save` writes the header and parameters, then the
 * payload straight from the filter's own memory in slices of at most 8 MiB, updating the CRC-32C
 * as it goes, then the 4-byte trailer. `load` reads the 24-byte header first and checks it, then
 * the parameters, and only then allocates the filter (for a path it also checks the file size
 * against the announced length, so a forged length never allocates anything); the payload is read
 * straight into the filter's storage (`read(2)` into its words for a file; one copy per incoming
 * stream chunk for a stream), with the CRC computed incrementally and checked before the filter
 * is returned.
 *
 * Every native type streams as above (`STREAM_CODECS`: the classic, counting, scalable, cuckoo,
 * blocked, split-block and sharded filters). A scalable filter's payload is its layers, each with
 * a 24-byte layer header: its sink reads each layer header as it arrives, allocates that layer
 * and has the next bytes read straight into its words. Anything else with a `toBytes()` (a type
 * added later without a codec here) still works: `save` writes its `toBytes()` (one copy) and
 * `load` reads the container into one buffer and decodes it with `{ copy: false }`.
 *
 * Saving to a path writes a temporary file next to it, syncs it and renames it over the target,
 * so a failed save never leaves a damaged file behind and never destroys the previous one
 * (atomic-file.ts: a symbolic link is saved through to its target, only a regular file is ever
 * replaced, `overwrite: false` refuses an existing file). Loading from a path reads a regular
 * file only: a FIFO or a device is refused at once (regular-file.ts), never waited on.
 * The filter must not be changed while a save runs (a change would make the checksum disagree
 * with the bytes, and the next load would reject the file).
 *
 * Writing (the sinks) is here; reading a container (the sources, the payload pipeline): io-read.ts.
 */

import { closeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { FormatError, show } from '../errors.js';
import type { ProgressOptions, ReadonlyMembershipFilter } from '../filters/filter.js';
import { crc32cBulk } from '../formats/crc32c-bulk.js';
import {
  type ContainerParts,
  checkAnnouncedSize,
  containerSize,
  decodeHeader,
  HEADER_BYTES,
  TRAILER_BYTES,
} from '../formats/native.js';
import { codecOfFilter } from '../formats/type-table.js';
import { writeAtomically } from './atomic-file.js';
import { fileSource, readContainer, SLICE, streamSource } from './io-read.js';
import { checkAborted } from './progress.js';
import { openRegular, openRegularSync } from './regular-file.js';

/** Anything bloomkit can save: every filter type has `toBytes()`. */
export interface Serializable {
  toBytes(): Uint8Array;
}

/** Where `save` writes: a file path or a writable byte stream (which `save` does not end). */
export type SaveTarget = string | Writable;

export interface SaveOptions extends ProgressOptions {
  /**
   * For a path: replace a file that exists (default true). false refuses it with an `EEXIST`
   * error and writes nothing. A FIFO, device or directory at the path is never replaced.
   */
  overwrite?: boolean;
}

/** Where `load` reads: a file path, a readable byte stream, or any async iterable of bytes. */
export type LoadSource = string | Readable | AsyncIterable<Uint8Array>;

export interface LoadOptions extends ProgressOptions {
  /**
   * The largest container accepted, in bytes. For a stream the default is 1 GiB, so that a forged
   * length in an untrusted stream cannot make bloomkit allocate more before the stream runs dry;
   * raise it to load bigger filters from a stream. For a path the default is unlimited: the file's
   * real size already bounds every allocation.
   */
  maxBytes?: number;
}

const DEFAULT_STREAM_MAX = 2 ** 30;

/** The parts to write of `filter` (its type's codec is loaded now if it was not: type-table.ts). */
async function partsOf(filter: Serializable): Promise<ContainerParts> {
  const codec = await codecOfFilter(filter);
  if (codec !== undefined) return codec.parts(filter);
  if (filter === null || typeof filter !== 'object' || typeof filter.toBytes !== 'function') {
    throw new TypeError(`filter must have a toBytes() method, got ${show(filter)}`);
  }
  const bytes = filter.toBytes();
  if (!(bytes instanceof Uint8Array)) throw new TypeError('toBytes() did not return a Uint8Array');
  // Already a whole container, trailer included: written as one part, its CRC re-derived below.
  return { head: bytes, payload: [], size: bytes.length };
}

/** Sequential writer over a file handle or a stream, with a running CRC-32C. */
interface Sink {
  write(bytes: Uint8Array): Promise<void>;
}

/** Wraps `sink` so every slice checks the signal first and reports the bytes done after. */
function watched(sink: Sink, total: number, options: ProgressOptions | undefined): Sink {
  if (options?.signal === undefined && options?.onProgress === undefined) return sink;
  let done = 0;
  return {
    async write(bytes) {
      checkAborted(options);
      await sink.write(bytes);
      done += bytes.length;
      options?.onProgress?.(done, total);
    },
  };
}

async function writeParts(parts: ContainerParts, sink: Sink): Promise<number> {
  if (parts.payload.length === 0 && parts.head.length === parts.size) {
    // A whole container from toBytes(): its trailer is already inside.
    for (let p = 0; p < parts.head.length; p += SLICE) {
      await sink.write(parts.head.subarray(p, p + SLICE));
    }
    return parts.size;
  }
  let crc = crc32cBulk(parts.head);
  // One write in flight: the CRC of slice i + 1 is computed while slice i is being written.
  let pending = sink.write(parts.head);
  for (const part of parts.payload) {
    for (let p = 0; p < part.length; p += SLICE) {
      const slice = part.subarray(p, Math.min(part.length, p + SLICE));
      crc = crc32cBulk(slice, crc);
      await pending;
      pending = sink.write(slice);
    }
  }
  await pending;
  const trailer = new Uint8Array(TRAILER_BYTES);
  new DataView(trailer.buffer).setUint32(0, crc, true);
  await sink.write(trailer);
  return parts.size;
}

function fileSink(fh: FileHandle): Sink {
  return {
    async write(bytes) {
      let done = 0;
      while (done < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
        done += bytesWritten;
      }
    },
  };
}

function streamSink(stream: Writable): Sink {
  return {
    write(bytes) {
      // One slice in flight: wait until the stream has handed it on, so that the filter's memory
      // is not queued whole and an error surfaces here.
      return new Promise<void>((resolve, reject) => {
        stream.write(bytes, (error) => (error ? reject(error) : resolve()));
      });
    },
  };
}

/**
 * Writes `filter`'s container at the current position of an open file (the sidecar writer puts
 * it after its own header, inside one atomic write); resolves to the number of bytes written.
 */
export async function saveToHandle(filter: Serializable, fh: FileHandle): Promise<number> {
  return writeParts(await partsOf(filter), fileSink(fh));
}

/**
 * Writes `filter` in bloomkit's native format to a file (atomically: temp file, fsync, rename)
 * or to a writable stream (not ended). Resolves to the number of bytes written.
 * `onProgress(bytesWritten, totalBytes)` is called after each slice of at most 8 MiB; an aborted
 * `signal` stops before the next slice and rejects with its reason: a file save then leaves no
 * temporary file and the previous file (if any) untouched. A path that names a symbolic link is
 * saved to the link's target; a path that names anything but a regular file (a FIFO, a device)
 * is refused with `NotRegularFileError`; with `overwrite: false` an existing file is refused
 * with an `EEXIST` error.
 */
export async function save(
  filter: Serializable,
  target: SaveTarget,
  options?: SaveOptions,
): Promise<number> {
  const parts = await partsOf(filter);
  checkAborted(options);
  if (typeof target === 'string') {
    const write = async (fh: FileHandle) => {
      const n = await writeParts(parts, watched(fileSink(fh), parts.size, options));
      checkAborted(options);
      return n;
    };
    return writeAtomically(target, write, { overwrite: options?.overwrite });
  }
  if (target === null || typeof target !== 'object' || typeof target.write !== 'function') {
    throw new TypeError(`target must be a path or a Writable stream, got ${show(target)}`);
  }
  return writeParts(parts, watched(streamSink(target), parts.size, options));
}

function checkMaxBytes(maxBytes: unknown, fallback: number): number {
  if (maxBytes === undefined) return fallback;
  if (typeof maxBytes !== 'number' || !(maxBytes > 0)) {
    throw new RangeError(`maxBytes must be a positive number, got ${show(maxBytes)}`);
  }
  return maxBytes;
}

/**
 * Reads a filter in bloomkit's native format from a file or a byte stream and returns the type
 * the bytes hold (check it with `instanceof`). Bad bytes throw `FormatError` saying what is wrong.
 * A stream must end right after the container.
 */
export async function load(
  source: LoadSource,
  options: LoadOptions = {},
): Promise<ReadonlyMembershipFilter> {
  if (typeof source === 'string') {
    try {
      return await loadFile(source, options);
    } catch (error) {
      // Name the file: a FormatError from deep inside says what, this says where.
      if (error instanceof FormatError) throw new FormatError(`${source}: ${error.message}`);
      throw error;
    }
  }
  if (source === null || typeof source !== 'object' || !(Symbol.asyncIterator in source)) {
    throw new TypeError(`source must be a path or a readable byte stream, got ${show(source)}`);
  }
  const maxBytes = checkMaxBytes(options.maxBytes, DEFAULT_STREAM_MAX);
  return readContainer(streamSource(source as AsyncIterable<unknown>), maxBytes, options);
}

/**
 * {@link load} of a file path, read with blocking `read(2)` calls straight into the filter's
 * storage (the same checks, the same errors): for a process that has nothing else to do while
 * its filter loads (the command), it spares a round trip through Node's thread pool per read.
 * An application serving other work meanwhile calls `load`, which never blocks the event loop.
 */
export async function loadBlocking(
  path: string,
  options: LoadOptions = {},
): Promise<ReadonlyMembershipFilter> {
  const maxBytes = checkMaxBytes(options.maxBytes, Number.POSITIVE_INFINITY);
  try {
    const { fd, info } = openRegularSync(path);
    try {
      return await loadFrom(fd, info.size, maxBytes, options);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof FormatError) throw new FormatError(`${path}: ${error.message}`);
    throw error;
  }
}

async function loadFile(source: string, options: LoadOptions): Promise<ReadonlyMembershipFilter> {
  const maxBytes = checkMaxBytes(options.maxBytes, Number.POSITIVE_INFINITY);
  const { handle: fh, info } = await openRegular(source);
  try {
    return await loadFrom(fh, info.size, maxBytes, options);
  } finally {
    await fh.close();
  }
}

/** The container of the open file `file` (`fileSize` bytes), its announced size checked first. */
async function loadFrom(
  file: FileHandle | number,
  fileSize: number,
  maxBytes: number,
  options: LoadOptions,
): Promise<ReadonlyMembershipFilter> {
  if (fileSize >= HEADER_BYTES) {
    const head = new Uint8Array(HEADER_BYTES);
    await fileSource(file).readInto(head, 'header');
    checkAnnouncedSize(containerSize(decodeHeader(head, fileSize)), fileSize, 'the file has');
  }
  return readContainer(fileSource(file), maxBytes, options);
}
