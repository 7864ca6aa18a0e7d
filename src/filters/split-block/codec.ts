/** The Parquet split-block filter's native-format descriptor (type 6, xxh64SplitBlock). */

import { bitFacts, nativeCodec } from '../../formats/codec.js';
import { SplitBlockBloomFilter } from './filter.js';
import { splitBlockFormat } from './format.js';

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
);
