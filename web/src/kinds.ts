/**
 * The filter types the page knows: the rows of the library's codec table that have a size
 * model and a display (label, blurb, colour). How to build a real filter of an explicit shape,
 * how much memory that shape takes and the model false positive rate after n keys all come from
 * each row's size model, so the page, `bloomkit calc` and the library give the same numbers and
 * a type added to the table appears in every view (calculator, plots, worker, live filter).
 * Only the browser-safe core is imported.
 */

import {
  CODECS,
  type LiveCells,
  type MembershipFilter,
  type SizeModel,
  type SizeShape,
  type TypeDisplay,
  typeNamed,
} from '../../src/index.js';

/** An explicit, serializable shape (it crosses to the Web Worker as plain data). */
export type Shape = SizeShape;

/** A type's name in the codec table. */
export type KindId = string;

export interface KindInfo extends TypeDisplay {
  readonly id: KindId;
  /** False for a static set (built once from all its keys): no live view, no fill curve. */
  readonly growable: boolean;
}

/** Every type the page offers, in the table's order. */
export const KINDS: readonly KindInfo[] = CODECS.flatMap((row) =>
  row.display !== undefined && row.model !== undefined
    ? [{ id: row.name, ...row.display, growable: row.create !== undefined }]
    : [],
);

/** The types a filter can be added to one key at a time. */
export const GROWABLE_KINDS: readonly KindInfo[] = KINDS.filter((k) => k.growable);

/** The types the live filter draws: growable, with a cell layout in their row. */
export const LIVE_KINDS: readonly KindInfo[] = GROWABLE_KINDS.filter((k) => k.live !== undefined);

/** How the live filter draws a shape of type `kind` (a `RangeError` for one it cannot draw). */
export function liveCells(kind: KindId): LiveCells {
  const live = kindInfo(kind).live;
  if (live === undefined) throw new RangeError(`the live filter cannot draw a ${kind} filter`);
  return live;
}

export function kindInfo(id: KindId): KindInfo {
  const info = KINDS.find((k) => k.id === id);
  if (info === undefined) throw new RangeError(`unknown filter kind ${JSON.stringify(id)}`);
  return info;
}

/** The size model of the shape's type. */
function model(shape: Shape): SizeModel<Shape> {
  return typeNamed(shape.kind, 'model').model;
}

/** A real, empty filter of `shape`, built with the library's public constructors. */
export function makeFilter(shape: Shape): MembershipFilter {
  const filter = model(shape).make(shape);
  if (filter === null) {
    throw new TypeError(`a ${shape.kind} filter is built from all its keys at once, never empty`);
  }
  return filter;
}

/** Bits of memory the shape's table takes (counters are 4 bits; cuckoo slots f bits). */
export function memoryBits(shape: Shape): number {
  return model(shape).bits(shape);
}

/** Cells of the shape's table: bits, counters or fingerprint slots (what the live view draws). */
export function cellCount(shape: Shape): number {
  return model(shape).cells(shape);
}

/** Probes per key, or null where the type has none (fingerprints). */
export function hashesOf(shape: Shape): number | null {
  return model(shape).hashes(shape);
}

/** The model false positive rate after `n` distinct keys: the type's size model. */
export function modelRate(shape: Shape, n: number): number {
  return model(shape).rate(shape, n);
}

/** The most keys the shape can take: a cuckoo table's slots, else unbounded. */
export function maxKeys(shape: Shape): number {
  return model(shape).maxKeys(shape);
}

/** The shape's parameters as label/value pairs, for tables. */
export function describeShape(shape: Shape): [string, string][] {
  return model(shape).describe(shape);
}
