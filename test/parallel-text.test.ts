/**
 * Text chunks for worker threads (src/node/parallel-text.ts): a source read in chunks, each cut
 * after its last separator (the straddling record carried over, a record longer than a chunk
 * growing it), then split chunk by chunk, gives exactly the records `splitRecords` finds in the
 * whole source: CRLF (also with the `\r` and the `\n` on two sides of a cut), empty lines, NUL
 * separators, an unterminated last record (with a `\r` too), invalid UTF-8, for chunk sizes from
 * smaller than a record to larger than the source, with the WebAssembly search and without.
 * Buffers are reused once released. Keys in memory packed a chunk at a time into reused shared
 * buffers (src/node/parallel-keys.ts) are the bytes `packKeys` gives, keys longer than the
 * buffer and non-ASCII too.
 */
import { describe, expect, it } from 'vitest';
import { packKeys, splitRecords } from '../src/filters/packed.js';
import { KEY_CHUNK, KeyChunks } from '../src/node/parallel-keys.js';
import { type TextChunk, TextChunks, TextSplitter } from '../src/node/parallel-text.js';
import { mulberry32 } from './support/random.js';

/** A source of `text` that hands out at most `step` bytes per read (as a pipe does). */
function reader(text: Uint8Array, step: number) {
  let at = 0;
  return async (into: Uint8Array): Promise<number> => {
    const n = Math.min(into.length, step, text.length - at);
    into.set(text.subarray(at, at + n));
    at += n;
    return n;
  };
}

/** Each record of a split as a hex string (its key bytes). */
function keysOf(batch: { bytes: Uint8Array; offsets: Uint32Array; ends: Uint32Array }): string[] {
  const out: string[] = [];
  for (let i = 0; i < batch.ends.length; i++) {
    out.push(Buffer.from(batch.bytes.subarray(batch.offsets[i]!, batch.ends[i]!)).toString('hex'));
  }
  return out;
}

async function viaChunks(
  text: Uint8Array,
  separator: number,
  size: number,
  step: number,
  wasm: boolean,
): Promise<{ keys: string[]; buffers: Set<SharedArrayBuffer>; chunks: number }> {
  const chunks = new TextChunks(reader(text, step), separator, size);
  const splitter = new TextSplitter(wasm);
  const keys: string[] = [];
  const buffers = new Set<SharedArrayBuffer>();
  let count = 0;
  for (;;) {
    const chunk: TextChunk | null = await chunks.next();
    if (chunk === null) break;
    count++;
    // A chunk ends at a separator, or where the source ends.
    const last = new Uint8Array(chunk.buffer, chunk.start, chunk.length).at(-1);
    if (last !== separator) expect(await chunks.next()).toBeNull();
    keys.push(...keysOf(splitter.split(chunk)));
    buffers.add(chunk.buffer);
    chunks.release(chunk);
  }
  return { keys, buffers, chunks: count };
}

/** Lines of random length (0 to 60, one of 200 bytes) from a small alphabet with \r and é. */
function randomText(
  seed: number,
  lines: number,
  separator: number,
  unterminated: string,
): Uint8Array {
  const rnd = mulberry32(seed);
  const alphabet = ['a', 'b', '\r', 'é', ' ', '\t'];
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) {
    const len = i === 7 ? 200 : Math.floor(rnd() * 60);
    let line = '';
    for (let j = 0; j < len; j++) line += alphabet[Math.floor(rnd() * alphabet.length)];
    if (rnd() < 0.3) line += '\r';
    parts.push(line);
  }
  const sep = String.fromCharCode(separator);
  const body = Buffer.from(parts.join(sep) + sep + unterminated);
  // A byte that is not UTF-8, as files hold them.
  body[5] = 0xff;
  return new Uint8Array(body);
}

describe('text chunks for worker threads', () => {
  it('give the records of the whole source, for any chunk size, CRLF and NUL, with and without WebAssembly', async () => {
    for (const separator of [0x0a, 0x00]) {
      for (const unterminated of ['', 'last', 'last\r']) {
        const text = randomText(separator + unterminated.length, 400, separator, unterminated);
        const expected = keysOf(splitRecords(text, separator));
        for (const size of [1, 13, 64, 4096, 1 << 20]) {
          for (const wasm of [true, false]) {
            const got = await viaChunks(text, separator, size, size < 64 ? 7 : 1000, wasm);
            expect(got.keys, `sep ${separator}, size ${size}, wasm ${wasm}`).toEqual(expected);
            if (size === 64) expect(got.chunks).toBeGreaterThan(100);
          }
        }
      }
    }
  });

  it('cuts between a \\r and its \\n, and reuses released buffers', async () => {
    // 'ab\r' fills the first 3-byte chunk: the cut finds no separator, so the chunk grows until
    // it holds 'ab\r\n'; the key is 'ab' either way.
    const text = new Uint8Array(Buffer.from('ab\r\ncd\r\n\r\nef'));
    const got = await viaChunks(text, 0x0a, 3, 100, true);
    expect(got.keys).toEqual(['6162', '6364', '', '6566']);
    const big = randomText(3, 5000, 0x0a, '');
    const many = await viaChunks(big, 0x0a, 4096, 4096, true);
    expect(many.chunks).toBeGreaterThan(20);
    // Each chunk released before the next is read: a few buffers serve them all.
    expect(many.buffers.size).toBeLessThanOrEqual(3);
  });

  it('an empty source gives no chunk; a bad size is named', async () => {
    const chunks = new TextChunks(reader(new Uint8Array(0), 10), 0x0a);
    expect(await chunks.next()).toBeNull();
    expect(() => new TextChunks(reader(new Uint8Array(0), 10), 0x0a, 0)).toThrow(
      /size must be a positive integer, got 0/,
    );
  });
});

describe('key chunks for worker threads', () => {
  it('pack the bytes packKeys gives, growing for long keys, and reuse released buffers', () => {
    const long = 'é'.repeat(KEY_CHUNK * 40);
    const strings = ['a', long, '', 'ünï', ...Array.from({ length: KEY_CHUNK }, (_, i) => `k${i}`)];
    const chunks = new KeyChunks('string');
    const seen = new Set<ArrayBufferLike>();
    for (let start = 0; start < strings.length; start += KEY_CHUNK) {
      const end = Math.min(strings.length, start + KEY_CHUNK);
      const got = chunks.pack(strings, start, end);
      const want = packKeys('string', strings.slice(start, end));
      expect(Buffer.compare(got.bytes, want.bytes)).toBe(0);
      expect(Array.from(got.offsets)).toEqual(Array.from(want.offsets));
      seen.add(got.offsets.buffer);
      chunks.release(got);
    }
    expect(seen.size).toBe(1);
    const bytes = new KeyChunks('bytes');
    const keys = [new Uint8Array(5000).fill(7), new Uint8Array(0), new Uint8Array([1, 2])];
    const got = bytes.pack(keys, 0, keys.length);
    expect(Buffer.compare(got.bytes, packKeys('bytes', keys).bytes)).toBe(0);
  });
});
