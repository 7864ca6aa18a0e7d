/**
 * Opens whichever filter a `share()` handle describes (the worker side of the pool and of
 * `buildParallel`): one table from handle type to class. The classes are imported from their own
 * modules, not the core barrel, so a worker thread loads only the filters it can open.
 */
import type { SharedFilterHandle, SharedFilterType } from '../bits/shared-handle.js';
import { BlockedBloomFilter } from '../filters/blocked/filter.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import { CountingBloomFilter } from '../filters/counting/filter.js';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import { SplitBlockBloomFilter } from '../filters/split-block/filter.js';

export type { SharedFilterHandle, SharedFilterType };

/** What the pool needs of a shared filter. */
export interface SharedFilter extends MembershipFilter {
  addBatch(batch: PackedKeys): number;
  hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array;
  share(): SharedFilterHandle;
}

/** A filter whose copies merge by OR (the bit filters): what a private copy needs. */
interface BitFilterLike extends SharedFilter {
  shape(): object;
  union(other: unknown): unknown;
}

const OPENERS: Record<SharedFilterType, (handle: SharedFilterHandle) => SharedFilter> = {
  bloom: (h) => BloomFilter.fromShared(h),
  blocked: (h) => BlockedBloomFilter.fromShared(h),
  'split-block': (h) => SplitBlockBloomFilter.fromShared(h),
  counting: (h) => CountingBloomFilter.fromShared(h),
};

/** The filter behind `handle`, on the same shared memory. */
export function fromSharedHandle(handle: SharedFilterHandle): SharedFilter {
  const open = OPENERS[handle?.type];
  if (open === undefined) {
    throw new TypeError(`handle must be what share() returns, got type ${String(handle?.type)}`);
  }
  return open(handle);
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
  if (typeof source.shape !== 'function' || typeof source.union !== 'function') {
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
