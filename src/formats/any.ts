/**
 * `fromBytes(bytes)`: reads any filter in bloomkit's native format and returns the type it holds.
 * Each filter type registers its decoder here by type id (see FILTER_TYPES in native.ts).
 */

import { FormatError } from '../errors.js';
import type { MembershipFilter } from '../filters/filter.js';
import { decodeBloom } from './bloom-codec.js';
import { decodeHeader, FILTER_TYPES } from './native.js';

const DECODERS: ReadonlyMap<number, (bytes: Uint8Array) => MembershipFilter> = new Map<
  number,
  (bytes: Uint8Array) => MembershipFilter
>([[FILTER_TYPES.bloom, decodeBloom]]);

/** Decodes a native-format filter of any type. Throws `FormatError` for bad bytes. */
export function fromBytes(bytes: Uint8Array): MembershipFilter {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array');
  const header = decodeHeader(bytes);
  const decode = DECODERS.get(header.type);
  if (decode === undefined) {
    throw new FormatError(
      `filter type id ${header.type} is known but this build has no decoder for it`,
    );
  }
  return decode(bytes);
}
