/**
 * What the web page's inspector shows of a filter, as plain data: each type's row of the codec
 * table gives it (`view`), so a type added to the table is inspected like the others. The
 * fill map is the fraction of cells set in up to 512 equal runs of the table.
 */

import { popcount32 } from '../bits/bit-array.js';

/** A part of a filter (a scalable layer, a cascade layer): a label and its cells. */
export interface ViewPart {
  readonly label: string;
  readonly cells: readonly string[];
}

/** The inspector's view of one filter. */
export interface TypeView {
  /** What it is, for people (`Classic Bloom filter`). */
  readonly title: string;
  /** Its shape and state as label/value rows. */
  readonly shape: readonly [string, string][];
  /** Fraction of cells set (bits, counters above 0, slots used); NaN where it means nothing. */
  readonly fill: number;
  /** The fill map: the fraction set in up to 512 runs (empty for none). */
  readonly density: Float32Array;
  /** The rate now, when it is not `expectedFpp()` (NaN: exact on the keys it was built over). */
  readonly fpr?: number;
  /** Column names of `parts`, and the parts (layers). */
  readonly partHeader?: readonly string[];
  readonly parts?: readonly ViewPart[];
}

/**
 * The fill map of `size` units split into up to 512 equal runs, each the fraction of its cells
 * set; `setIn(i)` is how many of unit i's `perUnit` cells are set.
 */
export function density(size: number, perUnit: number, setIn: (i: number) => number): Float32Array {
  const n = Math.min(512, size);
  const out = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    const from = Math.floor((r * size) / n);
    const to = Math.floor(((r + 1) * size) / n);
    let c = 0;
    for (let i = from; i < to; i++) c += setIn(i);
    out[r] = c / ((to - from) * perUnit);
  }
  return out;
}

/** The fill map of the bits of 32-bit words or bytes. */
export function wordDensity(data: Uint32Array | Uint8Array): Float32Array {
  return density(data.length, data.BYTES_PER_ELEMENT * 8, (i) => popcount32(data[i]!));
}

/** The 0/1 values of every bit of a bit array (the live filter's cells). */
export function bitValues(bits: {
  readonly bitSize: number;
  get(i: number): boolean;
}): Uint32Array {
  const out = new Uint32Array(bits.bitSize);
  for (let i = 0; i < out.length; i++) out[i] = bits.get(i) ? 1 : 0;
  return out;
}

/** Bits set in bytes or 32-bit words. */
export function bitsSetIn(data: Uint32Array | Uint8Array): number {
  let c = 0;
  for (const w of data) c += popcount32(w);
  return c;
}

/**
 * A count as the page writes it: `1,048,576`; `—` for no number (a full filter's estimated
 * count is ∞: the bits no longer tell; `bloomkit info` writes `—` too, `--json` null).
 */
export function formatInt(x: number): string {
  return Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—';
}

/** A rate as the page writes it: a percent from 0.1%, else `1.23e-5`. */
export function formatRate(p: number): string {
  if (Number.isNaN(p)) return '—';
  if (p === 0) return '0';
  if (p >= 0.001) return `${(p * 100).toPrecision(3)}%`;
  return p.toExponential(2);
}
