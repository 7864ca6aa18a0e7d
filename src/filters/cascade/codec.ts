/** The filter cascade's native-format descriptor (type 9; the payload is an MLBF v2 file). */

import { nativeCodec } from '../../formats/codec.js';
import { bitsSetIn, formatInt, wordDensity } from '../../formats/view.js';
import { FilterCascade } from './filter.js';
import { cascadeFormat } from './format.js';

export const cascadeCodec = nativeCodec(
  'cascade',
  FilterCascade,
  cascadeFormat,
  (f) => ({
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
  {
    view: (f) => {
      const layers = f.layers;
      const top = layers[0];
      return {
        title: 'Filter cascade',
        shape: [
          ['layers', formatInt(layers.length)],
          ['bits in all layers', formatInt(layers.reduce((a, l) => a + l.bits, 0))],
          ['hash', String(f.hash)],
          ['inverted', f.inverted ? 'yes' : 'no'],
          ['false positives', 'none among the keys it was built over'],
        ],
        fill: top === undefined ? Number.NaN : bitsSetIn(top.data) / top.bits,
        // Exact for the universe it was built over: every key there answers correctly.
        fpr: Number.NaN,
        density: top === undefined ? new Float32Array(0) : wordDensity(top.data),
        partHeader: ['Layer', 'Bits', 'Hashes', 'Fill'],
        parts: layers.map((l, i) => ({
          label: String(i + 1),
          cells: [
            formatInt(l.bits),
            String(l.hashes),
            `${((100 * bitsSetIn(l.data)) / l.bits).toFixed(1)}%`,
          ],
        })),
      };
    },
  },
);
