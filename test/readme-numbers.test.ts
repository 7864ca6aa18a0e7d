/**
 * The numbers README.md's "Which filter should I use?" table states are the ones the library's
 * one solver gives (the same `bloomkit calc -n 1M -p 1%` prints): bits per key at 1% for
 * 1,000,000 keys, for every row that names a type with a size model. The rows' other figures are
 * checked where they are measured: the scalable filter's 2.06 bytes per key in scalable.test.ts,
 * the cuckoo filter's 10.64 and 21.28 by the example in docs/guide/filters.md.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { solveSize, typesWith } from '../src/index.js';

const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Which filter should I use?'));
const table = section.slice(0, section.indexOf('\n\n', section.indexOf('|---')));

/** Each row's type name (the `(`name`)` of its "use" cell) and its bits-per-key cell. */
const rows = [...table.matchAll(/^\|[^|]*\|[^|]*\(`([a-z-]+)`\)[^|]*\|\s*([^|]+?)\s*\|$/gm)].map(
  (m) => ({ type: m[1]!, stated: m[2]! }),
);

describe("README's decision table", () => {
  it('names a type of the codec table on every row it sizes', () => {
    expect(rows.length).toBeGreaterThanOrEqual(8);
  });

  for (const type of typesWith('model')) {
    it(`states the bits per key the solver gives for ${type} at 1%`, () => {
      const row = rows.find((r) => r.type === type);
      expect(row, `no row for ${type}`).toBeDefined();
      const r = solveSize(type, { n: 1_000_000, p: 0.01 });
      const perKey = Number(r.bitsPerKey.toFixed(2));
      const numbers = [...row!.stated.matchAll(/[\d.]+/g)].map((m) => Number(m[0]));
      if (row!.stated.includes(' to ')) {
        // A range (the cuckoo filter's power-of-two tables): the solver's figure lies in it.
        expect(perKey).toBeGreaterThanOrEqual(numbers[0]!);
        expect(perKey).toBeLessThanOrEqual(numbers[1]!);
      } else {
        expect(numbers[0]).toBe(perKey);
      }
    });
  }
});
