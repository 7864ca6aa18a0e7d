/** The filter cascade's native-format descriptor (type 9; the payload is an MLBF v2 file). */

import { nativeCodec } from '../../formats/codec.js';
import { FilterCascade } from './filter.js';
import { cascadeFormat } from './format.js';

export const cascadeCodec = nativeCodec('cascade', FilterCascade, cascadeFormat, (f) => ({
  hash: f.hash,
  salt: Array.from(f.salt, (b) => b.toString(16).padStart(2, '0')).join(''),
  inverted: f.inverted,
  layers: f.layers.map((l) => ({ bits: l.bits, hashes: l.hashes })),
  bits: f.bitSize,
  includeCount: f.includeCount ?? null,
  excludeCount: f.excludeCount ?? null,
  bitsPerIncludedKey: f.includeCount ? f.bitSize / f.includeCount : null,
  estimatedCount: f.estimatedCount(),
}));
