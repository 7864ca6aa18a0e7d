/**
 * Filter files are regular files: what bloomkit reads as a filter, and what it writes over, is
 * never a FIFO, a device, a socket or a directory.
 *
 * - `openRegular(path)` opens for reading with `O_NONBLOCK`, then checks the opened file with
 *   `fstat`: opening a FIFO that way returns at once (a plain open would wait for a writer
 *   forever), and the check is of the very file that was opened, so a file swapped in between
 *   a `stat` and the `open` cannot slip through. `O_NONBLOCK` changes nothing for a regular file.
 *
 * `node:fs/promises` is reached through `fs.promises` when first called, not imported: the
 * command, bundled as CommonJS, then does not load it (and the readline and stream code it pulls
 * in) on a run that never calls it.
 * - `openRegularSync(path)` does the same with blocking calls, for a process that waits for the
 *   file anyway (the command reading its filter file): no round trip through Node's thread pool
 *   per call.
 * - `resolveTarget(path)` follows a chain of symbolic links (at most 40, as the kernel does) to
 *   the path a write lands on, and says what is there now: nothing, a regular file (with its
 *   mode, to keep), or something else, which writers refuse.
 */

import {
  closeSync,
  constants,
  promises as fsp,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  type Stats,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** The error for a path that names something other than a regular file. */
export class NotRegularFileError extends TypeError {
  override readonly name = 'NotRegularFileError';
  constructor(
    /** The path as given. */
    readonly path: string,
    /** What is there: 'a FIFO', 'a directory', 'a character device', ... */
    readonly kind: string,
  ) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

/** What a non-regular file is, in words ('a FIFO', 'a block device', ...). */
export function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return info.isFile() ? 'a regular file' : 'not a file';
}

/**
 * Opens `path` for reading if it is a regular file (following symbolic links); throws
 * `NotRegularFileError` for anything else without ever blocking, and the `open` error (ENOENT,
 * EACCES...) as it is. The caller closes the handle.
 */
export async function openRegular(path: string): Promise<{ handle: FileHandle; info: Stats }> {
  const handle = await fsp.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new NotRegularFileError(path, kindOf(info));
    return { handle, info };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** {@link openRegular} with blocking calls: the open file's descriptor, which the caller closes. */
export function openRegularSync(path: string): { fd: number; info: Stats } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new NotRegularFileError(path, kindOf(info));
    return { fd, info };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The whole of a regular file (see {@link openRegular}). */
export async function readRegular(path: string): Promise<Uint8Array> {
  const { handle } = await openRegular(path);
  try {
    return new Uint8Array(await handle.readFile());
  } finally {
    await handle.close();
  }
}

/** Where a write to a path lands, and what is there now. */
export interface Target {
  /** The path after following every symbolic link (absolute). */
  readonly path: string;
  /** What is there now: null when nothing is (a new file). */
  readonly info: Stats | null;
}

/** The kernel's own limit on links followed in one lookup (Linux MAXSYMLINKS). */
const MAX_LINKS = 40;

/**
 * Follows `path` through symbolic links to the file a write lands on (a dangling link: the file
 * it names, created by the write). Throws an ELOOP error after 40 links. Each step is a blocking
 * `lstat` (or `readlink`): shorter than a trip through Node's thread pool.
 */
export async function resolveTarget(path: string): Promise<Target> {
  let current = resolve(path);
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    let info: Stats;
    try {
      info = lstatSync(current);
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return { path: current, info: null };
      throw error;
    }
    if (!info.isSymbolicLink()) return { path: current, info };
    current = resolve(dirname(current), readlinkSync(current));
  }
  throw Object.assign(new Error(`${path}: more than ${MAX_LINKS} symbolic links`), {
    code: 'ELOOP',
    path,
  });
}
