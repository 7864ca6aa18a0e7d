/** The counting filter's native-format descriptor (type 2, MURMUR128_MITZ_64 positions). */

import { nativeCodec } from '../../formats/codec.js';
import { density, formatInt } from '../../formats/view.js';
import { CountingBloomFilter } from './filter.js';
import { countingFormat } from './format.js';
import { countingModel } from './model.js';

export const countingCodec = nativeCodec(
  'counting',
  CountingBloomFilter,
  countingFormat,
  (f) => ({
    counters: f.counterSize,
    counterBits: 4,
    hashes: f.hashes,
    nonZeroCounters: f.nonZeroCount(),
    saturatedCounters: f.saturatedCount(),
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.byteLength,
  }),
  {
    create: (s) => CountingBloomFilter.create(s),
    model: countingModel,
    openShared: (handle) => CountingBloomFilter.fromShared(handle),
    view: (f) => ({
      title: 'Counting Bloom filter',
      shape: [
        ['4-bit counters (m)', formatInt(f.counterSize)],
        ['hashes (k)', formatInt(f.hashes)],
        ['saturated counters', formatInt(f.saturatedCount())],
        ['key encoding', f.funnel],
      ],
      fill: f.nonZeroCount() / f.counterSize,
      density: density(f.counterSize, 1, (i) => (f.counters.get(i) !== 0 ? 1 : 0)),
    }),
    display: {
      label: 'Counting',
      blurb: 'Classic positions with 4-bit counters, so keys can be removed.',
      color: '#bb6bd9',
      live: {
        unit: 'counter',
        perRow: 32,
        blockRows: 0,
        values: (f) => {
          const c = f as CountingBloomFilter;
          const out = new Uint32Array(c.counterSize);
          for (let i = 0; i < out.length; i++) out[i] = c.counters.get(i);
          return out;
        },
        title: (i, v) => `counter ${i} = ${v}`,
      },
    },
  },
);
