/** The Parquet split-block filter's native-format descriptor (type 6, xxh64SplitBlock). */

import { mustBe, show } from '../../errors.js';
import { bitFacts, nativeCodec, type Sizing } from '../../formats/codec.js';
import { bitValues, formatInt, wordDensity } from '../../formats/view.js';
import type { Funnel } from '../../hash/keys.js';
import { SplitBlockBloomFilter } from './filter.js';
import { splitBlockFormat } from './format.js';
import { splitBlockModel } from './model.js';

/**
 * The Parquet physical type whose PLAIN encoding hashes the bytes a funnel hashes, and whose
 * funnel the filter then reports (BYTE_ARRAY: 'string', FIXED_LEN_BYTE_ARRAY: 'bytes').
 */
const PARQUET_TYPE: Partial<
  Record<Funnel, 'BYTE_ARRAY' | 'FIXED_LEN_BYTE_ARRAY' | 'INT32' | 'INT64'>
> = {
  string: 'BYTE_ARRAY',
  bytes: 'FIXED_LEN_BYTE_ARRAY',
  int: 'INT32',
  long: 'INT64',
};

/** A split-block filter for (capacity, fpp), its Parquet type chosen by the funnel. */
function create(s: Sizing): SplitBlockBloomFilter {
  const type = PARQUET_TYPE[s.funnel];
  if (type === undefined) {
    throw mustBe('funnel', 'string, bytes, int or long for a split-block filter', s.funnel);
  }
  return SplitBlockBloomFilter.create({ capacity: s.capacity, fpp: s.fpp, type, shared: s.shared });
}

/**
 * A Deduper's split-block state: byte keys only (funnel 'string', a BYTE_ARRAY column, or
 * 'bytes', FIXED_LEN_BYTE_ARRAY), so that a resumed state has the funnel it was made with.
 */
function deduperState(s: Sizing): SplitBlockBloomFilter {
  if (s.funnel !== 'string' && s.funnel !== 'bytes') {
    throw new RangeError(
      `a split-block state takes byte keys (funnel 'string' or 'bytes'), got ${show(s.funnel)}`,
    );
  }
  return create(s);
}

export const splitBlockCodec = nativeCodec(
  'split-block',
  SplitBlockBloomFilter,
  splitBlockFormat,
  (f) => ({
    parquetType: f.type,
    bits: f.bitSize,
    blocks: f.blocks,
    hashes: 8,
    ...bitFacts(f),
  }),
  {
    create,
    deduper: deduperState,
    model: splitBlockModel,
    openShared: (handle) => SplitBlockBloomFilter.fromShared(handle),
    view: (f) => ({
      title: 'Split-block Bloom filter (Parquet)',
      shape: [
        ['blocks of 256 bits', formatInt(f.blocks)],
        ['probes per key', '8'],
        ['key encoding', f.type],
      ],
      fill: f.bitCount / f.bitSize,
      density: wordDensity(f.bits.data),
    }),
    display: {
      label: 'Split-block',
      blurb: "Parquet's filter: 8 bits, one per word of a 256-bit block.",
      color: '#27ae60',
      live: {
        unit: 'bit',
        perRow: 32,
        blockRows: 8,
        values: (f) => bitValues((f as SplitBlockBloomFilter).bits),
        title: (i) => `bit ${i} (block ${Math.floor(i / 256)}, word ${Math.floor(i / 32) % 8})`,
      },
    },
  },
);
