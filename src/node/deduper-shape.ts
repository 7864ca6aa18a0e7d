/**
 * Whether a Deduper state read from a file is the filter that a capacity, rate and type would
 * make now: the same type and the same shape (bits and hashes, or blocks and probes), computed
 * from the type's size model without allocating a filter. `bloomkit dedup` refuses `-n`/`-p`
 * that do not match an existing `--state` file instead of ignoring them.
 */

import { BlockedBloomFilter } from '../filters/blocked/filter.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { MembershipFilter } from '../filters/filter.js';
import { ScalableBloomFilter } from '../filters/scalable/filter.js';
import { SplitBlockBloomFilter } from '../filters/split-block/filter.js';
import { codecOf, describeFilter, typeNamed } from '../formats/registry.js';
import { solveSize } from '../formats/solve.js';
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
 * (for the message). A scalable state matches a request without capacity at the same fpp. With
 * a capacity the shape comes from the type's size model in the codec table (`solveSize`, the
 * sizing `create` uses) and is compared with the state's facts (`describeFilter`): same type,
 * and every number of the shape (bits and hashes, or blocks and probes) equal.
 */
export function stateMismatch(
  state: MembershipFilter,
  request: DeduperShapeRequest,
): string | null {
  const { capacity, fpp } = request;
  if (capacity === undefined) {
    if (state instanceof ScalableBloomFilter && state.fpp === fpp) return null;
    return `a scalable filter (grows as needed) at fpp ${fpp}`;
  }
  const row = typeNamed(request.type, 'deduper');
  const type = row.name;
  const { shape } = solveSize(type, { n: capacity, p: fpp });
  const numbers = Object.entries(shape).filter(([name]) => name !== 'kind');
  const facts = codecOf(state) === undefined ? null : describeFilter(state);
  if (facts?.type === type && numbers.every(([name, value]) => facts[name] === value)) return null;
  // Said as the calculator says the shape (the model's labels: `8 blocks of 512 bits`).
  const said = row.model?.describe(shape) ?? numbers.map(([name, value]) => [name, `${value}`]);
  return `a ${type} filter of ${said.map(([label, value]) => `${value} ${label}`).join(', ')}`;
}
