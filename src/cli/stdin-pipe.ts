/**
 * Standard input when it is a pipe, read without Node's stream for as long as no read has to
 * wait: through a second, non-blocking open of the same pipe (`/proc/self/fd/0`, Linux), whose
 * reads take the same bytes in the same order. An empty pipe, or one whose writer has already
 * written everything (`printf ... | bloomkit check f.bloom`, `cmd | bloomkit add f.bloom` once
 * `cmd` is ahead), is read to its end without making `process.stdin`, whose socket loads Node's
 * net and stream code (some 5 ms of CPU, a tenth of an empty run's own cost). At the first read
 * that would wait (the writer is still at work), that descriptor is closed and the rest is read
 * through the stream: never both at once, so nothing is read twice or out of order. No read here
 * waits and the event loop turns every few reads, so Ctrl-C and SIGTERM are answered as before.
 * Elsewhere (no `/proc`; not an anonymous pipe: a named FIFO, a socket, a terminal)
 * {@link openStdinPipe} gives null and the stream is used from the start.
 */

import { closeSync, constants, openSync, readlinkSync, readSync } from 'node:fs';

/** Bytes a non-blocking read asks for: a pipe's default capacity on Linux. */
const PIPE_READ = 65536;
/** Reads between two turns of the event loop (see {@link StdinPipe.chunks}): 256 KiB. */
const YIELD_EVERY = 4;

/**
 * A non-blocking descriptor of standard input's pipe (`fd`, 0 in the process, which the caller
 * found is a FIFO), or null when it is not an anonymous pipe or cannot be opened again here (the
 * caller reads the stream). A named FIFO is left to the stream: a non-blocking read of one that
 * no writer has opened yet reads as its end, where the stream waits for the writer.
 */
export function openStdinPipe(fd: number): number | null {
  if (process.platform !== 'linux') return null;
  const path = `/proc/self/fd/${fd}`;
  try {
    if (!readlinkSync(path).startsWith('pipe:')) return null;
    return openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
}

/** A stream {@link StdinPipe} may hand over to: Node's `process.stdin`, or a test's. */
export interface HandOver extends AsyncIterable<Uint8Array> {
  destroy?(): void;
}

/**
 * The pipe's bytes ({@link chunks}): read from `fd` ({@link openStdinPipe}; closed here) to the
 * end, or until a read would wait, then from `stream()` (made only then) to the end.
 */
export class StdinPipe {
  private made: HandOver | null = null;
  private closed = false;

  constructor(
    /** The pipe's own descriptor ({@link openStdinPipe}), or null: the stream from the start. */
    private fd: number | null,
    private readonly stream: () => HandOver,
  ) {}

  async *chunks(): AsyncGenerator<Uint8Array> {
    for (let reads = 1; this.fd !== null; reads++) {
      // The event loop runs now and then: signals (Ctrl-C, SIGTERM) are handled there, and
      // while the writer stays ahead no read waits, so this loop alone would run in promise
      // jobs only and never let them in.
      if (reads % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      if (this.fd === null) return;
      const chunk = Buffer.allocUnsafe(PIPE_READ);
      let n: number;
      try {
        n = readSync(this.fd, chunk, 0, PIPE_READ, null);
      } catch (error) {
        if ((error as { code?: string }).code === 'EAGAIN') break;
        throw error;
      }
      if (n === 0) {
        this.close();
        return;
      }
      yield chunk.subarray(0, n);
    }
    this.closeFd();
    if (this.closed) return;
    this.made = this.stream();
    yield* this.made;
  }

  /** Ends the reading: closes the descriptor if still open and destroys the stream if made. */
  close(): void {
    this.closed = true;
    this.closeFd();
    this.made?.destroy?.();
  }

  private closeFd(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
