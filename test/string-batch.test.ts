/**
 * `addMany` / `hasMany` over arrays of JavaScript strings, which pack chunks of strings straight
 * into the filters' WebAssembly kernels (hash/pack.ts `packStringsInto`, `BloomKernel.strings`,
 * `BlockedKernel.strings`): the same bits, counts and answers as `add` / `has` key by key, over
 * ASCII runs, non-ASCII text, lone surrogates, keys longer than a kernel chunk, and a key of the
 * wrong kind in the middle (the keys before it are added, the count of bits set stays right).
 */
import { describe, expect, it } from 'vitest';
import { BlockedBloomFilter, BloomFilter, SplitBlockBloomFilter } from '../src/index.js';
import { mixedStrings } from './support/mixed-keys.js';

interface StringFilter {
  add(key: string): boolean;
  has(key: string): boolean;
  addMany(keys: Iterable<string>): number;
  hasMany(keys: Iterable<string>): boolean[];
  equals(other: never): boolean;
  readonly bitCount: number;
}

const TYPES: [string, () => StringFilter][] = [
  ['BloomFilter', () => BloomFilter.create({ capacity: 20_000, fpp: 0.01 })],
  ['BlockedBloomFilter', () => BlockedBloomFilter.create({ capacity: 20_000, fpp: 0.01 })],
  ['SplitBlockBloomFilter', () => SplitBlockBloomFilter.create({ capacity: 20_000, fpp: 0.01 })],
];

/** ASCII runs (joined when packed), mixed text, and keys longer than a kernel's key area. */
function keys(): string[] {
  const ascii = Array.from({ length: 3000 }, (_, i) => `https://example.com/a/${i}`);
  const mixed = mixedStrings(3000, 5, 400);
  const all = [...ascii, ...mixed];
  all.splice(1000, 0, 'x'.repeat(40_000)); // more than a chunk's room at 3 bytes per unit
  all.splice(4000, 0, `é${'\ud800'.repeat(50_000)}`);
  return all;
}

describe('addMany / hasMany over strings equal add / has key by key', () => {
  const all = keys();
  const absent = Array.from({ length: 3000 }, (_, i) => `https://example.com/b/${i}`);
  for (const [name, make] of TYPES) {
    it(`${name}: bits, counts and answers`, () => {
      const one = make();
      const many = make();
      const half = all.slice(0, 4500);
      let changed = 0;
      for (const k of half) if (one.add(k)) changed++;
      expect(many.addMany(half)).toBe(changed);
      expect(many.equals(one as never)).toBe(true);
      expect(many.bitCount).toBe(one.bitCount);
      const probe = [...all, ...absent];
      const reference = probe.map((k) => one.has(k));
      expect(many.hasMany(probe)).toEqual(reference);
      expect(reference.slice(0, 4500).every(Boolean)).toBe(true);
      expect(reference.filter(Boolean).length).toBeLessThan(4500 + 200);
    });

    it(`${name}: text of 3 bytes a unit between ASCII runs (runs transcoded in place)`, () => {
      // CJK and BMP symbols are 3 UTF-8 bytes per UTF-16 unit: the most a run's bytes can
      // outgrow its units, where the kernels' in-place runs must stop early and shrink.
      const cjk = '日本語東京ニュース서울\uffff\u0800';
      const text = (i: number, n: number) =>
        Array.from({ length: n }, (_, j) => cjk[(i * 7 + j * 3) % cjk.length]).join('');
      const batch: string[] = [];
      for (let r = 0; r < 4; r++) {
        for (let i = 0; i < 1500; i++) batch.push(`${r}:${i}:${text(i, 1 + ((i * 37) % 300))}`);
        for (let i = 0; i < 1500; i++)
          batch.push(`https://example.com/${r}/${i}/${'p'.repeat(i % 200)}`);
        batch.push(`${r}😀\ud800é`, `${text(r, 2000)}\udc00`);
      }
      const one = make();
      const many = make();
      let changed = 0;
      for (const k of batch) if (one.add(k)) changed++;
      expect(many.addMany(batch)).toBe(changed);
      expect(many.equals(one as never)).toBe(true);
      expect(many.bitCount).toBe(one.bitCount);
      const other = batch.map((k) => `${k}~`);
      expect(many.hasMany([...batch, ...other])).toEqual(
        [...batch, ...other].map((k) => one.has(k)),
      );
    });

    it(`${name}: a key of the wrong kind throws after the keys before it were added`, () => {
      const bad = all.slice(0, 3000) as unknown[];
      bad[2500] = 7;
      const f = make();
      expect(() => f.addMany(bad as string[])).toThrow(TypeError);
      const g = make();
      for (const k of all.slice(0, 2500)) g.add(k);
      expect(f.equals(g as never)).toBe(true);
      expect(f.bitCount).toBe(g.bitCount);
      expect(() => f.hasMany(bad as string[])).toThrow(TypeError);
    });
  }
});
