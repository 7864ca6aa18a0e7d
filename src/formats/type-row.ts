/**
 * The shape of a row of the lazy table of filter types (type-table.ts): a type's light facts, read
 * off its codec by scripts/make-type-table.ts, and the loader of its codec module.
 */

import type { FilterCodec, TypeCapabilities } from './codec.js';

/** The optional capabilities a row can have (each an optional field of its codec). */
export type Capability = Exclude<keyof TypeCapabilities, 'aliases'>;

/** Every capability, in the order rows list them. */
export const CAPABILITIES: readonly Capability[] = [
  'create',
  'deduper',
  'model',
  'openShared',
  'display',
  'view',
];

/** One type's light facts, and how to load its codec. */
export interface TypeRow {
  /** Its one name (the codec's `name`). */
  readonly name: string;
  /** Other names accepted for it (the codec's `aliases`); never listed. */
  readonly aliases: readonly string[];
  /** Its native type id (the codec's `typeId`). */
  readonly typeId: number;
  /** The capabilities its codec has (the optional fields it sets). */
  readonly capabilities: readonly Capability[];
  /** Imports its codec module (called once; see {@link loadCodec}). */
  readonly load: () => Promise<FilterCodec<object>>;
}
