/**
 * A one-line progress bar on standard error: records done, rate, bytes read, and the percentage
 * and time left when the input's size is known. It is drawn only when standard error is a
 * terminal (and not turned off with `--no-progress`), so pipes and log files get nothing extra.
 */

import type { CliIo, OptionValues } from './command.js';

const REDRAW_MS = 150;

function si(n: number): string {
  if (n < 1e4) return String(Math.round(n));
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  if (n < 1e9) return `${(n / 1e6).toFixed(2)}M`;
  return `${(n / 1e9).toFixed(2)}G`;
}

function bytes(n: number): string {
  if (n < 2 ** 20) return `${(n / 2 ** 10).toFixed(0)} KiB`;
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  return `${(n / 2 ** 30).toFixed(2)} GiB`;
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${Math.ceil(s)}s`;
  return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;
}

export class Progress {
  private readonly started = performance.now();
  private last = 0;
  private drawn = false;

  private constructor(
    private readonly stream: NodeJS.WritableStream & { columns?: number },
    private readonly label: string,
  ) {}

  /** A bar on `io.stderr` if it is a terminal and `--no-progress` was not given, else null. */
  static create(io: CliIo, options: OptionValues, label: string): Progress | null {
    if (options['no-progress'] === true || io.stderr.isTTY !== true) return null;
    return new Progress(io.stderr, label);
  }

  /** Redraws (at most every 150 ms): `records` done, `read` of `total` bytes read. */
  update(records: number, read: number, total: number | undefined, force = false): void {
    const now = performance.now();
    if (!force && now - this.last < REDRAW_MS) return;
    this.last = now;
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? records / seconds : 0;
    let line = `${this.label}: ${si(records)} records, ${si(rate)}/s, ${bytes(read)}`;
    if (total !== undefined && total > 0) {
      const fraction = Math.min(1, read / total);
      const width = 20;
      const full = Math.round(fraction * width);
      const eta = fraction > 0 ? (seconds / fraction) * (1 - fraction) : Number.POSITIVE_INFINITY;
      line = `${this.label} [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${(fraction * 100).toFixed(0)}% ${si(records)} records, ${si(rate)}/s, ${bytes(read)} of ${bytes(total)}, ${duration(eta)} left`;
    }
    const columns = this.stream.columns ?? 80;
    this.stream.write(`\r${line.slice(0, columns - 1)}\x1b[K`);
    this.drawn = true;
  }

  /** Erases the bar. */
  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}
