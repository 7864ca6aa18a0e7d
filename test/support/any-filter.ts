/**
 * `fromBytes` and `load` answer `ReadonlyMembershipFilter` (the bytes may hold a build-once
 * type); the tests that decode the growable types they wrote use these typed views.
 */

import type { DecodeOptions, MembershipFilter } from '../../src/index.js';
import { fromBytes } from '../../src/index.js';
import { type LoadOptions, type LoadSource, load } from '../../src/node.js';

export function decodeAny(bytes: Uint8Array, options?: DecodeOptions): MembershipFilter {
  return fromBytes(bytes, options) as MembershipFilter;
}

export async function loadAny(
  source: LoadSource,
  options?: LoadOptions,
): Promise<MembershipFilter> {
  return (await load(source, options)) as MembershipFilter;
}
