/**
 * The command's reader of a standard-input pipe (src/cli/stdin-pipe.ts), on its own: its
 * non-blocking phase lets the event loop run while the writer stays ahead (signal handlers run
 * there: a run fed faster than it reads still answers Ctrl-C and SIGTERM), and it hands over to
 * the stream at the first read that would wait, in order. A regular file stands in for a writer
 * that is always ahead (its reads never wait); a FIFO with an open, silent writer for one that
 * is not. The whole command over real pipes is in cli-files.test.ts.
 */

import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StdinPipe } from '../src/cli/stdin-pipe.js';

const dir = mkdtempSync(join(tmpdir(), 'bloomkit-stdin-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file of `bytes` bytes, byte i = i mod 251. */
function bigFile(name: string, bytes: number): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    Uint8Array.from({ length: bytes }, (_, i) => i % 251),
  );
  return path;
}

describe('StdinPipe', () => {
  it('lets the event loop run while its reads never wait (a writer always ahead)', async () => {
    const fd = openSync(bigFile('ahead.bin', 4 << 20), 'r');
    const pipe = new StdinPipe(fd, () => {
      throw new Error('no read waited: the stream is never made');
    });
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    let chunks = 0;
    let total = 0;
    let turnedAt = -1;
    for await (const chunk of pipe.chunks()) {
      chunks++;
      total += chunk.length;
      if (turned && turnedAt < 0) turnedAt = chunks;
    }
    expect(total).toBe(4 << 20);
    // 64 chunks of 64 KiB: the event loop ran within the first few, not after the last.
    expect(turnedAt, `${chunks} chunks`).toBeGreaterThan(0);
    expect(turnedAt).toBeLessThanOrEqual(8);
  });

  it('hands over to the stream at the first read that would wait, bytes in order', async () => {
    const fifo = join(dir, 'silent.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    try {
      writeFileSync(writer, 'first ');
      const rest = [Buffer.from('second '), Buffer.from('third')];
      let streams = 0;
      const pipe = new StdinPipe(reader, () => {
        streams++;
        return (async function* () {
          yield* rest;
        })();
      });
      const got: string[] = [];
      for await (const chunk of pipe.chunks()) got.push(Buffer.from(chunk).toString());
      expect(got).toEqual(['first ', 'second ', 'third']);
      expect(streams).toBe(1);
    } finally {
      closeSync(writer);
    }
  });

  it('close() ends the reading: no more chunks, the stream never made', async () => {
    const fd = openSync(bigFile('closed.bin', 1 << 20), 'r');
    const pipe = new StdinPipe(fd, () => {
      throw new Error('the stream must not be made after close()');
    });
    const chunks = pipe.chunks();
    expect((await chunks.next()).done).toBe(false);
    pipe.close();
    expect((await chunks.next()).done).toBe(true);
  });
});
