/**
 * Whether a Deduper state read from a file is the filter that a capacity, rate and type would
 * make now: the same class and the same shape (bits and hashes, or blocks and probes), computed
 * from the sizing functions without allocating a filter. `bloomkit dedup` refuses `-n`/`-p`
 * that do not match an existing `--state` file instead of ignoring them.
 */

import { BlockedBloomFilter } from '../filters/blocked/filter.js';
import { blockedSize } from '../filters/blocked/sizing.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { MembershipFilter } from '../filters/filter.js';
import { ScalableBloomFilter } from '../filters/scalable/filter.js';
import { SplitBlockBloomFilter } from '../filters/split-block/filter.js';
import { splitBlockSize } from '../filters/split-block/sizing.js';
import { bloomSize } from '../math.js';
import type { DeduperType } from './deduper.js';

/** What a state was asked to be: a capacity (a fixed filter of `type`) or none (scalable). */
export interface DeduperShapeRequest {
  readonly capacity: number | undefined;
  readonly fpp: number;
  readonly type: DeduperType;
}

/** A few words on a state's filter: `a blocked filter of 1 block of 512 bits, k = 19`. */
export function describeState(state: MembershipFilter): string {
  if (state instanceof BloomFilter) {
    return `a classic filter of ${state.bitSize} bits, k = ${state.hashes}`;
  }
  if (state instanceof BlockedBloomFilter) {
    const blocks = `${state.blocks} block${state.blocks === 1 ? '' : 's'}`;
    return `a blocked filter of ${blocks} of 512 bits, k = ${state.hashes}`;
  }
  if (state instanceof SplitBlockBloomFilter) {
    return `a split-block filter of ${state.blocks} block${state.blocks === 1 ? '' : 's'}`;
  }
  if (state instanceof ScalableBloomFilter) {
    return `a scalable filter (grows as needed) at fpp ${state.fpp}`;
  }
  return `a ${state.constructor.name}`;
}

/**
 * Null when `state` is what `request` would make; else what the request would make instead
 * (for the message). A scalable state matches a request without capacity at the same fpp.
 */
export function stateMismatch(
  state: MembershipFilter,
  request: DeduperShapeRequest,
): string | null {
  const { capacity, fpp, type } = request;
  if (capacity === undefined) {
    if (state instanceof ScalableBloomFilter && state.fpp === fpp) return null;
    return `a scalable filter (grows as needed) at fpp ${fpp}`;
  }
  if (type === 'classic') {
    const size = bloomSize(capacity, fpp);
    if (
      state instanceof BloomFilter &&
      state.bitSize === size.bits &&
      state.hashes === size.hashes
    ) {
      return null;
    }
    return `a classic filter of ${size.bits} bits, k = ${size.hashes}`;
  }
  if (type === 'blocked') {
    const size = blockedSize(capacity, fpp);
    if (
      state instanceof BlockedBloomFilter &&
      state.blocks === size.blocks &&
      state.hashes === size.hashes
    ) {
      return null;
    }
    const blocks = `${size.blocks} block${size.blocks === 1 ? '' : 's'}`;
    return `a blocked filter of ${blocks} of 512 bits, k = ${size.hashes}`;
  }
  const size = splitBlockSize(capacity, fpp);
  if (state instanceof SplitBlockBloomFilter && state.blocks === size.blocks) return null;
  return `a split-block filter of ${size.blocks} block${size.blocks === 1 ? '' : 's'}`;
}
