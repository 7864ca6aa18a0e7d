/**
 * The one descriptor each filter type exports for bloomkit's native format. The codec table
 * (`formats/registry.ts`) lists them all, and every consumer reads that table: `fromBytes`,
 * `save`/`load` in bloomkit/node, the golden-file tests, the conformance suite and `info`.
 *
 * Imports point one way: a type's codec imports its filter class; the filter never imports its
 * codec descriptor (its `toBytes` uses the type's `format.ts`, which knows the class by type only).
 */

import type { ContainerParts, DecodeOptions, NativeHeader, PayloadSink } from './native.js';
import type { NativeFormat } from './native-type.js';

/** A named value describing a filter, for `info`-style introspection. */
export interface FilterFacts {
  /** The codec's name (`'bloom'`, `'blocked'`, ...). */
  readonly type: string;
  /** The filter's shape and state: bits, hashes, blocks, layers, funnel, ... (JSON-safe). */
  readonly [field: string]: string | number | boolean | null | readonly unknown[] | object;
}

export interface FilterCodec<F extends object = object> {
  /** Short name, also the CLI's `--type` value where the type can be created from (n, p). */
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
): FilterCodec<F> {
  const sink = format.sink;
  return {
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
