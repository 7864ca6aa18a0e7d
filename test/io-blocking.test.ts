/**
 * `loadBlocking` (src/node/io.ts: the command's way to read its filter file, with blocking
 * `read(2)` calls) against `load` on the same files: the same filter from good bytes, and the same
 * refusal, naming the file, of a damaged checksum, a cut file, a forged length and a FIFO (refused
 * at once, never waited on). The CRC-32C is checked whole before anything is returned.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBlocking } from '../src/node/io.js';
import { BloomFilter, load, NotRegularFileError, save } from '../src/node.js';

let dir: string;
let good: Uint8Array;
const path = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bloomkit-io-blocking-'));
  // 120 kB of bits: the payload goes through the bulk (WebAssembly) checksum.
  const filter = BloomFilter.create({ capacity: 100_000, fpp: 0.01 });
  for (let i = 0; i < 1000; i++) filter.add(`key-${i}`);
  await save(filter, path('good.bloom'));
  good = readFileSync(path('good.bloom'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The message `read(file)` rejects with. */
async function refusal(read: (file: string) => Promise<unknown>, file: string): Promise<string> {
  try {
    await read(file);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  throw new Error(`${file} was read`);
}

describe('loadBlocking', () => {
  it('reads the filter load reads, bit for bit', async () => {
    const blocking = (await loadBlocking(path('good.bloom'))) as BloomFilter;
    const loaded = (await load(path('good.bloom'))) as BloomFilter;
    expect(blocking).toBeInstanceOf(BloomFilter);
    expect(blocking.toBytes()).toEqual(loaded.toBytes());
    expect(blocking.has('key-7')).toBe(true);
  });

  it.each([
    [
      'a payload byte changed (checksum)',
      (b: Uint8Array) => b.map((x, i) => (i === 5000 ? x ^ 1 : x)),
    ],
    [
      'the trailer changed (checksum)',
      (b: Uint8Array) => b.map((x, i) => (i === b.length - 1 ? x ^ 0x80 : x)),
    ],
    ['the file cut short', (b: Uint8Array) => b.subarray(0, b.length - 100)],
    ['a byte too many', (b: Uint8Array) => Uint8Array.from([...b, 0])],
    ['the header cut', (b: Uint8Array) => b.subarray(0, 10)],
  ])('refuses a file with %s as load does, naming it', async (_what, damage) => {
    const file = path('bad.bloom');
    writeFileSync(file, damage(good));
    const message = await refusal(loadBlocking, file);
    expect(message).toBe(await refusal(load, file));
    expect(message).toContain(file);
  });

  it('refuses a FIFO at once, as load does', async () => {
    const fifo = path('fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(loadBlocking(fifo)).rejects.toBeInstanceOf(NotRegularFileError);
    expect(await refusal(loadBlocking, fifo)).toBe(await refusal(load, fifo));
  });
});
