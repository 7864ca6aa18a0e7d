/**
 * Opens whichever filter a `share()` handle describes (the worker side of the pool and of
 * `buildParallel`): the handle's type names a row of the codec table, whose `openShared` opens it.
 */
import type { SharedFilterHandle, SharedFilterType } from '../bits/shared-handle.js';
import type { SharedFilter } from '../formats/codec.js';
import { typeNamed } from '../formats/registry.js';

export type { SharedFilter, SharedFilterHandle, SharedFilterType };

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
