/**
 * The filter cascade in bloomkit's native format (filter type id 9, hash scheme 5 `mlbf`).
 *
 * Parameters (24 bytes, little-endian):
 *
 * | offset | size | field                                                                |
 * |--------|------|----------------------------------------------------------------------|
 * | 0      | 8    | included keys the cascade was built from, u64 (0 when not known)     |
 * | 8      | 8    | excluded keys the cascade was built from, u64 (0 when not known)     |
 * | 16     | 1    | counts known, u8: 1 when the two counts above are meaningful, else 0 |
 * | 17     | 7    | reserved, 0                                                          |
 *
 * Payload: the cascade as an MLBF version 2 file, byte for byte what `toMlbf()` writes (see
 * mlbf.ts), so `bloomkit` tools and Mozilla's readers agree on every layer. The reader applies
 * every MLBF rule to it (a `FormatError` naming the field), and the payload must hold a cascade
 * (an empty MLBF, "no cascade", is not a filter).
 */

import { FormatError } from '../../errors.js';
import {
  decodeContainer,
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  setU64,
} from '../../formats/native.js';
import { checkTypeHeader, nativeFormat } from '../../formats/native-type.js';
import type { CascadeInit, FilterCascade } from './filter.js';
import { decodeMlbf, encodeMlbf } from './mlbf.js';

const CASCADE = {
  typeId: FILTER_TYPES.cascade,
  what: 'filter cascade',
  paramsBytes: 24,
  schemes: { mlbf: 5 satisfies typeof HASH_SCHEMES.mlbf },
};

/** What a native cascade container holds, checked (the caller makes the class from it). */
function decodeCascadeInit(bytes: Uint8Array): CascadeInit {
  const { header, params, payload } = decodeContainer(bytes, CASCADE.typeId);
  const funnel = checkTypeHeader(header, CASCADE);
  const known = params.getUint8(16);
  if (known > 1)
    throw new FormatError(`filter cascade counts-known flag is ${known}, must be 0 or 1`);
  for (let i = 17; i < CASCADE.paramsBytes; i++) {
    if (params.getUint8(i) !== 0) {
      throw new FormatError(`reserved filter cascade parameter byte ${i} is not zero`);
    }
  }
  const includeCount = getU64(params, 0, 'included key count');
  const excludeCount = getU64(params, 8, 'excluded key count');
  if (known === 0 && (includeCount !== 0 || excludeCount !== 0)) {
    throw new FormatError('filter cascade key counts must be 0 when the counts-known flag is 0');
  }
  const mlbf = decodeMlbf(payload.slice(), 'filter cascade payload (MLBF)');
  if (mlbf === null) throw new FormatError('filter cascade payload (MLBF) is empty: no layer');
  return {
    ...mlbf,
    funnel,
    includeCount: known === 1 ? includeCount : undefined,
    excludeCount: known === 1 ? excludeCount : undefined,
  };
}

/**
 * The filter cascade in the native format: the payload is its MLBF v2 file, which describes
 * itself layer by layer; it is small, so it is read whole (no streaming sink).
 */
export const cascadeFormat = nativeFormat<FilterCascade<never>, typeof FilterCascade>({
  native: CASCADE,
  writeParams(v, cascade) {
    const { includeCount, excludeCount } = cascade;
    if (includeCount !== undefined && excludeCount !== undefined) {
      setU64(v, 0, includeCount);
      setU64(v, 8, excludeCount);
      v.setUint8(16, 1);
    }
  },
  payload: (cascade) => [encodeMlbf(cascade)],
  decode: (bytes, _options, Filter) => new Filter(decodeCascadeInit(bytes)),
  sink: null,
});
