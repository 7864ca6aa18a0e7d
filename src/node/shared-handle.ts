/**
 * Opens whichever filter a `share()` handle describes (the worker side of the pool and of
 * `buildParallel`): one table from handle type to class.
 */
import type { SharedFilterHandle, SharedFilterType } from '../bits/shared-handle.js';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import {
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  SplitBlockBloomFilter,
} from '../index.js';

export type { SharedFilterHandle, SharedFilterType };

/** What the pool needs of a shared filter. */
export interface SharedFilter extends MembershipFilter {
  addBatch(batch: PackedKeys): number;
  hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array;
  share(): SharedFilterHandle;
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
