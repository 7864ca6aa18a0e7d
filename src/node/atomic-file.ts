/**
 * Writing a file atomically, the one way every bloomkit output is written (`save`, the
 * command's Guava, Parquet and cascade outputs, chunked filter files, Deduper checkpoints).
 *
 * Rules, in order:
 * 1. A symbolic link is written through: the target is the file the link chain names
 *    (`resolveTarget`), and the link itself stays as it is.
 * 2. Only a regular file is ever replaced: a FIFO, a device, a socket or a directory at the
 *    target is refused with `NotRegularFileError`, and nothing is written.
 * 3. With `overwrite: false`, an existing file is refused with an `EEXIST` error; the final step
 *    is then `link(2)`, which fails rather than replace a file that appeared meanwhile.
 * 4. The bytes go to a temporary file beside the target, `<name>.<pid>.<random>.tmp`, created
 *    exclusively (`O_CREAT | O_EXCL`, which also refuses to follow a symbolic link planted under
 *    that name), with the replaced file's permission bits; then fsync, close, and a rename over
 *    the target, so a reader sees the old file or the whole new one. If writing fails or is
 *    aborted, the temporary file is removed and the old file (if any) is left untouched.
 * 5. Temporary files that a killed writer left beside the target (their pid no longer runs on
 *    this machine) are removed first (`removeStaleTemps`): a SIGKILL during a save costs disk
 *    only until the next write of that file.
 */

import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { kindOf, NotRegularFileError, resolveTarget } from './regular-file.js';

export interface AtomicWriteOptions {
  /** Replace a file that exists (default true); false refuses it with an `EEXIST` error. */
  overwrite?: boolean;
}

function exists(path: string): Error {
  return Object.assign(new Error(`${path} exists (refusing to replace it)`), {
    code: 'EEXIST',
    path,
  });
}

/** Writes `path` through `write` (given the temporary file's handle); resolves to its result. */
export async function writeAtomically<T>(
  path: string,
  write: (fh: FileHandle) => Promise<T>,
  options: AtomicWriteOptions = {},
): Promise<T> {
  const overwrite = options.overwrite ?? true;
  const target = await resolveTarget(path);
  if (target.info !== null) {
    if (!target.info.isFile()) throw new NotRegularFileError(path, kindOf(target.info));
    if (!overwrite) throw exists(path);
  }
  await removeStaleTemps(target.path);
  const temp = `${target.path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  const mode = target.info === null ? 0o666 : target.info.mode & 0o777;
  const fh = await fsp.open(temp, 'wx', mode);
  let placed = false;
  try {
    if (target.info !== null) await fh.chmod(mode); // exactly the old bits, whatever the umask
    const result = await write(fh);
    await fh.sync();
    await fh.close();
    placed = await place(temp, target.path, path, overwrite);
    return result;
  } catch (error) {
    await fh.close().catch(() => {});
    if (!placed) await fsp.unlink(temp).catch(() => {});
    throw error;
  }
}

/** Moves the finished temporary file to `final`; true once it is there. */
async function place(temp: string, final: string, path: string, overwrite: boolean) {
  if (!overwrite) {
    try {
      await fsp.link(temp, final);
      await fsp.unlink(temp).catch(() => {});
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'EEXIST') throw exists(path);
      // A file system without hard links: the check above stands, the rename replaces.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') {
        throw error;
      }
    }
  }
  // Checked again just before: a FIFO or device put there meanwhile is not replaced either.
  const now = await resolveTarget(final);
  if (now.info !== null && !now.info.isFile())
    throw new NotRegularFileError(path, kindOf(now.info));
  await fsp.rename(temp, final);
  return true;
}

/**
 * Removes `<name>.<pid>.<random>.tmp` files beside `path` whose writer (`pid`) is no longer
 * running on this machine: what a SIGKILL during a save left. Temporary files of running
 * processes are left alone, and so is anything that does not follow that pattern.
 */
export async function removeStaleTemps(path: string): Promise<void> {
  const dir = dirname(path);
  const base = basename(path);
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !name.endsWith('.tmp')) continue;
    const parts = name.slice(base.length + 1, -'.tmp'.length).split('.');
    if (parts.length !== 2 || !/^[0-9]+$/.test(parts[0]!) || !/^[0-9a-z]+$/.test(parts[1]!)) {
      continue;
    }
    const pid = Number(parts[0]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    await fsp.unlink(join(dir, name)).catch(() => {});
  }
}

/** Whether process `pid` runs on this machine (a process of another user counts). */
export function isAlive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
