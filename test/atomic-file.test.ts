/**
 * The library's file rules on real files: `save` writes through a symbolic link, keeps the
 * replaced file's mode, never replaces a FIFO, refuses an existing file with `overwrite: false`,
 * and removes the temporary files of dead writers only; `load` refuses a FIFO at once; the file
 * lock (`lockFile`) excludes a second holder in this process, ends its wait with
 * `FileLockedError`, and takes over the lock of a dead process, or of a reused pid, with one
 * holder at a time even when many waiters find the stale lock together.
 */

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BloomFilter } from '../src/filters/bloom/filter.js';
import { FileLockedError, lockFile } from '../src/node/file-lock.js';
import { load, save } from '../src/node/io.js';
import { NotRegularFileError } from '../src/node/regular-file.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomkit-atomic-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const path = (name: string) => join(dir, name);

function filterOf(...keys: string[]): BloomFilter<string> {
  const f = BloomFilter.create({ capacity: 100, fpp: 0.01 }) as BloomFilter<string>;
  for (const k of keys) f.add(k);
  return f;
}

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' }).pid!;
}

describe('save', () => {
  it('writes through a symbolic link, keeps the mode, and refuses with overwrite: false', async () => {
    const real = path('real.blmk');
    await save(filterOf('a'), real);
    chmodSync(real, 0o640);
    symlinkSync('real.blmk', path('link.blmk'));
    await save(filterOf('a', 'b'), path('link.blmk'));
    expect(lstatSync(path('link.blmk')).isSymbolicLink()).toBe(true);
    expect(((await load(real)) as BloomFilter<string>).has('b')).toBe(true);
    expect(statSync(real).mode & 0o777).toBe(0o640);
    const before = readFileSync(real);
    await expect(save(filterOf('c'), path('link.blmk'), { overwrite: false })).rejects.toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(readFileSync(real).equals(before)).toBe(true);
    await save(filterOf('new'), path('fresh.blmk'), { overwrite: false });
    expect(((await load(path('fresh.blmk'))) as BloomFilter<string>).has('new')).toBe(true);
  });

  it('never replaces a FIFO, and load refuses one at once', async () => {
    const fifo = path('fifo.blmk');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(save(filterOf('a'), fifo)).rejects.toThrow(NotRegularFileError);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    const bounded = new Promise((_, reject) => setTimeout(() => reject(new Error('hung')), 5000));
    await expect(Promise.race([load(fifo), bounded])).rejects.toThrow(/is a FIFO/);
  });

  it("removes dead writers' temporary files, not a live one's or other names", async () => {
    const file = path('temps.blmk');
    const dead = `${file}.${deadPid()}.abc123.tmp`;
    const live = `${file}.${process.pid}.abc123.tmp`;
    const other = `${file}.notes.tmp`;
    for (const p of [dead, live, other]) writeFileSync(p, 'x');
    await save(filterOf('a'), file);
    expect([existsSync(dead), existsSync(live), existsSync(other)]).toEqual([false, true, true]);
  });
});

describe('lockFile', () => {
  it('a second holder waits, ends with FileLockedError, and gets in after release', async () => {
    const file = path('locked.blmk');
    const first = await lockFile(file);
    const started = Date.now();
    await expect(lockFile(file, { timeoutMs: 200 })).rejects.toThrow(FileLockedError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    const waiting = lockFile(file, { timeoutMs: 5000 });
    setTimeout(() => void first.release(), 100);
    const second = await waiting;
    await second.release();
    expect(existsSync(`${file}.lock`)).toBe(false);
    await expect(lockFile(file, { timeoutMs: -1 })).rejects.toThrow(RangeError);
  });

  it("takes over a dead process's lock, and a reused pid's, one holder at a time", async () => {
    const file = path('stale.blmk');
    for (const holder of [
      { pid: deadPid(), start: '1', host: hostname(), since: 'then' },
      // This process's pid with another start time: the holder was an earlier process.
      { pid: process.pid, start: '1', host: hostname(), since: 'then' },
    ]) {
      writeFileSync(`${file}.lock`, JSON.stringify(holder));
      // Eight waiters find the stale lock together: never two inside at once.
      let inside = 0;
      let most = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          const lock = await lockFile(file, { timeoutMs: 10_000 });
          inside++;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 5));
          inside--;
          await lock.release();
        }),
      );
      expect(most).toBe(1);
      expect(existsSync(`${file}.lock`)).toBe(false);
    }
  });
});
