import { describe, expect, it } from 'vitest';
import { cellIndex, decimal } from '../src/redis/decimal.js';

// The BITFIELD offsets' text (src/redis/decimal.ts) must be exactly what String() gives: a wrong
// digit would read or set another bit. Every value below 20,000, then a stride through the
// tables' range, the table edges and the fall-back above 10^7.
describe('decimal offsets', () => {
  it('match String(n), and "#" + String(n) for cell indexes', () => {
    const values: number[] = [];
    for (let n = 0; n < 20_000; n++) values.push(n);
    for (let n = 20_000; n < 12_000_000; n += 997) values.push(n);
    values.push(999, 1000, 1001, 9_999, 10_000, 999_999, 1_000_000, 9_999_999, 10_000_000);
    values.push(2 ** 23 + 63, 2 ** 31, 2 ** 32 + 63, 2 ** 36);
    for (const n of values) {
      if (decimal(n) !== String(n)) expect(decimal(n)).toBe(String(n));
      if (cellIndex(n) !== `#${n}`) expect(cellIndex(n)).toBe(`#${n}`);
    }
    // Asked twice, a table entry gives the same text.
    expect(decimal(4_792_639)).toBe('4792639');
    expect(cellIndex(7)).toBe('#7');
    expect(cellIndex(7)).toBe('#7');
  });
});
