/**
 * Writing a file atomically: into a temporary file next to it (a unique name, created
 * exclusively), fsync, close, then rename over the target, so a reader sees the old file or the
 * whole new one. If writing fails or is aborted, the temporary file is removed and the old file
 * (if any) is left untouched.
 */

import { type FileHandle, open, rename, unlink } from 'node:fs/promises';

/** Writes `path` through `write` (given the temporary file's handle); resolves to its result. */
export async function writeAtomically<T>(
  path: string,
  write: (fh: FileHandle) => Promise<T>,
): Promise<T> {
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  const fh = await open(temp, 'wx');
  try {
    const result = await write(fh);
    await fh.sync();
    await fh.close();
    await rename(temp, path);
    return result;
  } catch (error) {
    await fh.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
}
