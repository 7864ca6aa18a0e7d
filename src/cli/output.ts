/**
 * Buffered output to a stream (standard output): bytes are gathered in 256 KiB buffers and written
 * with back-pressure, so printing millions of records costs a few hundred large writes. A buffer
 * goes back to a small free list once the stream says it is written (its write callback), so a
 * long run reuses a few buffers instead of leaving one per write to the garbage collector. A
 * closed pipe (`bloomkit check ... | head`) ends the output quietly, as it does for grep.
 *
 * `records` prints the selected records of a batch without a call per record: it first moves them
 * together at the front of the batch's own buffer (one `copyWithin` per run of consecutive
 * selected records, nothing allocated), then copies that one region out.
 */

import { copyBytes } from './separators.js';

const SIZE = 256 << 10;
/** Written buffers kept for reuse. */
const KEEP = 4;

export class Output {
  private buf: Buffer = Buffer.allocUnsafe(SIZE);
  private free: Buffer[] = [];
  private len = 0;
  private broken = false;
  private error: Error | null = null;

  private made: NodeJS.WritableStream | null = null;
  /** Writes handed to the stream whose callback has not come yet (not yet taken by the OS). */
  private pending = 0;
  /** Set once `stop` resolved. */
  private stopped = false;

  /**
   * Output to `target`; a function is called for the stream at the first write, so that output
   * that stays empty never makes the stream (see CliIo). Once `stop` resolves (Ctrl-C or
   * SIGTERM: the interrupt's `arrived`), no wait for the reader goes on: {@link flush} and
   * {@link end} return at once, so a reader that stopped reading (a full pipe) cannot hold the
   * command past a signal.
   */
  constructor(
    private readonly target: NodeJS.WritableStream | (() => NodeJS.WritableStream),
    private readonly stop: Promise<unknown> = new Promise(() => {}),
  ) {
    if (typeof target !== 'function') void this.stream;
    void stop.then(() => {
      this.stopped = true;
    });
  }

  private get stream(): NodeJS.WritableStream {
    if (this.made === null) {
      const stream = typeof this.target === 'function' ? this.target() : this.target;
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') this.broken = true;
        else this.error = error;
      });
      this.made = stream;
    }
    return this.made;
  }

  /** True once the reader went away (EPIPE): the command may stop early. */
  get closed(): boolean {
    return this.broken;
  }

  /** Appends `data[s, e)` (copied: `data` may be reused at once). */
  put(data: Uint8Array, s: number, e: number): void {
    if (e - s <= 32 && this.len + (e - s) <= this.buf.length) {
      for (let i = s; i < e; i++) this.buf[this.len++] = data[i]!;
      return;
    }
    while (s < e) {
      if (this.len === this.buf.length) this.spill();
      const take = Math.min(e - s, this.buf.length - this.len);
      copyBytes(data, s, s + take, this.buf, this.len);
      this.len += take;
      s += take;
    }
  }

  /**
   * Appends record i of a batch (`data[starts[i], ends[i])`, then `sep`) for every i < count
   * with `answers[i] === want`, in order; returns how many. The selected records are first moved
   * to the front of `data` (which the batch no longer needs): `data` is overwritten.
   */
  records(
    data: Uint8Array,
    starts: Uint32Array,
    ends: Uint32Array,
    count: number,
    answers: Uint8Array,
    want: number,
    sep: number,
  ): number {
    let w = 0;
    let selected = 0;
    let tail = false;
    for (let i = 0; i < count; ) {
      if (answers[i] !== want) {
        i++;
        continue;
      }
      const first = i;
      while (i < count && answers[i] === want) i++;
      selected += i - first;
      const s = starts[first]!;
      const e = ends[i - 1]!;
      if (s !== w) data.copyWithin(w, s, e);
      w += e - s;
      // The separator goes where the run's own one was or before; an unterminated last record
      // that fills the buffer to its end has no room left: its separator is appended after.
      if (w < data.length) data[w++] = sep;
      else tail = true;
    }
    this.put(data, 0, w);
    if (tail) this.byte(sep);
    return selected;
  }

  /** Appends one byte. */
  byte(b: number): void {
    if (this.len === this.buf.length) this.spill();
    this.buf[this.len++] = b;
  }

  /** Appends text (UTF-8). */
  text(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.put(bytes, 0, bytes.length);
  }

  /** Hands the gathered bytes to the stream (without waiting). */
  private spill(): void {
    if (this.len === 0) return;
    const full = this.buf;
    const len = this.len;
    this.len = 0;
    if (this.broken) return; // nobody reads: the bytes are dropped, the buffer kept
    this.pending++;
    this.stream.write(full.subarray(0, len), () => {
      this.pending--;
      if (this.free.length < KEEP) this.free.push(full);
    });
    this.buf = this.free.pop() ?? Buffer.allocUnsafe(SIZE);
  }

  /** Writes what is gathered and waits until the stream can take more (back-pressure). */
  async flush(): Promise<void> {
    this.spill();
    if (this.error) throw this.error;
    if (this.broken || !this.needsDrain()) return;
    let done = () => {};
    const drained = new Promise<void>((resolve) => {
      done = () => resolve();
      this.stream.on('drain', done);
      this.stream.on('close', done);
    });
    try {
      await this.untilStop(drained);
    } finally {
      this.stream.off('drain', done);
      this.stream.off('close', done);
    }
  }

  /** True when `work` ended first; false when {@link stop} came first (or had come). */
  private untilStop(work: Promise<void>): Promise<boolean> {
    return Promise.race([work.then(() => true), this.stop.then(() => false)]);
  }

  private needsDrain(): boolean {
    if (this.made === null) return false;
    return (this.made as { writableNeedDrain?: boolean }).writableNeedDrain === true;
  }

  /**
   * Flushes and waits until everything written has been handed to the operating system; true
   * then (or when nothing was written), false when some of it never was: the reader went away
   * (EPIPE: what followed was dropped), or the wait was cut short by `stop` (see the
   * constructor).
   */
  async end(): Promise<boolean> {
    await this.flush();
    if (this.broken) return false;
    if (this.made === null) return true; // nothing was ever written
    const stream = this.stream;
    let written =
      !this.stopped &&
      (await this.untilStop(new Promise<void>((resolve) => stream.write('', () => resolve()))));
    if (!written) {
      // After the signal: what the OS took at once has its callback by the next turn of the
      // event loop; a write still waiting then waits for a reader that is not reading.
      await new Promise((resolve) => setImmediate(resolve));
      written = this.pending === 0;
    }
    if (this.error) throw this.error;
    return written;
  }
}
