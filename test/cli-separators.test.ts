/**
 * The command's separator search (src/cli/separators.ts) against `indexOf`, with WebAssembly
 * (16 bytes per step) and without: separators at every offset within a 16-byte step, at the
 * range's ends, runs of them, more than one call returns, bytes past the range's end that must be
 * ignored, and a buffer grown with its bytes kept.
 */
import { describe, expect, it } from 'vitest';
import type { ByteSource } from '../src/cli/input.js';
import { RecordReader } from '../src/cli/records.js';
import { MAX_FOUND, SEPARATOR_BASE, SeparatorBuffer } from '../src/cli/separators.js';
import { splitRecords } from '../src/index.js';
import { expectSameArray } from './support/bytes.js';
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
      expectSameArray(scanAll(b, s, end, sep), expected(buf, s, end, sep));
    }
  });

  it('ignores separators past the end of the range, at every offset of a 16-byte step', () => {
    const b = new SeparatorBuffer(4096, wasm);
    b.buf.fill(10);
    for (let s = 0; s < 40; s++) {
      for (let end = s; end < s + 40; end++) {
        expectSameArray(scanAll(b, s, end, 10), expected(b.buf, s, end, 10));
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

  it('moves to plain memory, bytes kept, when the WebAssembly memory cannot grow (past 4 GiB)', () => {
    const b = new SeparatorBuffer(1 << 16, wasm);
    const memory = (b as unknown as { memory: { grow(pages: number): number } | null }).memory;
    if (memory !== null) {
      memory.grow = () => {
        throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
      };
    }
    b.buf.fill(0x61);
    b.buf[7] = 10;
    b.buf[65_535] = 10;
    b.grow(1 << 16);
    expect(b.buf.length).toBe(1 << 17);
    expect(b.buf.subarray(0, 7).every((c) => c === 0x61)).toBe(true);
    b.buf.fill(0x62, 1 << 16);
    b.buf[70_000] = 10;
    expect(scanAll(b, 0, 1 << 17, 10)).toEqual([7, 65_535, 70_000]);
  });
});

/** A source handing out `data` in reads of 1 to `piece` bytes (as a pipe or gzip does). */
function pieces(data: Uint8Array, piece: number, rnd: () => number): ByteSource {
  let at = 0;
  return {
    name: 'test input',
    size: data.length,
    position: () => at,
    async read(into: Uint8Array): Promise<number> {
      const n = Math.min(into.length, data.length - at, 1 + Math.floor(rnd() * piece));
      into.set(data.subarray(at, at + n));
      at += n;
      return n;
    },
    async close(): Promise<void> {},
  };
}

/** Every record and key the reader gives, as [record, key] strings (latin1: byte for byte). */
async function readAll(data: Uint8Array, sep: number, piece: number): Promise<string[][]> {
  const reader = new RecordReader(pieces(data, piece, mulberry32(piece)), {
    separator: sep,
    fields: null,
    delimiter: 9,
    funnel: 'bytes',
  });
  const text = (b: Uint8Array, s: number, e: number) =>
    Buffer.from(b.subarray(s, e)).toString('latin1');
  const out: string[][] = [];
  for (let batch = await reader.next(); batch !== null; batch = await reader.next()) {
    expect(batch.firstRecord).toBe(out.length + 1);
    const { keys } = batch;
    for (let i = 0; i < batch.count; i++) {
      const record = text(batch.data, batch.starts[i]!, batch.ends[i]!);
      out.push([record, text(keys.bytes, keys.offsets[i]!, keys.ends![i]!)]);
    }
  }
  return out;
}

/** Fails naming the first record that differs (a diff of thousands of records, or of a 1.5 MB record, would take vitest minutes to print). */
function expectRecords(actual: string[][], expected: string[][], what: string): void {
  const shown = (r: string[] | undefined) =>
    r === undefined
      ? 'nothing'
      : r.map((t) => `${JSON.stringify(t.slice(0, 40))} (${t.length} bytes)`).join(' key ');
  const i = expected.findIndex((r, j) => actual[j]?.[0] !== r[0] || actual[j]?.[1] !== r[1]);
  if (i >= 0)
    expect.fail(`${what}: record ${i + 1} is ${shown(actual[i])}, expected ${shown(expected[i])}`);
  expect(actual.length, `${what}: records`).toBe(expected.length);
}

/** What splitRecords (the core's rules) makes of the same bytes. */
function reference(data: Uint8Array, sep: number): string[][] {
  const r = splitRecords(data, sep);
  const out: string[][] = [];
  for (let i = 0; i < r.ends.length; i++) {
    // The record runs to the separator (a `\r` before it is kept), the key to `ends[i]`.
    let end = data.indexOf(sep, r.offsets[i]!);
    if (end < 0) end = data.length;
    const text = (e: number) => Buffer.from(data.subarray(r.offsets[i]!, e)).toString('latin1');
    out.push([text(end), text(r.ends[i]!)]);
  }
  return out;
}

describe('RecordReader over the separator buffer', () => {
  const rnd = mulberry32(11);
  const bytes = (n: number, f: (i: number) => number) =>
    Uint8Array.from({ length: n }, (_, i) => f(i));
  const cases: [string, Uint8Array, number][] = [
    ['dense lines with CRs', bytes(200_000, () => (rnd() < 0.3 ? 10 : rnd() < 0.15 ? 13 : 97)), 10],
    [
      'NUL records (a CR is part of the key)',
      bytes(100_000, () => (rnd() < 0.2 ? 0 : rnd() < 0.2 ? 13 : 98)),
      0,
    ],
    // One scan call returns at most MAX_FOUND positions: exactly that many, and one more.
    ['exactly MAX_FOUND separators', bytes(3 * MAX_FOUND, (i) => (i % 3 === 2 ? 10 : 120)), 10],
    ['MAX_FOUND + 1 separators', bytes(3 * MAX_FOUND + 3, (i) => (i % 3 === 2 ? 10 : 120)), 10],
    [
      // Longer than the 1 MiB read slice: the buffer grows with its bytes kept.
      'records longer than the read slice, CRLF, an unterminated last record ending in CR',
      Buffer.from(
        `a\r\n${'L'.repeat(1_500_000)}\r\n\n${'M'.repeat(1 << 20)}\nb\r\nlast\r`,
        'latin1',
      ),
      10,
    ],
    ['empty lines only', bytes(5000, () => 10), 10],
    ['no input', new Uint8Array(0), 10],
  ];
  for (const [name, data, sep] of cases) {
    it(`${name}: the records and keys of splitRecords`, async () => {
      const expected = reference(data, sep);
      for (const piece of [1 << 22, 65_000, 777]) {
        expectRecords(await readAll(data, sep, piece), expected, `reads of up to ${piece} bytes`);
      }
    });
  }
});

describe('RecordReader over a record longer than many reads', () => {
  it('searches each byte for the separator once, not once per read (a 16 MiB line in 64 KiB reads)', async () => {
    const line = 16 << 20;
    const data = new Uint8Array(line + 3).fill(0x61);
    data[line] = 10;
    data[line + 2] = 10;
    // Every byte the reader's separator searches look at: a search over the whole buffer at
    // each read (as before) looks at about line^2 / (2 * 64 KiB) bytes, 2 GiB here.
    let searched = 0;
    const lastIndexOf = Buffer.prototype.lastIndexOf;
    Buffer.prototype.lastIndexOf = function (
      this: Buffer,
      ...args: Parameters<Buffer['lastIndexOf']>
    ): number {
      const from = typeof args[1] === 'number' ? args[1] : this.length - 1;
      searched += Math.min(this.length, from + 1);
      return lastIndexOf.apply(this, args);
    };
    let records: string[][];
    try {
      records = await readAll(data, 10, 1 << 16);
    } finally {
      Buffer.prototype.lastIndexOf = lastIndexOf;
    }
    expect(records.map((r) => r[0]!.length)).toEqual([line, 1]);
    expect(searched).toBeLessThan(2 * data.length);
  });
});
