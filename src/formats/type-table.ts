/**
 * The table of filter types, lazy: one row per native type with its light facts (name, aliases,
 * type id, which capabilities its codec has) held at once, and its codec (the filter class, its
 * kernels and wasm, its format) loaded on first use. Its twin `registry.ts` is the library's
 * synchronous table (`CODECS`, `fromBytes`, `codecOf`, `typeNamed`, ...), which imports every
 * codec; test/type-table.test.ts holds the two to the same types, order and facts.
 *
 * Who reads it lazily: code that should not load every type to use one (the command, bloomkit/node's
 * `load`/`save`, worker threads). A row's light facts cost nothing; its codec costs its module:
 *
 *     const row = typeRowNamed(name, 'create');   // sync: a RangeError naming --type's choices
 *     const codec = await loadCodec(row);          // async once per type and process
 *     codec.create!(sizing);
 *
 *     await loadCodec(header.type);                // by native type id (undefined: no such row)
 *     loadedCodec(header.type)?.decode(bytes);      // sync, after a load (a worker's message loop)
 *     await codecOfFilter(filter);                  // the codec that writes a filter
 *
 * A loaded codec is the same object as `registry.ts`'s row of that type (one module instance).
 *
 * The rows (type-rows.ts) are not written by hand: scripts/make-type-table.ts generates them from
 * the codec table (registry.ts's `CODECS`, where a type is declared), and test/type-table.test.ts
 * fails while they are stale. Adding a type: its codec in `CODECS`, then run the script
 * (docs/ARCHITECTURE.md has the other steps).
 */

import { mustBe } from '../errors.js';
import type { FilterCodec } from './codec.js';
import { CAPABILITIES, type Capability, type TypeRow } from './type-row.js';
import { TYPE_ROWS } from './type-rows.js';

export { CAPABILITIES, type Capability, TYPE_ROWS, type TypeRow };

const ROW_BY_TYPE = new Map(TYPE_ROWS.map((r) => [r.typeId, r]));
const ROW_BY_NAME = new Map(
  TYPE_ROWS.flatMap((r) => [r.name, ...r.aliases].map((name) => [name, r] as const)),
);

/** The names of the rows that have `capability` (every row when undefined), in table order. */
export function typeNamesWith(capability?: Capability): string[] {
  return TYPE_ROWS.filter(
    (r) => capability === undefined || r.capabilities.includes(capability),
  ).map((r) => r.name);
}

/**
 * The row of the type called `name` (or an alias); a `RangeError` naming `parameter` and listing
 * the rows that have `capability` when there is no such type or it lacks that capability.
 */
export function typeRowNamed(name: unknown, capability?: Capability, parameter = 'type'): TypeRow {
  const row = typeof name === 'string' ? ROW_BY_NAME.get(name) : undefined;
  if (row !== undefined && (capability === undefined || row.capabilities.includes(capability))) {
    return row;
  }
  throw mustBe(parameter, `one of ${typeNamesWith(capability).join(', ')}`, name);
}

/** The row of native type id `typeId`, or undefined. */
export function typeRowOf(typeId: number): TypeRow | undefined {
  return ROW_BY_TYPE.get(typeId);
}

/** Codecs loaded so far, by type id; and the loads in flight. */
const loaded = new Map<number, FilterCodec<object>>();
const loading = new Map<number, Promise<FilterCodec<object>>>();

/**
 * The codec of a row (or of a native type id: undefined when no row has it), its module imported
 * on the first call for that type in this process; later calls resolve to the same object.
 */
export function loadCodec(row: TypeRow): Promise<FilterCodec<object>>;
export function loadCodec(typeId: number): Promise<FilterCodec<object> | undefined>;
export async function loadCodec(of: TypeRow | number): Promise<FilterCodec<object> | undefined> {
  const row = typeof of === 'number' ? ROW_BY_TYPE.get(of) : of;
  if (row === undefined) return undefined;
  const done = loaded.get(row.typeId);
  if (done !== undefined) return done;
  let pending = loading.get(row.typeId);
  if (pending === undefined) {
    pending = row.load().then((c) => {
      loaded.set(row.typeId, c);
      loading.delete(row.typeId);
      return c;
    });
    loading.set(row.typeId, pending);
  }
  return pending;
}

/** Every row's codec (each module imported now unless it was), in table order. */
export function loadAllCodecs(): Promise<FilterCodec<object>[]> {
  return Promise.all(TYPE_ROWS.map((r) => loadCodec(r)));
}

/** The codec of native type id `typeId` if {@link loadCodec} loaded it already, else undefined. */
export function loadedCodec(typeId: number): FilterCodec<object> | undefined {
  return loaded.get(typeId);
}

/**
 * The codec that writes `filter`, or undefined for an object of no native type. A loaded codec
 * whose class is exactly the filter's answers at once (an exact class is the most derived one);
 * otherwise every codec is loaded and the most derived class that the filter is an instance of
 * wins, as in registry.ts's `codecOf` (a subclass is never written as its base type).
 */
export async function codecOfFilter(filter: unknown): Promise<FilterCodec<object> | undefined> {
  if (filter === null || typeof filter !== 'object') return undefined;
  const ctor = (filter as { constructor?: unknown }).constructor;
  for (const c of loaded.values()) if (c.filterClass === ctor) return c;
  let best: FilterCodec<object> | undefined;
  for (const c of await loadAllCodecs()) {
    if (filter instanceof c.filterClass) {
      if (best === undefined || c.filterClass.prototype instanceof best.filterClass) best = c;
    }
  }
  return best;
}
