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

/**
 * The bar's text in at most `width` characters (a terminal line less its last column): the
 * fullest of a few forms that fits, dropping the least useful parts first (bytes read, then the
 * rate, then the bar itself), so that the time left is never cut off ("26s lef").
 */
export function progressLine(
  label: string,
  records: number,
  seconds: number,
  read: number,
  total: number | undefined,
  width: number,
): string {
  const rate = `${si(seconds > 0 ? records / seconds : 0)}/s`;
  const done = `${si(records)} records`;
  let forms: string[];
  if (total !== undefined && total > 0) {
    const fraction = Math.min(1, read / total);
    const eta = fraction > 0 ? (seconds / fraction) * (1 - fraction) : Number.POSITIVE_INFINITY;
    const bar = (n: number) => {
      const full = Math.round(fraction * n);
      return `[${'#'.repeat(full)}${'.'.repeat(n - full)}]`;
    };
    const pct = `${(fraction * 100).toFixed(0)}%`;
    const left = `${duration(eta)} left`;
    forms = [
      `${label} ${bar(20)} ${pct} ${done}, ${rate}, ${bytes(read)} of ${bytes(total)}, ${left}`,
      `${label} ${bar(10)} ${pct} ${done}, ${rate}, ${left}`,
      `${label} ${pct} ${done}, ${left}`,
      `${label} ${pct}, ${left}`,
    ];
  } else {
    forms = [`${label}: ${done}, ${rate}, ${bytes(read)}`, `${label}: ${done}`];
  }
  return forms.find((f) => f.length <= width) ?? forms.at(-1)!.slice(0, Math.max(0, width));
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
    const columns = this.stream.columns ?? 80;
    const line = progressLine(this.label, records, seconds, read, total, columns - 1);
    this.stream.write(`\r${line}\x1b[K`);
    this.drawn = true;
  }

  /** Erases the bar. */
  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}
