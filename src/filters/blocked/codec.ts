/** The blocked filter's native-format descriptor (type 5, hash scheme xxh64Blocked). */

import { bitFacts, nativeCodec } from '../../formats/codec.js';
import { bitValues, formatInt, wordDensity } from '../../formats/view.js';
import { BlockedBloomFilter } from './filter.js';
import { blockedFormat } from './format.js';
import { blockedModel } from './model.js';

export const blockedCodec = nativeCodec(
  'blocked',
  BlockedBloomFilter,
  blockedFormat,
  (f) => ({ bits: f.bitSize, blocks: f.blocks, hashes: f.hashes, ...bitFacts(f) }),
  {
    create: (s) => BlockedBloomFilter.create(s),
    deduper: (s) => BlockedBloomFilter.create(s),
    model: blockedModel,
    openShared: (handle) => BlockedBloomFilter.fromShared(handle),
    view: (f) => ({
      title: 'Blocked Bloom filter',
      shape: [
        ['blocks of 512 bits', formatInt(f.blocks)],
        ['probes per key', formatInt(f.hashes)],
        ['key encoding', f.funnel],
      ],
      fill: f.bitCount / f.bitSize,
      density: wordDensity(f.bits.data),
    }),
    display: {
      label: 'Blocked',
      blurb: 'All k bits in one 512-bit block: one cache miss per lookup.',
      color: '#f2994a',
      live: {
        unit: 'bit',
        perRow: 32,
        blockRows: 16,
        values: (f) => bitValues((f as BlockedBloomFilter).bits),
        title: (i) => `bit ${i} (block ${Math.floor(i / 512)})`,
      },
    },
  },
);
