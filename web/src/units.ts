/**
 * Reading what people type (`1e6`, `10M`, `1%`, `1/1000`, `64 MiB`) and writing numbers back
 * in a readable form. Parsers return null for text they cannot read, never a guess. Counts and
 * rates are written as the core's inspector views write them (one formatter for both).
 */

import { formatInt, formatRate } from '../../src/formats/view.js';

export { formatInt, formatRate };

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  bit: 1,
  bits: 1,
  kbit: 1e3,
  mbit: 1e6,
  gbit: 1e9,
  B: 8,
  byte: 8,
  bytes: 8,
  KB: 8e3,
  MB: 8e6,
  GB: 8e9,
  TB: 8e12,
  KiB: 8 * 2 ** 10,
  MiB: 8 * 2 ** 20,
  GiB: 8 * 2 ** 30,
  TiB: 8 * 2 ** 40,
};

const COUNT_SUFFIX: Record<string, number> = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, B: 1e9 };

function plainNumber(text: string): number | null {
  const t = text.replace(/[,_\s]/g, '');
  if (!/^[+]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return null;
  const x = Number(t);
  return Number.isFinite(x) ? x : null;
}

/** A key count: `1000000`, `1,000,000`, `1e6`, `10M`, `2.5k`. Null unless a positive integer. */
export function parseCount(text: string): number | null {
  const m = /^\s*([\d.,_eE+-]+)\s*([kKMGB]?)\s*$/.exec(text);
  if (m === null) return null;
  const x = plainNumber(m[1]!);
  if (x === null) return null;
  const v = x * COUNT_SUFFIX[m[2]!]!;
  return Number.isSafeInteger(v) && v > 0 ? v : null;
}

/** A probability: `0.01`, `1%`, `1e-3`, `1/1000`. Null unless in (0, 1). */
export function parseRate(text: string): number | null {
  const t = text.trim();
  let v: number | null;
  const frac = /^(.+)\/(.+)$/.exec(t);
  if (frac !== null) {
    const a = plainNumber(frac[1]!);
    const b = plainNumber(frac[2]!);
    v = a === null || b === null || b === 0 ? null : a / b;
  } else if (t.endsWith('%')) {
    const a = plainNumber(t.slice(0, -1));
    v = a === null ? null : a / 100;
  } else {
    v = plainNumber(t);
  }
  return v !== null && v > 0 && v < 1 ? v : null;
}

/** A size in bits: `9600` (bits), `9600 bits`, `1.2 KB`, `64 MiB`, `1 GB`. Null unless ≥ 1 bit. */
export function parseSize(text: string): number | null {
  const m = /^\s*([\d.,_eE+]+)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (m === null) return null;
  const x = plainNumber(m[1]!);
  const unit = SIZE_UNITS[m[2]!] ?? SIZE_UNITS[m[2]!.toLowerCase()];
  if (x === null || unit === undefined) return null;
  const v = Math.ceil(x * unit);
  return Number.isSafeInteger(v) && v >= 1 ? v : null;
}

/** A small positive integer (hash count). */
export function parseSmallInt(text: string, max: number): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const v = Number(t);
  return v >= 1 && v <= max ? v : null;
}

/** Bytes in binary units: `1.17 MiB`, `600 B`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${formatInt(v)} B` : `${v.toPrecision(3)} ${units[u]}`;
}

/** `1 in 1,043`; past a million, two significant digits: `1 in 4.2e18`. */
export function oneIn(p: number): string {
  if (Number.isNaN(p)) return '';
  if (!(p > 0)) return 'never';
  const x = 1 / p;
  return `1 in ${x < 1e6 ? formatInt(x) : x.toPrecision(2).replace('e+', 'e')}`;
}

/** A number with `digits` significant digits, no exponent below 1e6. */
export function formatNumber(x: number, digits = 3): string {
  if (Number.isNaN(x)) return '—';
  if (!Number.isFinite(x)) return '∞';
  if (Math.abs(x) >= 1e6 || (Math.abs(x) < 1e-3 && x !== 0)) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}
