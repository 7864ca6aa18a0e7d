/**
 * A filter type's size model, the one place each type's sizing is stated for every tool: the
 * library (`budgetSize`, `filterBytes`, `solveSize`), `bloomkit calc` and the web page's
 * calculator, plots and live filter all read it from the type's row in the codec table
 * (`formats/registry.ts`), so two tools never print two numbers for one question.
 *
 * A model solves "any two of n, p, m, k give the rest" for its type:
 *
 *   n: keys   p: false positive rate after n keys   m: memory in bits   k: probes per key
 *
 * Which pair is used when more than two are given: (n, m), then (n, p), then (m, p), then (n, k),
 * then (m, k) ({@link choosePair}). With (n, p) and no k, a type is sized exactly as its
 * `create({ capacity, fpp })` sizes it.
 */

import type { MembershipFilter } from '../filters/filter.js';

/** The inputs of a size question; any two (k optional where a type has no k). */
export interface SizeInputs {
  readonly n?: number;
  readonly p?: number;
  /** Memory in bits. */
  readonly m?: number;
  readonly k?: number;
}

/** The pair of inputs a model solves from. */
export type SizePair = 'nm' | 'np' | 'mp' | 'nk' | 'mk';

/**
 * A type's explicit shape: its `kind` (the type's name) and its constructor's numbers. Plain
 * data, so it crosses to a Web Worker and into a URL as it is.
 */
export type SizeShape = { readonly kind: string; readonly [field: string]: string | number };

/** What a model answers for one pair of inputs. */
export interface SizeSolution<S extends SizeShape = SizeShape> {
  readonly shape: S;
  /** Keys: given, or the most the shape holds at rate p. */
  readonly n: number;
  /** Remarks on inputs that were given but not used. */
  readonly notes?: readonly string[];
}

/** A type's size model (see the file comment). Every function is pure. */
export interface SizeModel<S extends SizeShape = SizeShape> {
  /** The shape for `pair` of `input`; a `RangeError` naming the problem when there is none. */
  solve(pair: SizePair, input: SizeInputs): SizeSolution<S>;
  /** Bits of memory the shape's table takes. */
  bits(shape: S): number;
  /** Bytes a filter of the shape allocates, when more than ⌈bits/8⌉ (whole words). */
  bytes?(shape: S): number;
  /** The model false positive rate after `n` distinct keys. */
  rate(shape: S, n: number): number;
  /** Cells of the table: bits, 4-bit counters or fingerprint slots. */
  cells(shape: S): number;
  /** Probes per key, or null where the type has none (fingerprints). */
  hashes(shape: S): number | null;
  /** The most keys the shape takes (a cuckoo table's slots), else +∞. */
  maxKeys(shape: S): number;
  /** The shape's parameters as label/value pairs, for tables. */
  describe(shape: S): [string, string][];
  /** A real, empty filter of `shape`, or null for a type built from all its keys at once. */
  make(shape: S): MembershipFilter | null;
}

/** The pair of inputs to solve from, or null when fewer than two are usable. */
export function choosePair(input: SizeInputs): SizePair | null {
  const has = (v: number | undefined): boolean => v !== undefined;
  if (has(input.n) && has(input.m)) return 'nm';
  if (has(input.n) && has(input.p)) return 'np';
  if (has(input.m) && has(input.p)) return 'mp';
  if (has(input.n) && has(input.k)) return 'nk';
  if (has(input.m) && has(input.k)) return 'mk';
  return null;
}

/** Numbers as a person reads them in a table (`1,048,576`). */
export function grouped(x: number): string {
  return x.toLocaleString('en-US');
}
