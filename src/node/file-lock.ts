/**
 * An advisory lock on a filter file, for read-modify-write (the command's `add`, a `Deduper`
 * opened with `lock`): while one process holds it, another that asks waits (a bounded time),
 * so two writers run one after the other and neither loses the other's keys.
 *
 * Node has no `flock(2)`, so the lock is a file beside the filter's real path (symbolic links
 * followed, so every name of one file shares one lock): `<file>.lock`, created with
 * `O_CREAT | O_EXCL` (atomic: exactly one creator wins, on local file systems and NFSv3+), holding
 * `{"pid", "start", "host", "since"}`. Why a lock and not a check before the rename: a check
 * leaves a window between the check and the rename in which the other writer's rename is lost.
 *
 * A lock whose holder is gone (killed, crashed) is stale and is taken over: same host, and the
 * pid no longer runs, or runs with another start time (`/proc/<pid>/stat` field 22, so a reused
 * pid does not keep a dead holder's lock alive). The takeover is itself guarded by a second lock
 * (`<file>.lock.break`, held for a read and an unlink) so that two waiters that both found the
 * lock stale cannot remove a third process's new lock. A lock file that is empty or unreadable
 * for more than 10 s (a holder killed between creating and writing it) is stale too.
 *
 * Waiting polls with a growing pause (10 ms up to 250 ms) until `timeoutMs` (default 60 s) has
 * passed, then throws `FileLockedError` naming the holder. Release removes the lock file only if
 * it is still this holder's.
 *
 * The lock file's few metadata calls (create, read, remove a file of some 100 bytes) are blocking
 * calls: each is shorter than a trip through Node's thread pool, and the command's `add` then
 * loads no `node:fs/promises` for its lock (about 5 ms of a run on empty input).
 */

import { closeSync, lstatSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { show } from '../errors.js';
import { isAlive } from './atomic-file.js';
import { resolveTarget } from './regular-file.js';

export interface FileLockOptions {
  /** How long to wait for another holder to finish, in ms; default 60,000 (0: do not wait). */
  timeoutMs?: number;
}

/** Who holds a lock, as its file says. */
export interface LockHolder {
  readonly pid: number;
  /** The holder's start time (Linux clock ticks since boot), '' where unknown. */
  readonly start: string;
  readonly host: string;
  /** When it took the lock (ISO 8601). */
  readonly since: string;
}

/** The lock stayed held by another process for the whole wait. */
export class FileLockedError extends Error {
  override readonly name = 'FileLockedError';
  readonly code = 'ELOCKED';
  constructor(
    readonly path: string,
    readonly lockPath: string,
    readonly holder: LockHolder | null,
    waitedMs: number,
  ) {
    super(
      `${path} is being updated by another process (${
        holder === null
          ? 'unknown holder'
          : `pid ${holder.pid} on ${holder.host}, since ${holder.since}`
      }); waited ${(waitedMs / 1000).toFixed(1)} s. If no such process runs, remove ${lockPath}`,
    );
  }
}

export interface FileLock {
  /** The lock file. */
  readonly lockPath: string;
  /** Removes the lock file (if it is still this holder's); idempotent. */
  release(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const UNREADABLE_STALE_MS = 10_000;

/** This process's start time in clock ticks since boot (Linux), '' elsewhere. */
function startOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state is field 3.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (!Number.isSafeInteger(h.pid) || typeof h.host !== 'string') return null;
    return {
      pid: h.pid!,
      start: typeof h.start === 'string' ? h.start : '',
      host: h.host,
      since: typeof h.since === 'string' ? h.since : '?',
    };
  } catch {
    return null;
  }
}

/** The lock file's holder and inode, or null when there is no lock file. */
async function readLock(
  lockPath: string,
): Promise<{ holder: LockHolder | null; ino: number; ageMs: number } | null> {
  try {
    const info = lstatSync(lockPath);
    // Only a regular file is read (a FIFO planted there would block the read).
    const text = info.isFile() ? readFileSync(lockPath, 'utf8') : '';
    return { holder: parseHolder(text), ino: info.ino, ageMs: Date.now() - info.mtimeMs };
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return null;
    throw error;
  }
}

function isStale(lock: { holder: LockHolder | null; ageMs: number }, host: string): boolean {
  const { holder } = lock;
  if (holder === null) return lock.ageMs > UNREADABLE_STALE_MS;
  if (holder.host !== host) return false; // another machine's process: cannot tell
  if (!isAlive(holder.pid)) return true;
  const start = startOf(holder.pid);
  return holder.start !== '' && start !== '' && start !== holder.start;
}

/** Creates `path` exclusively holding `text`; false if it exists. */
async function createExclusive(path: string, text: string): Promise<boolean> {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeFileSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Removes `path`, if it is still there. */
function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Removes the stale lock with inode `ino`, under the takeover lock; false if it is still there. */
async function breakStale(lockPath: string, ino: number, host: string): Promise<boolean> {
  const guard = `${lockPath}.break`;
  const me = JSON.stringify({ pid: process.pid, start: startOf(process.pid), host, since: '' });
  if (!(await createExclusive(guard, me))) {
    // Another waiter is taking over; a guard left by a killed one is removed (it is held for
    // microseconds, so one older than the unreadable limit is certainly stale).
    const other = await readLock(guard);
    if (other !== null && isStale(other, host)) unlinkQuietly(guard);
    return false;
  }
  try {
    const now = await readLock(lockPath);
    if (now === null || now.ino !== ino) return true; // gone, or another holder's now
    if (isStale(now, host)) unlinkSync(lockPath);
    return true;
  } finally {
    unlinkQuietly(guard);
  }
}

/**
 * Takes the lock on the file at `path` (which need not exist yet), waiting up to `timeoutMs`
 * while another live process holds it. Throws `FileLockedError` when the wait ends.
 */
export async function lockFile(path: string, options: FileLockOptions = {}): Promise<FileLock> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0) || !Number.isFinite(timeoutMs)) {
    throw new RangeError(`timeoutMs must be a finite number >= 0, got ${show(timeoutMs)}`);
  }
  const lockPath = `${(await resolveTarget(path)).path}.lock`;
  const host = hostname();
  const mine = JSON.stringify({
    pid: process.pid,
    start: startOf(process.pid),
    host,
    since: new Date().toISOString(),
  });
  const started = Date.now();
  let pause = 10;
  for (;;) {
    if (await createExclusive(lockPath, mine)) return held(lockPath, mine);
    const lock = await readLock(lockPath);
    if (lock === null) continue; // released meanwhile: try again at once
    if (isStale(lock, host) && (await breakStale(lockPath, lock.ino, host))) continue;
    const waited = Date.now() - started;
    if (waited >= timeoutMs) throw new FileLockedError(path, lockPath, lock.holder, waited);
    await sleep(Math.min(pause, timeoutMs - waited));
    pause = Math.min(pause * 2, 250);
  }
}

function held(lockPath: string, mine: string): FileLock {
  let released = false;
  return {
    lockPath,
    async release() {
      if (released) return;
      released = true;
      let text: string | null = null;
      try {
        text = readFileSync(lockPath, 'utf8');
      } catch {
        // gone: nothing to release
      }
      if (text === mine) unlinkQuietly(lockPath);
    },
  };
}

/** Runs `fn` holding the lock on `path`; the lock is released however `fn` ends. */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T>,
  options?: FileLockOptions,
): Promise<T> {
  const lock = await lockFile(path, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
