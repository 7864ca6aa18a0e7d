/**
 * Reading one native container (docs/FORMAT.md) for `load` (io.ts), from a file handle or a byte
 * stream, without ever holding two copies of the filter.
 *
 * A `Source` fills a target with the next bytes or throws a `FormatError` saying where the input
 * ended. `readContainer` reads the 24-byte header and checks it (size against `maxBytes`), then the
 * parameters, and only then has the type's codec allocate the filter; the payload is read in
 * slices of at most 8 MiB straight into the filter's storage (its `PayloadSink` targets), with the
 * CRC-32C computed as the slices arrive and checked against the trailer before the filter is
 * returned. From a file handle, slice i + 1 is read while the CRC of slice i is computed (a
 * descriptor read with blocking calls reads each slice when its turn comes). A type without
 * a sink is read into one buffer and decoded in place.
 */

import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { FormatError, show } from '../errors.js';
import type { ProgressOptions, ReadonlyMembershipFilter } from '../filters/filter.js';
import { crc32cBulk } from '../formats/crc32c-bulk.js';
import {
  containerSize,
  decodeHeader,
  FILTER_TYPES,
  HEADER_BYTES,
  TRAILER_BYTES,
} from '../formats/native.js';
import { loadCodec } from '../formats/type-table.js';
import { checkAborted } from './progress.js';

/** The largest slice handed to one write or read call (fs calls are limited to 2 GiB). */
export const SLICE = 8 * 1024 * 1024;

/** Sequential reader over a file handle or a stream. */
export interface Source {
  /**
   * Fills `target` completely with the next bytes, or throws a FormatError saying the input
   * ended early. The range is claimed when called, so a file source may have several reads in
   * flight (`concurrent`); a stream source must be awaited before the next call.
   */
  readInto(target: Uint8Array, what: string): Promise<void>;
  readonly concurrent: boolean;
  /** Throws a FormatError unless the input ends here. */
  expectEnd(size: number): Promise<void>;
}

/**
 * Reads a file from its start: through a `FileHandle` (each read in Node's thread pool, several
 * in flight), or through a descriptor with blocking `read(2)` calls (for a process that waits for
 * the bytes anyway: the command).
 */
export function fileSource(file: FileHandle | number): Source {
  let next = 0;
  const read =
    typeof file === 'number'
      ? (target: Uint8Array, offset: number, length: number, position: number) => ({
          bytesRead: readSync(file, target, offset, length, position),
        })
      : (target: Uint8Array, offset: number, length: number, position: number) =>
          file.read(target, offset, length, position);
  return {
    concurrent: typeof file !== 'number',
    async readInto(target, what) {
      const start = next;
      next += target.length;
      let done = 0;
      while (done < target.length) {
        const want = Math.min(SLICE * 16, target.length - done);
        const { bytesRead } = await read(target, done, want, start + done);
        if (bytesRead === 0) {
          throw new FormatError(
            `truncated: the input ends inside the ${what} at byte ${start + done}`,
          );
        }
        done += bytesRead;
      }
    },
    async expectEnd() {},
  };
}

export function streamSource(iterable: AsyncIterable<unknown>): Source {
  const it = iterable[Symbol.asyncIterator]();
  let pending: Uint8Array = new Uint8Array(0);
  let position = 0;
  let ended = false;
  const concurrent = false;
  async function next(): Promise<boolean> {
    if (ended) return false;
    const r = await it.next();
    if (r.done) {
      ended = true;
      return false;
    }
    const chunk = r.value;
    if (!(chunk instanceof Uint8Array)) {
      throw new TypeError(
        `the stream must yield bytes (Buffer or Uint8Array), got ${show(chunk)}; do not set an encoding`,
      );
    }
    pending = chunk;
    return true;
  }
  return {
    concurrent,
    async readInto(target, what) {
      let done = 0;
      while (done < target.length) {
        if (pending.length === 0 && !(await next())) {
          throw new FormatError(`truncated: the input ends inside the ${what} at byte ${position}`);
        }
        const n = Math.min(pending.length, target.length - done);
        target.set(pending.subarray(0, n), done);
        pending = pending.subarray(n);
        done += n;
        position += n;
      }
    },
    async expectEnd(size) {
      while (pending.length === 0) {
        if (!(await next())) return;
      }
      await it.return?.();
      throw new FormatError(
        `length mismatch: the header announces ${size} bytes, but the input continues after them`,
      );
    },
  };
}

/** `source` checking the signal before each read and reporting the bytes read after it. */
function watchedSource(
  source: Source,
  total: number,
  options: ProgressOptions | undefined,
): Source {
  if (options?.signal === undefined && options?.onProgress === undefined) return source;
  let done = HEADER_BYTES;
  return {
    concurrent: source.concurrent,
    expectEnd: (size) => source.expectEnd(size),
    async readInto(target, what) {
      checkAborted(options);
      await source.readInto(target, what);
      done += target.length;
      options?.onProgress?.(done, total);
    },
  };
}

/** The targets cut into slices of at most SLICE bytes, in order; a target is taken when needed. */
function* slicesOf(targets: Iterable<Uint8Array>): Generator<Uint8Array, void, undefined> {
  for (const target of targets) {
    for (let p = 0; p < target.length; p += SLICE) {
      yield target.subarray(p, Math.min(target.length, p + SLICE));
    }
  }
}

/** Reads one container from `source` (whose size, when known, was checked by the caller). */
export async function readContainer(
  input: Source,
  maxBytes: number,
  options?: ProgressOptions,
): Promise<ReadonlyMembershipFilter> {
  checkAborted(options);
  let source = input;
  const head = new Uint8Array(HEADER_BYTES);
  await source.readInto(head, 'header');
  const header = decodeHeader(head);
  if (header.type === FILTER_TYPES.chunked) {
    throw new FormatError(
      'this is a chunked filter file (type id 7): open it with ChunkedBloomFilter.open(path)',
    );
  }
  const size = containerSize(header);
  if (size > maxBytes) {
    throw new FormatError(
      `the header announces ${size} bytes, more than maxBytes (${maxBytes}); pass a larger maxBytes to load it`,
    );
  }
  source = watchedSource(input, size, options);
  // Only this type's codec is loaded (the command and workers do not load every type).
  const codec = await loadCodec(header.type);
  if (codec === undefined || codec.sink === null) {
    // Fallback for types without a sink: one buffer, decoded in place.
    const all = new Uint8Array(size);
    all.set(head, 0);
    await source.readInto(all.subarray(HEADER_BYTES), 'container');
    await source.expectEnd(size);
    if (codec !== undefined) return codec.decode(all, { copy: false }) as ReadonlyMembershipFilter;
    // No row has this type id: fromBytes says so as it does for bytes in memory.
    const { fromBytes } = await import('../formats/registry.js');
    return fromBytes(all, { copy: false });
  }
  const paramBytes = new Uint8Array(header.paramsLength);
  await source.readInto(paramBytes, 'parameters');
  let crc = crc32cBulk(paramBytes, crc32cBulk(head));
  const sink = codec.sink(header, new DataView(paramBytes.buffer));
  // The sink's targets may be lazy (see PayloadSink): the next slice is asked for only once every
  // earlier one is filled. From a file, slice i + 1 is read while the CRC of slice i is computed.
  const slices = slicesOf(sink.targets);
  let current = slices.next();
  let pending = current.done ? null : source.readInto(current.value, 'payload');
  let filled = 0;
  while (!current.done) {
    await pending;
    const slice = current.value;
    filled += slice.length;
    const next = slices.next();
    pending = null;
    if (!next.done && source.concurrent) pending = source.readInto(next.value, 'payload');
    crc = crc32cBulk(slice, crc);
    if (!next.done && !source.concurrent) pending = source.readInto(next.value, 'payload');
    current = next;
  }
  if (filled !== header.payloadLength) {
    throw new FormatError(
      `the payload holds ${filled} bytes of filter, the header announces ${header.payloadLength}`,
    );
  }
  const trailer = new Uint8Array(TRAILER_BYTES);
  await source.readInto(trailer, 'checksum');
  const stored = new DataView(trailer.buffer).getUint32(0, true);
  if (stored !== crc) {
    throw new FormatError(
      `checksum mismatch: stored CRC-32C 0x${stored.toString(16).padStart(8, '0')}, computed 0x${crc.toString(16).padStart(8, '0')}`,
    );
  }
  await source.expectEnd(size);
  return sink.finish() as ReadonlyMembershipFilter;
}
