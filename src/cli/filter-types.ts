/**
 * The filter types `create` and `dedup` can make from a capacity and a false positive rate, one
 * line each. `--type` takes these names (`bloom` is another name for `classic`).
 */

import type { MembershipFilter } from '../filters/filter.js';
import {
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  DcsoBloomFilter,
  type Funnel,
  ScalableBloomFilter,
  SplitBlockBloomFilter,
} from '../index.js';
import { CliError } from './command.js';

export interface Sizing {
  readonly capacity: number;
  readonly fpp: number;
  readonly funnel: Funnel;
}

const PARQUET_TYPE: Partial<Record<Funnel, 'BYTE_ARRAY' | 'INT32' | 'INT64'>> = {
  string: 'BYTE_ARRAY',
  bytes: 'BYTE_ARRAY',
  int: 'INT32',
  long: 'INT64',
};

export const FILTER_MAKERS: Readonly<Record<string, (s: Sizing) => MembershipFilter>> = {
  classic: (s) => BloomFilter.create(s) as MembershipFilter,
  blocked: (s) => BlockedBloomFilter.create(s) as MembershipFilter,
  'split-block': (s) => {
    const type = PARQUET_TYPE[s.funnel];
    if (type === undefined) {
      throw new CliError(
        `--type split-block takes --funnel string, bytes, int or long, got ${s.funnel}`,
      );
    }
    return SplitBlockBloomFilter.create({
      capacity: s.capacity,
      fpp: s.fpp,
      type,
    }) as MembershipFilter;
  },
  counting: (s) => CountingBloomFilter.create(s) as MembershipFilter,
  scalable: (s) => ScalableBloomFilter.create(s) as MembershipFilter,
  cuckoo: (s) => CuckooFilter.create(s) as MembershipFilter,
  dcso: (s) => DcsoBloomFilter.create(s) as MembershipFilter,
};

export const TYPE_NAMES = Object.keys(FILTER_MAKERS);

/** A new empty filter of type `name` (`classic` when undefined). */
export function makeFilter(name: string | undefined, sizing: Sizing): MembershipFilter {
  const type = name === 'bloom' || name === undefined ? 'classic' : name;
  const make = FILTER_MAKERS[type];
  if (make === undefined) {
    throw new CliError(
      `--type must be one of ${TYPE_NAMES.join(', ')}, got ${JSON.stringify(name)}`,
    );
  }
  try {
    return make(sizing);
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError)
      throw new CliError(error.message);
    throw error;
  }
}
