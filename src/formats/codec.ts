/**
 * The one descriptor each filter type exports for bloomkit's native format. The codec table
 * (`formats/registry.ts`) lists them all, and every consumer reads that table: `fromBytes`,
 * `save`/`load` in bloomkit/node, the golden-file tests, the conformance suite and `info`.
 *
 * Imports point one way: a type's codec imports its filter class; the filter never imports its
 * codec descriptor (its `toBytes` uses the type's `format.ts`, which knows the class by type only).
 */

import type { SharedFilterHandle } from '../bits/shared-handle.js';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import type { Funnel } from '../hash/keys.js';
import type { ContainerParts, DecodeOptions, NativeHeader, PayloadSink } from './native.js';
import type { NativeFormat } from './native-type.js';
import type { SizeModel } from './size-model.js';
import type { TypeView } from './view.js';

/** What a type is created from by name (`bloomkit create`, `dedup`, `buildParallel`). */
export interface Sizing {
  readonly capacity: number;
  readonly fpp: number;
  readonly funnel: Funnel;
  /** Keep the filter's memory in a `SharedArrayBuffer` (types with `openShared` only). */
  readonly shared?: boolean;
}

/** What worker threads need of a filter that lives in shared memory. */
export interface SharedFilter extends MembershipFilter {
  addBatch(batch: PackedKeys): number;
  hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array;
  share(): SharedFilterHandle;
}

/** How the page's live filter draws a type's cells (types that can be drawn). */
export interface LiveCells {
  /** What one cell is: a bit, a 4-bit counter, or a fingerprint slot (4 to a bucket). */
  readonly unit: 'bit' | 'counter' | 'slot';
  /** Cells per drawn row, and rows per labelled block (0: no blocks). */
  readonly perRow: number;
  readonly blockRows: number;
  /** Every cell's value: 0/1 bits, counter values, or fingerprints (0: an empty slot). */
  values(filter: MembershipFilter): Uint32Array;
  /** A cell's tooltip. */
  title(i: number, value: number): string;
}

/** How the page presents a type (its calculator, plots and live filter). */
export interface TypeDisplay {
  /** A short name for people (`Classic`, `Split-block`). */
  readonly label: string;
  /** One line: what the type is for. */
  readonly blurb: string;
  /** Its colour in plots. */
  readonly color: string;
  /** How the live filter draws it; absent when it cannot be drawn cell by cell. */
  readonly live?: LiveCells;
}

/**
 * What a type's row holds beyond its bytes: every consumer that works by type name reads these
 * (the command's `--type`, `budgetSize`, `buildParallel` and the worker pool, `calc` and the
 * page). A capability a type lacks is an absent field.
 */
export interface TypeCapabilities<F extends object = object> {
  /** Other names accepted for the type (`bloom` for `classic`); never printed. */
  readonly aliases?: readonly string[];
  /** A new empty filter sized for (capacity, fpp) with a funnel; absent for static sets. */
  readonly create?: (sizing: Sizing) => MembershipFilter;
  /**
   * The state a Deduper (bloomkit/node, `bloomkit dedup --type`) keeps its keys in, for
   * (capacity, fpp, funnel): present on the types whose `add` answers whether a key was new and
   * whose filters `clone`, so that the table alone says which types a Deduper takes. A
   * `RangeError` for a funnel the type cannot keep that way.
   */
  readonly deduper?: (sizing: Sizing) => MembershipFilter;
  /** The size model: "any two of n, p, m, k give the rest" (size-model.ts). */
  // biome-ignore lint/suspicious/noExplicitAny: each row's model has its own shape type
  readonly model?: SizeModel<any>;
  /** Opens a `share()` handle of this type on the same memory; absent when it cannot be shared. */
  readonly openShared?: (handle: SharedFilterHandle) => SharedFilter;
  /** How the page's calculator shows it; absent for types the calculator does not offer. */
  readonly display?: TypeDisplay;
  /** What the page's inspector shows of a filter of this type (plain data). */
  readonly view?: (filter: F) => TypeView;
}

/** A named value describing a filter, for `info`-style introspection. */
export interface FilterFacts {
  /** The type's name (`'classic'`, `'blocked'`, ...). */
  readonly type: string;
  /** The filter's shape and state: bits, hashes, blocks, layers, funnel, ... (JSON-safe). */
  readonly [field: string]: string | number | boolean | null | readonly unknown[] | object;
}

export interface FilterCodec<F extends object = object> extends TypeCapabilities<F> {
  /** The type's one name: the CLI's `--type`, `info`'s `type`, the page's, `buildParallel`'s. */
  readonly name: string;
  /** The native format's type id (`FILTER_TYPES`); never reused. */
  readonly typeId: number;
  /** The hash scheme ids (`HASH_SCHEMES` or Guava strategy ordinals) this type writes. */
  readonly hashSchemes: readonly number[];
  /** The class this codec reads and writes (tested with `instanceof`; its constructor may be private). */
  // biome-ignore lint/complexity/noBannedTypes: any class, also one with a private constructor
  readonly filterClass: Function & { readonly prototype: F };
  /** The container as parts that view the filter's own memory (nothing copied). */
  parts(filter: F): ContainerParts;
  /** Decodes a whole container (checksum checked). */
  decode(bytes: Uint8Array, options?: DecodeOptions): F;
  /**
   * A streaming reader's sink, built after the header and parameters are checked; null when the
   * type cannot be streamed into (then `load` reads the container whole and calls `decode`).
   */
  sink: ((header: NativeHeader, params: DataView) => PayloadSink<F>) | null;
  /** Shape and state for `info` (what a person wants to know about the filter). */
  describe(filter: F): FilterFacts;
}

/** Widens a codec of one type to the table's element type. */
export function codec<F extends object>(c: FilterCodec<F>): FilterCodec<object> {
  return c as unknown as FilterCodec<object>;
}

/** The facts of a filter beyond its type and funnel, in the order `info` shows them. */
export type MoreFacts = Omit<FilterFacts, 'type'>;

/**
 * The codec of a type from its native format (filters/<type>/format.ts), its class and the facts
 * `info` shows: `type` (the codec's name) and `funnel` come first, then `facts(filter)`.
 */
export function nativeCodec<
  F extends { readonly funnel: string },
  C extends { readonly prototype: F },
>(
  name: string,
  filterClass: C,
  format: NativeFormat<F, C>,
  facts: (filter: F) => MoreFacts,
  capabilities: TypeCapabilities<F> = {},
): FilterCodec<F> {
  const sink = format.sink;
  return {
    ...capabilities,
    name,
    typeId: format.native.typeId,
    hashSchemes: Object.values(format.native.schemes),
    // biome-ignore lint/complexity/noBannedTypes: any class, also one with a private constructor
    filterClass: filterClass as unknown as Function & { readonly prototype: F },
    parts: (filter) => format.parts(filter),
    decode: (bytes, options) => format.decode(bytes, options, filterClass),
    sink: sink === null ? null : (header, params) => sink(header, params, filterClass),
    describe: (filter) => ({ type: name, funnel: filter.funnel, ...facts(filter) }),
  };
}

/** The fill facts of a bit-array filter (classic, blocked, split-block), after its shape. */
export function bitFacts(filter: {
  readonly bitSize: number;
  readonly bitCount: number;
  estimatedCount(): number;
  expectedFpp(): number;
}): MoreFacts {
  return {
    bitsSet: filter.bitCount,
    estimatedCount: filter.estimatedCount(),
    expectedFpp: filter.expectedFpp(),
    bytes: filter.bitSize / 8,
  };
}
