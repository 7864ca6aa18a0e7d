/** The blocked filter's native-format descriptor (type 5, hash scheme xxh64Blocked). */

import { bitFacts, nativeCodec } from '../../formats/codec.js';
import { BlockedBloomFilter } from './filter.js';
import { blockedFormat } from './format.js';

export const blockedCodec = nativeCodec('blocked', BlockedBloomFilter, blockedFormat, (f) => ({
  bits: f.bitSize,
  blocks: f.blocks,
  hashes: f.hashes,
  ...bitFacts(f),
}));
