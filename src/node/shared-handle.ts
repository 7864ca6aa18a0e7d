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
import { typeNamed } from '../formats/registry.js';

export type { SharedFilter, SharedFilterHandle, SharedFilterType };

/** A filter whose copies merge by OR (the bit filters): what a private copy needs. */
type BitFilterLike = SharedFilter & { shape(): object; union(other: unknown): unknown };

/** The filter behind `handle`, on the same shared memory. */
export function fromSharedHandle(handle: SharedFilterHandle): SharedFilter {
  const type = handle?.type;
  let open: (handle: SharedFilterHandle) => SharedFilter;
  try {
    open = typeNamed(type, 'openShared').openShared;
  } catch {
    throw new TypeError(`handle must be what share() returns, got type ${String(type)}`);
  }
  return open(handle);
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
  copy.union(source);
  return copy;
}

/**
 * A copy of `filter` (a classic, blocked or split-block filter) on shared memory, to `share()`
 * with worker threads that make private copies of it and merge theirs back.
 */
export function sharedTwin(filter: SharedFilter | MembershipFilter): SharedFilter {
  const source = filter as BitFilterLike;
  const Ctor = source.constructor as new (shape: object) => BitFilterLike;
  const twin = new Ctor({ ...source.shape(), shared: true });
  twin.union(source);
  return twin;
}
