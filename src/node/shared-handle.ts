/**
 * Opens whichever filter a `share()` handle describes (the worker side of the pool and of
 * `buildParallel`): the handle's type names a row of the codec table, whose `openShared` opens it.
 * Private copies for the workers of a build: a filter over one bit array (`BitFilter`: classic,
 * blocked, split-block) is an OR over its keys, so copies built apart merge by OR.
 */
import type { SharedFilterHandle, SharedFilterType } from '../bits/shared-handle.js';
import { BitFilter } from '../filters/bit-filter.js';
import type { MembershipFilter } from '../filters/filter.js';
import type { SharedFilter } from '../formats/codec.js';
import { loadCodec, loadedCodec, type TypeRow, typeRowNamed } from '../formats/type-table.js';

export type { SharedFilter, SharedFilterHandle, SharedFilterType };

/** A filter whose copies merge by OR (the bit filters): what a private copy needs. */
type BitFilterLike = SharedFilter & { shape(): object; union(other: unknown): unknown };

/** The row of the type `handle` names, if it can open shared memory; else a `TypeError`. */
function rowOf(handle: SharedFilterHandle): TypeRow {
  const type = handle?.type;
  try {
    return typeRowNamed(type, 'openShared');
  } catch {
    throw new TypeError(`handle must be what share() returns, got type ${String(type)}`);
  }
}

/**
 * Loads the codec of the type `handle` names (a worker thread loads that type's module alone, not
 * every type's: formats/type-table.ts); {@link fromSharedHandle} needs it loaded.
 */
export async function loadSharedType(handle: SharedFilterHandle): Promise<void> {
  await loadCodec(rowOf(handle));
}

/**
 * The filter behind `handle`, on the same shared memory. Its type's codec must be loaded
 * ({@link loadSharedType}).
 */
export function fromSharedHandle(handle: SharedFilterHandle): SharedFilter {
  const row = rowOf(handle);
  const codec = loadedCodec(row.typeId);
  if (codec?.openShared === undefined) {
    throw new Error(`the ${row.name} filter's module is not loaded: await loadSharedType() first`);
  }
  return codec.openShared(handle);
}

/** Whether copies of `filter` built apart merge by OR into it (a filter over one bit array). */
export function mergesByOr(filter: unknown): boolean {
  return filter instanceof BitFilter;
}

/**
 * A copy of the bit filter behind `handle` in this thread's plain memory (so in the type's
 * WebAssembly kernel, which shared memory cannot hold), or of `filter` itself: the same shape,
 * the same bits. A `TypeError` for a filter whose copies cannot merge by OR (counting).
 */
export function privateCopy(from: SharedFilterHandle | SharedFilter): SharedFilter {
  const source = (
    'kind' in from && from.kind === 'bloomkit-shared' ? fromSharedHandle(from) : from
  ) as BitFilterLike;
  if (!mergesByOr(source)) {
    throw new TypeError('only the classic, blocked and split-block filters have private copies');
  }
  const shape = { ...source.shape(), shared: false };
  const Ctor = source.constructor as new (shape: object) => BitFilterLike;
  const copy = new Ctor(shape);
  copyBits(copy, source);
  return copy;
}

/**
 * Makes the bits of `to` those of `from` (the same class and shape): one `memcpy`, where
 * `union` into a blank filter costs a load and an OR per word, and into shared memory an
 * `Atomics.or` per word (58 ms for a full 4.8 MB filter). Only while no other thread writes `to`.
 */
export function copyBits(to: SharedFilter, from: SharedFilter): void {
  const a = to as unknown as BitFilter;
  const b = from as unknown as BitFilter;
  if (a.constructor !== b.constructor || a.bits.data.length !== b.bits.data.length) {
    throw new TypeError('bits are copied between filters of one class and shape only');
  }
  a.bits.data.set(b.bits.data);
  a.bits.recount();
}

/**
 * ORs the bits of `copy` (a private copy of the bit filter behind `handle`: {@link privateCopy})
 * into that shared filter with plain loads and stores: about 10x faster than the `Atomics.or`
 * per word of `union` (4.8 MB: a few ms instead of about 40 ms), and exact only while no other
 * thread writes the shared filter (a plain OR racing another thread's write can lose its bit):
 * the caller merges its copies one at a time, into a filter that nothing else adds to then.
 */
export function orIntoAlone(handle: SharedFilterHandle, copy: SharedFilter): void {
  orIntoFilterAlone(fromSharedHandle(handle), copy);
}

/** {@link orIntoAlone} into the shared filter itself (the thread that holds it). */
export function orIntoFilterAlone(shared: SharedFilter, copy: SharedFilter): void {
  const target = shared as unknown as BitFilter;
  const source = copy as unknown as BitFilter;
  if (!(target instanceof BitFilter) || !(source instanceof BitFilter)) {
    throw new TypeError('only the classic, blocked and split-block filters merge by OR');
  }
  if (
    !target.isCompatible(source as never) ||
    target.bits.data.length !== source.bits.data.length
  ) {
    throw new TypeError("the copy is not of the shared filter's type and shape");
  }
  const to = target.bits.data;
  const from = source.bits.data;
  for (let i = 0; i < from.length; i++) {
    const w = from[i]!;
    if (w !== 0) to[i] = to[i]! | w;
  }
}

/**
 * A copy of `filter` (a classic, blocked or split-block filter) on shared memory, to `share()`
 * with worker threads that make private copies of it and merge theirs back.
 */
export function sharedTwin(filter: SharedFilter | MembershipFilter): SharedFilter {
  const source = filter as BitFilterLike;
  const Ctor = source.constructor as new (shape: object) => BitFilterLike;
  const twin = new Ctor({ ...source.shape(), shared: true });
  copyBits(twin, source);
  return twin;
}
