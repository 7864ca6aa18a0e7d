/**
 * `buildParallel`'s split of the work between the calling thread and its workers
 * (src/node/parallel.ts, `buildTogether`), without threads: a stand-in worker takes every other
 * chunk it is offered (and answers later, as a worker does), the calling thread adds the rest
 * into its own copy. The two copies OR-ed together equal one thread's build from the same keys,
 * bit for bit, for a file of lines over several 1 MiB text chunks (CRLF lines with the `\r` and
 * the `\n` on two sides of a cut, empty lines, an unterminated last line) and for an array of
 * keys over several key chunks; both sides took chunks; the progress adds up to every key.
 * `readAhead` (a file's chunks) asks for the next chunk before the calling thread adds one, and
 * `drained` runs once, after the last chunk.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PackedKeys } from '../src/filters/filter.js';
import { packKeys, splitRecords } from '../src/filters/packed.js';
import { BloomFilter } from '../src/index.js';
import {
  buildTogether,
  type ChunkTaker,
  createShared,
  sourceChunks,
} from '../src/node/parallel.js';
import { KEY_CHUNK } from '../src/node/parallel-keys.js';
import { TEXT_CHUNK, type TextChunk, TextSplitter } from '../src/node/parallel-text.js';
import { readAhead } from '../src/node/parallel-together.js';
import { expectBytes } from './support/bytes.js';

const dir = mkdtempSync(join(tmpdir(), 'bloomkit-together-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A stand-in for a pool of one worker: it takes every other chunk offered (null otherwise, as a
 * busy pool answers), adds it into `into` on the next turn of the event loop, and counts them.
 */
function standIn(into: BloomFilter): ChunkTaker & { taken: number } {
  const splitter = new TextSplitter();
  let offered = 0;
  const later = <T>(f: () => T): Promise<T> =>
    new Promise((resolve) => setImmediate(() => resolve(f())));
  const taker = {
    taken: 0,
    tryAddText(chunk: TextChunk) {
      if (offered++ % 2 === 1) return null;
      taker.taken++;
      const done = later(() => {
        const batch = splitter.split(chunk);
        return { count: into.addBatch(batch), records: batch.offsets.length - 1 };
      });
      return { done };
    },
    tryAddPacked(batch: PackedKeys) {
      if (offered++ % 2 === 1) return null;
      taker.taken++;
      return { done: later(() => into.addBatch(batch)) };
    },
  };
  return taker;
}

/** Builds from `source` with the stand-in; the merged bytes, chunks per side, and progress. */
async function together(source: string | string[], capacity: number) {
  const here = createShared('classic', capacity, 0.01, 'string', false) as BloomFilter;
  const away = createShared('classic', capacity, 0.01, 'string', false) as BloomFilter;
  const taker = standIn(away);
  let progressed = 0;
  let mine = 0;
  const counting = (n: number): void => {
    progressed += n;
  };
  const chunks = sourceChunks(source, 'string');
  const watched = (async function* () {
    for await (const chunk of chunks) {
      mine++;
      yield chunk;
    }
  })();
  await buildTogether(watched, here, () => taker, counting);
  here.union(away);
  return { bytes: here.toBytes(), taken: taker.taken, all: mine, progressed };
}

describe('buildParallel: the calling thread and its workers share the chunks', () => {
  it('from a file of several text chunks (CRLF across a cut): the merged copies equal one thread', async () => {
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < 3.5 * TEXT_CHUNK; i++) {
      const line = i % 97 === 0 ? '' : `https://example.com/${i}/${'x'.repeat(i % 61)}`;
      lines.push(line);
      size += line.length + 2;
    }
    // CRLF lines, and the last one unterminated.
    const text = `${lines.join('\r\n')}\r\nlast`;
    const file = join(dir, 'lines.txt');
    writeFileSync(file, text);
    const records = splitRecords(new TextEncoder().encode(text), 0x0a);
    const single = BloomFilter.create({ capacity: lines.length + 1, fpp: 0.01 });
    single.addBatch(records);
    const built = await together(file, lines.length + 1);
    expectBytes(built.bytes, single.toBytes());
    expect(built.all).toBeGreaterThanOrEqual(3);
    expect(built.taken).toBeGreaterThan(0);
    expect(built.taken).toBeLessThan(built.all);
    expect(built.progressed).toBe(records.offsets.length - 1);
  });

  it('from an array of several key chunks: the merged copies equal one thread', async () => {
    const keys = Array.from({ length: 3 * KEY_CHUNK + 123 }, (_, i) => `key:${i}:${i * 7919}`);
    const single = BloomFilter.create({ capacity: keys.length, fpp: 0.01 });
    single.addBatch(packKeys('string', keys));
    const built = await together(keys, keys.length);
    expectBytes(built.bytes, single.toBytes());
    expect(built.all).toBe(4);
    expect(built.taken).toBe(2);
    expect(built.progressed).toBe(keys.length);
  });

  it('readAhead asks for the next chunk before one is added, and drained runs once, after the last chunk', async () => {
    const keys = Array.from({ length: 3 * KEY_CHUNK }, (_, i) => `ahead:${i}`);
    const here = createShared('classic', keys.length, 0.01, 'string', false) as BloomFilter;
    const events: string[] = [];
    const chunks = sourceChunks(keys, 'string');
    const watched = (async function* () {
      for (let i = 0; ; i++) {
        events.push(`ask ${i}`);
        const next = await chunks.next();
        if (next.done === true) return;
        yield next.value;
      }
    })();
    let added = 0;
    await buildTogether(
      readAhead(watched),
      here,
      () => null,
      () => {
        events.push(`added ${added++}`);
      },
      false,
      () => events.push('drained'),
    );
    // Chunk i + 1 is asked for before chunk i is added (its read overlaps the adding).
    expect(events).toEqual([
      'ask 0',
      'ask 1',
      'added 0',
      'ask 2',
      'added 1',
      'ask 3',
      'added 2',
      'drained',
    ]);
  });
});
