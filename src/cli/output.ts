/**
 * Buffered output to a stream (standard output): bytes are gathered in 1 MiB and written with
 * back-pressure, so printing millions of records costs a few large writes. A buffer goes back to
 * a small free list once the stream says it is written (its write callback), so a long run reuses
 * a few buffers instead of leaving one per MiB printed to the garbage collector. A closed pipe
 * (`bloomkit check ... | head`) ends the output quietly, as it does for grep.
 */

const SIZE = 1 << 20;
/** Written buffers kept for reuse. */
const KEEP = 4;

export class Output {
  private buf: Buffer = Buffer.allocUnsafe(SIZE);
  private free: Buffer[] = [];
  private len = 0;
  private broken = false;
  private error: Error | null = null;

  constructor(private readonly stream: NodeJS.WritableStream) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') this.broken = true;
      else this.error = error;
    });
  }

  /** True once the reader went away (EPIPE): the command may stop early. */
  get closed(): boolean {
    return this.broken;
  }

  /** Appends `data[s, e)`. */
  put(data: Uint8Array, s: number, e: number): void {
    if (this.len + (e - s) > this.buf.length) {
      this.spill();
      if (e - s > this.buf.length) {
        this.stream.write(Buffer.from(data.subarray(s, e)));
        return;
      }
    }
    if (e - s > 32) this.buf.set(data.subarray(s, e), this.len);
    else for (let i = s; i < e; i++) this.buf[this.len + i - s] = data[i]!;
    this.len += e - s;
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
    return (this.stream as { writableNeedDrain?: boolean }).writableNeedDrain === true;
  }

  /** Flushes and waits until everything written has been handed to the operating system. */
  async end(): Promise<void> {
    await this.flush();
    if (this.broken) return;
    await new Promise<void>((resolve) => this.stream.write('', () => resolve()));
    if (this.error) throw this.error;
  }
}
