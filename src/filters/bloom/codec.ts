/** The classic filter's native-format descriptor (type 1; Guava strategy ordinals as hash ids). */

import { bitFacts, nativeCodec } from '../../formats/codec.js';
import { bitValues, formatInt, wordDensity } from '../../formats/view.js';
import { BloomFilter } from './filter.js';
import { bloomFormat } from './format.js';
import { classicModel } from './model.js';

export const bloomCodec = nativeCodec(
  'classic',
  BloomFilter,
  bloomFormat,
  (f) => ({ strategy: f.strategy, bits: f.bitSize, hashes: f.hashes, ...bitFacts(f) }),
  {
    aliases: ['bloom'],
    create: (s) => BloomFilter.create(s),
    deduper: (s) => BloomFilter.create(s),
    model: classicModel,
    openShared: (handle) => BloomFilter.fromShared(handle),
    view: (f) => ({
      title: 'Classic Bloom filter',
      shape: [
        ['bits (m)', formatInt(f.bitSize)],
        ['hashes (k)', formatInt(f.hashes)],
        ['strategy', f.strategy],
        ['key encoding', f.funnel],
      ],
      fill: f.bitCount / f.bitSize,
      density: wordDensity(f.bits.data),
    }),
    display: {
      label: 'Classic',
      blurb: 'Guava-compatible Bloom filter: k bits anywhere in m.',
      color: '#4f7cff',
      live: {
        unit: 'bit',
        perRow: 32,
        blockRows: 0,
        values: (f) => bitValues((f as BloomFilter).bits),
        title: (i) => `bit ${i}`,
      },
    },
  },
);
