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

  /**
   * Output to `target`; a function is called for the stream at the first write, so that output
   * that stays empty never makes the stream (see CliIo).
   */
  constructor(private readonly target: NodeJS.WritableStream | (() => NodeJS.WritableStream)) {
    if (typeof target !== 'function') void this.stream;
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
    this.stream.write(full.subarray(0, len), () => {
      if (this.free.length < KEEP) this.free.push(full);
    });
    this.buf = this.free.pop() ?? Buffer.allocUnsafe(SIZE);
  }

  /** Writes what is gathered and waits until the stream can take more (back-pressure). */
  async flush(): Promise<void> {
    this.spill();
    if (this.error) throw this.error;
    if (this.broken || !this.needsDrain()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        resolve();
      };
      this.stream.on('drain', done);
      this.stream.on('close', done);
    });
  }

  private needsDrain(): boolean {
    if (this.made === null) return false;
    return (this.made as { writableNeedDrain?: boolean }).writableNeedDrain === true;
  }

  /** Flushes and waits until everything written has been handed to the operating system. */
  async end(): Promise<void> {
    await this.flush();
    if (this.broken || this.made === null) return; // nothing was ever written
    await new Promise<void>((resolve) => this.stream.write('', () => resolve()));
    if (this.error) throw this.error;
  }
}
