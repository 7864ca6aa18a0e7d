/**
 * `fromBytes(bytes)`: reads any filter in bloomkit's native format and returns the type it holds.
 * Each filter type registers its decoder here by type id (see FILTER_TYPES in native.ts).
 */

import { checkBytes, FormatError } from '../errors.js';
import type { MembershipFilter } from '../filters/filter.js';
import { decodeSharded } from '../redis/sharded-codec.js'; // browser-safe: RedisBloomFilter's twin
import { decodeBlocked } from './blocked-codec.js';
import { decodeBloom } from './bloom-codec.js';
import { decodeCounting } from './counting-codec.js';
import { decodeCuckoo } from './cuckoo-codec.js';
import { type DecodeOptions, decodeHeader, FILTER_TYPES } from './native.js';
import { decodeScalable } from './scalable-codec.js';
import { decodeSplitBlock } from './split-block-codec.js';

/** A chunked filter file is opened from disk, never decoded whole (see bloomkit/node). */
function rejectChunked(): never {
  throw new FormatError(
    "these bytes hold a chunked filter file (type id 7): open it with ChunkedBloomFilter.open(path) from 'bloomkit/node'",
  );
}

const DECODERS: ReadonlyMap<
  number,
  (bytes: Uint8Array, options?: DecodeOptions) => MembershipFilter
> = new Map<number, (bytes: Uint8Array, options?: DecodeOptions) => MembershipFilter>([
  [FILTER_TYPES.bloom, decodeBloom],
  [FILTER_TYPES.counting, decodeCounting],
  [FILTER_TYPES.scalable, decodeScalable],
  [FILTER_TYPES.cuckoo, decodeCuckoo],
  [FILTER_TYPES.blocked, decodeBlocked],
  [FILTER_TYPES.splitBlock, decodeSplitBlock],
  [FILTER_TYPES.chunked, rejectChunked],
  [FILTER_TYPES.shardedBloom, decodeSharded],
]);

/**
 * Decodes a native-format filter of any type. Throws `FormatError` for bad bytes.
 * `{ copy: false }` lets types that support it view the payload inside `bytes` (see DecodeOptions).
 */
export function fromBytes(bytes: Uint8Array, options?: DecodeOptions): MembershipFilter {
  checkBytes('bytes', bytes);
  const header = decodeHeader(bytes);
  const decode = DECODERS.get(header.type);
  if (decode === undefined) {
    throw new FormatError(
      `filter type id ${header.type} is known but this build has no decoder for it`,
    );
  }
  return decode(bytes, options);
}
