/** The scalable filter's native-format descriptor (type 3, MURMUR128_MITZ_64 per layer). */

import { nativeCodec } from '../../formats/codec.js';
import { formatInt, formatRate, wordDensity } from '../../formats/view.js';
import { ScalableBloomFilter } from './filter.js';
import { scalableFormat } from './format.js';

export const scalableCodec = nativeCodec(
  'scalable',
  ScalableBloomFilter,
  scalableFormat,
  (f) => ({
    fpp: f.fpp,
    initialCapacity: f.initialCapacity,
    growth: f.growth,
    ratio: f.ratio,
    bits: f.bitSize,
    layers: f.layers(),
    estimatedCount: f.estimatedCount(),
    expectedFpp: f.expectedFpp(),
    bytes: f.byteLength,
  }),
  {
    create: (s) => ScalableBloomFilter.create(s),
    view: (f) => {
      const layers = f.layers();
      const bits = layers.reduce((a, l) => a + l.bits, 0);
      let set = 0;
      for (let i = 0; i < layers.length; i++) set += f.layer(i).bitCount;
      return {
        title: 'Scalable Bloom filter',
        shape: [
          ['layers', formatInt(layers.length)],
          ['bits in all layers', formatInt(bits)],
          ['key encoding', f.funnel],
        ],
        fill: set / bits,
        // Every layer, oldest first, each in proportion to its bits: full layers, then the one
        // filling.
        density: wordDensity(concatWords(layers.map((_, i) => f.layer(i).bits.data))),
        partHeader: ['Layer', 'Capacity', 'Keys', 'Rate at capacity', 'Bits', 'k', 'Fill'],
        parts: layers.map((l, i) => ({
          label: String(i),
          cells: [
            formatInt(l.capacity),
            formatInt(l.count),
            formatRate(l.fpp),
            formatInt(l.bits),
            String(l.hashes),
            `${((100 * f.layer(i).bitCount) / l.bits).toFixed(1)}%`,
          ],
        })),
      };
    },
  },
);

/** The words of several bit arrays, one after the other. */
function concatWords(parts: readonly Uint32Array[]): Uint32Array {
  const out = new Uint32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
