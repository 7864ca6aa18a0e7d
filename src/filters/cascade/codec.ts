/** The filter cascade's native-format descriptor (type 9; the payload is an MLBF v2 file). */

import type { FilterCodec } from '../../formats/codec.js';
import { FILTER_TYPES, HASH_SCHEMES } from '../../formats/native.js';
import { FilterCascade } from './filter.js';
import { cascadeParts } from './format.js';

export const cascadeCodec: FilterCodec<FilterCascade<never>> = {
  name: 'cascade',
  typeId: FILTER_TYPES.cascade,
  hashSchemes: [HASH_SCHEMES.mlbf],
  filterClass: FilterCascade,
  parts: cascadeParts,
  decode: (bytes) => FilterCascade.fromBytes(bytes) as FilterCascade<never>,
  // The MLBF payload describes itself layer by layer; it is small, so it is read whole.
  sink: null,
  describe: (f) => ({
    type: 'cascade',
    funnel: f.funnel,
    hash: f.hash,
    salt: Array.from(f.salt, (b) => b.toString(16).padStart(2, '0')).join(''),
    inverted: f.inverted,
    layers: f.layers.map((l) => ({ bits: l.bits, hashes: l.hashes })),
    bits: f.bitSize,
    includeCount: f.includeCount ?? null,
    excludeCount: f.excludeCount ?? null,
    bitsPerIncludedKey: f.includeCount ? f.bitSize / f.includeCount : null,
    estimatedCount: f.estimatedCount(),
  }),
};
