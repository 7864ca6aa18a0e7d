/**
 * The command's separator search (src/cli/separators.ts) against `indexOf`, with WebAssembly
 * (16 bytes per step) and without: separators at every offset within a 16-byte step, at the
 * range's ends, runs of them, more than one call returns, bytes past the range's end that must be
 * ignored, and a buffer grown with its bytes kept.
 */
import { describe, expect, it } from 'vitest';
import { MAX_FOUND, SEPARATOR_BASE, SeparatorBuffer } from '../src/cli/separators.js';
import { mulberry32 } from './support/random.js';

/** Every offset of `sep` in `buf[s, end)` found through `scan`, calls repeated as documented. */
function scanAll(b: SeparatorBuffer, s: number, end: number, sep: number): number[] {
  const out: number[] = [];
  for (;;) {
    const n = b.scan(s, end, sep);
    for (let j = 0; j < n; j++) out.push(b.found[j]! - SEPARATOR_BASE);
    if (n < MAX_FOUND) return out;
    s = out.at(-1)! + 1;
  }
}

function expected(buf: Uint8Array, s: number, end: number, sep: number): number[] {
  const out: number[] = [];
  for (let i = s; i < end; i++) if (buf[i] === sep) out.push(i);
  return out;
}

describe.each([true, false])('SeparatorBuffer (WebAssembly: %s)', (wasm) => {
  it('finds what a byte-by-byte search finds, over random ranges and densities', () => {
    const rnd = mulberry32(7);
    const b = new SeparatorBuffer(1 << 14, wasm);
    for (let round = 0; round < 120; round++) {
      const sep = round % 3 === 0 ? 0 : 10;
      const density = [0.001, 0.05, 0.5, 1][round % 4]!;
      const buf = b.buf;
      for (let i = 0; i < buf.length; i++) buf[i] = rnd() < density ? sep : 97 + (i % 7);
      const s = Math.floor(rnd() * 300);
      const end = Math.min(buf.length, s + Math.floor(rnd() * 16_000));
      expect(scanAll(b, s, end, sep)).toEqual(expected(buf, s, end, sep));
    }
  });

  it('ignores separators past the end of the range, at every offset of a 16-byte step', () => {
    const b = new SeparatorBuffer(4096, wasm);
    b.buf.fill(10);
    for (let s = 0; s < 40; s++) {
      for (let end = s; end < s + 40; end++) {
        expect(scanAll(b, s, end, 10)).toEqual(expected(b.buf, s, end, 10));
      }
    }
  });

  it('keeps the bytes when the buffer grows', () => {
    const b = new SeparatorBuffer(1 << 16, wasm);
    b.buf.fill(0x61);
    b.buf[65_535] = 10;
    b.buf[100] = 10;
    b.grow(1 << 16);
    expect(b.buf.length).toBe(1 << 17);
    expect(b.buf[100]).toBe(10);
    b.buf.fill(0x62, 1 << 16);
    b.buf[(1 << 17) - 1] = 10;
    expect(scanAll(b, 0, 1 << 17, 10)).toEqual([100, 65_535, (1 << 17) - 1]);
  });
});
