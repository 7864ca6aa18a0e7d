/**
 * Where the command's records come from: files named on the command line, or standard input
 * (none named, or `-`). Each is a `ByteSource` that reads into a buffer the caller owns, so a
 * plain file goes from the kernel into the record buffer with no copy in between. gzip input is
 * recognised by its magic bytes (1F 8B), whatever the file is called, and inflated on the way
 * (concatenated gzip members too, as `zcat` reads them).
 */

import {
  accessSync,
  closeSync,
  constants,
  createReadStream,
  promises as fsp,
  fstatSync,
  openSync,
  read as readCallback,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { CliError, type CliIo } from './command.js';
import { copyBytes } from './separators.js';
import { type HandOver, openStdinPipe, StdinPipe } from './stdin-pipe.js';

/** A byte stream read into caller-owned buffers. */
export interface ByteSource {
  /** What to call it in messages: the path, or "standard input". */
  readonly name: string;
  /** Bytes to read in all, when known (a plain file), for the progress bar. */
  readonly size: number | undefined;
  /** Bytes of the underlying file consumed so far (compressed bytes for gzip). */
  position(): number;
  /** Reads up to `into.length` bytes into `into`; resolves to 0 at the end. */
  read(into: Uint8Array): Promise<number>;
  close(): Promise<void>;
}

const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;
const STREAM_CHUNK = 1 << 20;

/** Names a file system error in words: `no such file`, `is a directory`, ... */
export function describeFsError(name: string, error: unknown): CliError {
  const code = (error as { code?: string }).code;
  const words: Record<string, string> = {
    ENOENT: 'no such file',
    EISDIR: 'is a directory, not a file',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOTDIR: 'a part of the path is not a directory',
    EMFILE: 'too many open files',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
    EROFS: 'read-only file system',
  };
  const what = (code && words[code]) ?? (error instanceof Error ? error.message : String(error));
  return new CliError(`${name}: ${what}`);
}

/**
 * Checks every input named (`-` aside) before the first is read: each must exist, be readable
 * and not be a directory. A misspelt last input then fails the run at once (status 2), not
 * after the inputs before it were read (an `add` saves nothing from a run that fails anyway).
 */
export function checkInputs(inputs: readonly string[]): void {
  for (const path of inputs) {
    if (path === '-') continue;
    try {
      inputKind(path);
      accessSync(path, constants.R_OK);
    } catch (error) {
      throw describeFsError(path, error);
    }
  }
}

/** `statSync(path)` of an input; a directory throws as EISDIR (an input is never one). */
function inputKind(path: string): Stats {
  const kind = statSync(path);
  if (kind.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
  return kind;
}

/** A plain file read with `read(2)` straight into the caller's buffer. */
class FileSource implements ByteSource {
  private offset = 0;
  constructor(
    readonly name: string,
    private readonly handle: FileHandle | number,
    readonly size: number | undefined,
    /** Bytes already read from the handle (a peek at the magic), handed out first. */
    private prefix: Uint8Array | null = null,
    /** Close the descriptor at the end (one this module opened; never standard input's). */
    private readonly ownsFd = false,
  ) {}

  position(): number {
    return this.offset;
  }

  async read(into: Uint8Array): Promise<number> {
    if (this.prefix !== null && into.length >= this.prefix.length) {
      into.set(this.prefix);
      const n = this.prefix.length;
      this.prefix = null;
      this.offset += n;
      return n;
    }
    try {
      const { bytesRead } =
        typeof this.handle === 'number'
          ? await readFd(this.handle, into)
          : await this.handle.read(into, 0, into.length, null);
      this.offset += bytesRead;
      return bytesRead;
    } catch (error) {
      throw describeFsError(this.name, error);
    }
  }

  async close(): Promise<void> {
    if (typeof this.handle !== 'number') await this.handle.close();
    else if (this.ownsFd) closeSync(this.handle);
  }
}

function readFd(fd: number, into: Uint8Array): Promise<{ bytesRead: number }> {
  return new Promise((resolve, reject) => {
    readCallback(fd, into, 0, into.length, null, (error, bytesRead) =>
      error ? reject(error) : resolve({ bytesRead }),
    );
  });
}

/** A Node stream (a pipe, or gunzip's output), copied chunk by chunk into the caller's buffer. */
class StreamSource implements ByteSource {
  private readonly chunks: AsyncIterator<Uint8Array>;
  private pending: Uint8Array | null = null;
  constructor(
    readonly name: string,
    stream: AsyncIterable<Uint8Array>,
    readonly size: number | undefined,
    readonly position: () => number,
    private readonly onClose: () => void,
  ) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  async read(into: Uint8Array): Promise<number> {
    let done = 0;
    while (done < into.length) {
      if (this.pending === null) {
        // Hand over what arrived rather than wait for more: a pipe fed by another program
        // (a crawler feeding its frontier) gets its answers as soon as its lines are in.
        if (done > 0) break;
        let next: IteratorResult<Uint8Array>;
        try {
          next = await this.chunks.next();
        } catch (error) {
          throw new CliError(`${this.name}: ${streamErrorWords(error)}`);
        }
        if (next.done) break;
        this.pending = next.value;
      }
      const take = Math.min(this.pending.length, into.length - done);
      copyBytes(this.pending, 0, take, into, done);
      done += take;
      this.pending = take === this.pending.length ? null : this.pending.subarray(take);
    }
    return done;
  }

  async close(): Promise<void> {
    this.onClose();
  }
}

function streamErrorWords(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') {
    return `damaged gzip data (${(error as Error).message})`;
  }
  if (code === 'Z_BUF_ERROR' || /unexpected end/i.test(String(error))) {
    return 'the gzip data ends early (truncated file)';
  }
  return describeFsError('', error).message.replace(/^: /, '');
}

/**
 * Inflates `raw` (whose first bytes are `head`, already read) as gzip. zlib is loaded here, on
 * the first gzip input, not when the command starts (most runs read plain text).
 */
async function gunzipSource(
  name: string,
  head: Uint8Array,
  raw: Readable,
  size: number | undefined,
): Promise<ByteSource> {
  const { createGunzip } = await import('node:zlib');
  let consumed = head.length;
  raw.on('data', (chunk: Buffer) => {
    consumed += chunk.length;
  });
  const gunzip = createGunzip({ chunkSize: STREAM_CHUNK });
  raw.on('error', (error) => gunzip.destroy(error));
  gunzip.write(head);
  raw.pipe(gunzip);
  return new StreamSource(
    name,
    gunzip,
    size,
    () => consumed,
    () => {
      raw.destroy();
      gunzip.destroy();
    },
  );
}

/** Where standard input is read from (see {@link CliIo}). */
export type StdinIo = Pick<CliIo, 'stdin' | 'stdinFd'>;

/** Opens `path` (`-` for `stdin`, standard input) as a byte source, inflating gzip. */
export async function openInput(path: string, stdin: CliIo['stdin']): Promise<ByteSource> {
  return openInputOf(path, { stdin });
}

/**
 * {@link openInput} with standard input given as `io`: its stream is made (`io.stdin` read) only
 * when standard input is read as a stream.
 */
export async function openInputOf(path: string, io: StdinIo): Promise<ByteSource> {
  if (path === '-') return openStdin(io);
  // A regular file is opened with blocking calls (no trip through the thread pool, and
  // node:fs/promises is not loaded). Anything else (a FIFO, a pipe such as `<(cmd)`, a device) is
  // told apart BEFORE it is opened: opening a FIFO's read end and closing it again would let a
  // waiting writer write into a pipe that then loses its data or kills the writer (SIGPIPE).
  let fd: number;
  let size: number;
  try {
    const kind = inputKind(path);
    if (kind.isFIFO()) return await openFifo(path);
    if (!kind.isFile()) return await openOther(path);
    // O_NONBLOCK: should the path become a FIFO between the two calls, the open does not wait.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = fstatSync(fd);
    if (!info.isFile()) {
      closeSync(fd);
      throw new CliError(`${path}: changed while it was being opened (no longer a regular file)`);
    }
    size = info.size;
  } catch (error) {
    throw error instanceof CliError ? error : describeFsError(path, error);
  }
  const head = new Uint8Array(2);
  const bytesRead = readSync(fd, head, 0, 2, 0);
  if (isGzip(head.subarray(0, bytesRead))) {
    closeSync(fd);
    const raw = createReadStream(path, { start: 2, highWaterMark: STREAM_CHUNK });
    return gunzipSource(path, head, raw, size);
  }
  return new FileSource(path, fd, size, null, true);
}

/**
 * A FIFO or a pipe (`mkfifo`, `<(cmd)`), read through the event loop, never in the thread pool:
 * a wait there for a writer (in `open` or `read`) cannot be cancelled, and neither Ctrl-C nor
 * SIGTERM nor `process.exit` could end the command until the writer wrote or went away. The
 * open does not wait (`O_NONBLOCK`); the reads wait for the writer in the event loop, where a
 * signal ends them. Linux reports no end of input before a writer has come and gone: a writer
 * that opens the FIFO after the command is waited for, as with a blocking open.
 */
async function openFifo(path: string): Promise<ByteSource> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFIFO()) {
      closeSync(fd);
      throw new CliError(`${path}: changed while it was being opened (no longer a FIFO)`);
    }
  } catch (error) {
    throw error instanceof CliError ? error : describeFsError(path, error);
  }
  const { Socket } = await import('node:net');
  const pipe = new Socket({ fd, readable: true, writable: false });
  return chunkSource(path, pipe, () => pipe.destroy());
}

/**
 * An input that is neither a regular file nor a FIFO (a character device), opened in the thread
 * pool and read in order: it has no positions to read at (a positioned read fails with ESPIPE).
 */
async function openOther(path: string): Promise<ByteSource> {
  let handle: FileHandle;
  let head: Uint8Array;
  try {
    handle = await fsp.open(path, 'r');
    head = new Uint8Array(2);
    let got = 0;
    // Two bytes for the gzip magic: a pipe may hand them out one read at a time.
    while (got < 2) {
      const { bytesRead } = await handle.read(head, got, 2 - got, null);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    head = head.subarray(0, got);
  } catch (error) {
    throw describeFsError(path, error);
  }
  if (isGzip(head)) {
    const raw = handle.createReadStream({ highWaterMark: STREAM_CHUNK });
    return gunzipSource(path, head, raw, undefined);
  }
  return new FileSource(path, handle, undefined, head.length > 0 ? head : null);
}

function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === GZIP_MAGIC_0 && head[1] === GZIP_MAGIC_1;
}

/**
 * Standard input: read with `read(2)` like a file when its descriptor is one (`< file`); a pipe
 * first through a non-blocking descriptor of its own while no read has to wait (see
 * stdin-pipe.ts: an empty or written-out pipe makes no stream); else as a stream (`stdin` is
 * `process.stdin`, whose `fd` is 0, or a test's stream). A pipe is not read with `read(2)` in
 * Node's thread pool: a read waiting there for a writer cannot be cancelled, and the process
 * could not exit on Ctrl-C until the writer wrote or closed.
 */
async function openStdin(io: StdinIo): Promise<ByteSource> {
  const name = 'standard input';
  const fd = io.stdinFd ?? io.stdin.fd;
  let info: Stats | undefined;
  try {
    info = fd === undefined ? undefined : fstatSync(fd);
  } catch {
    info = undefined; // a closed descriptor: the stream says what is wrong
  }
  if (fd !== undefined && info?.isFile()) {
    const size = info.size;
    const head = new Uint8Array(2);
    const { bytesRead } = await readFd(fd, head);
    const peeked = head.subarray(0, bytesRead);
    if (isGzip(peeked)) {
      // Left open at the end (destroy closes a stream's descriptor whatever autoClose says):
      // standard input is the caller's.
      const raw = createReadStream('', {
        fd,
        highWaterMark: STREAM_CHUNK,
        autoClose: false,
        fs: { read: readCallback, close: (_fd: number, done: (error: null) => void) => done(null) },
      });
      return gunzipSource(name, peeked, raw, size);
    }
    return new FileSource(name, fd, size, peeked);
  }
  const pipe = fd !== undefined && info?.isFIFO() ? openStdinPipe(fd) : null;
  // The stream's chunks are Buffers (no encoding is ever set on it).
  const stdin = new StdinPipe(pipe, () => io.stdin as unknown as HandOver);
  return chunkSource(name, stdin.chunks(), () => stdin.close());
}

/**
 * An input read as chunks (standard input: a pipe, a terminal, a socket, a test's stream; or a
 * FIFO), gzip found; `close` ends the reading.
 */
async function chunkSource(
  name: string,
  source: AsyncIterable<Uint8Array>,
  close: () => void,
): Promise<ByteSource> {
  const chunks = source[Symbol.asyncIterator]();
  const first = await chunks.next();
  const head: Uint8Array = first.done ? new Uint8Array(0) : first.value;
  let consumed = head.length;
  const rest = (async function* () {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      consumed += next.value.length;
      yield next.value;
    }
  })();
  if (isGzip(head)) {
    const { Readable } = await import('node:stream');
    return gunzipSource(name, head, Readable.from(rest), undefined);
  }
  const all = (async function* () {
    if (head.length > 0) yield head;
    yield* rest;
  })();
  return new StreamSource(name, all, undefined, () => consumed, close);
}
