/**
 * One question, one number: for each filter type the command (`calc`, `create`, `info`, `add`,
 * `dedup`'s end), the library (`solveSize`, `filterBytes`, `designPoint`) and the page's
 * formatting give the same size, shape, count and design for the same filter, on a grid with its
 * edges (one key, rates near 0 and 1, sizes that are not whole words, a full filter).
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInt } from '../src/formats/view.js';
import {
  CODECS,
  DcsoBloomFilter,
  filterBytes,
  ShardedBloomFilter,
  solveSize,
} from '../src/index.js';
import { type InProcessCli, inProcessCli } from './support/cli.js';

let cli: InProcessCli;
let dir: string;

beforeAll(() => {
  cli = inProcessCli();
  dir = cli.tempDir();
});
afterAll(() => cli?.dispose());

const json = (args: string[]) => cli.json(args);

describe('one question, one number: calc, create, info and the library', () => {
  const sized = CODECS.filter((row) => row.model !== undefined && row.create !== undefined).map(
    (row) => row.name,
  );
  // The edges: one key, a rate near 1, a tiny rate, and sizes whose bits are not whole words.
  const grid: [number, number][] = [
    [1, 0.5],
    [1, 0.01],
    [7, 0.3],
    [1000, 0.01],
    [1000, 1e-9],
  ];

  for (const type of sized) {
    it(`${type}: calc, create --json, info --json and filterBytes give one size and shape`, async () => {
      for (const [n, p] of grid) {
        const what = `${type} n=${n} p=${p}`;
        const sizing = ['-t', type, '-n', String(n), '-p', String(p), '--json'];
        const calc = await cli.run(['calc', ...sizing]);
        if (calc.code !== 0) {
          expect(() => filterBytes(type, n, p), what).toThrow(RangeError);
          continue;
        }
        const c = JSON.parse(calc.stdout.toString('utf8'));
        const file = join(dir, `one-number-${type}-${n}-${p}.bloom`);
        const created = await json(['create', file, ...sizing]);
        const { kind: _kind, ...shape } = c.shape as Record<string, number>;
        expect(created, what).toMatchObject({ ...shape, bytes: c.bytes });
        expect(await json(['info', file, '--json']), what).toMatchObject({
          ...shape,
          bytes: c.bytes,
        });
        expect(filterBytes(type, n, p), what).toBe(c.bytes);
        // The table of every type prints the same size for this type's row.
        expect(
          c.types.find((r: { type: string }) => r.type === type),
          what,
        ).toMatchObject({
          bits: c.m,
          bytes: c.bytes,
          fpp: c.p,
        });
      }
    });
  }

  it("a full filter's count is no number in every tool: info text —, JSON null, the page —", async () => {
    const file = join(dir, 'one-number-full.bloom');
    await json(['create', file, '-n', '1', '-p', '0.5', '--json']);
    const keys = `${Array.from({ length: 3000 }, (_, i) => `k${i}`).join('\n')}\n`;
    const added = await cli.run(['add', file, '--json'], { input: keys });
    expect(JSON.parse(added.stdout.toString('utf8'))).toMatchObject({ estimatedCount: null });
    expect(await json(['info', file, '--json'])).toMatchObject({
      bitsSet: 64,
      estimatedCount: null,
    });
    const text = await cli.run(['info', file]);
    expect(text.stdout.toString('utf8')).toMatch(/^estimatedCount: +—$/m);
    expect(text.stdout.toString('utf8')).not.toMatch(/Infinity|NaN/);
    // The page's inspector and live view write counts with formatInt.
    expect(formatInt(Number.POSITIVE_INFINITY)).toBe('—');
    expect(formatInt(Number.NaN)).toBe('—');
  });

  it('a filter that keeps its capacity (DCSO, sharded) is saturated against it, as info prints it', async () => {
    const file = join(dir, 'one-number-dcso.bloom');
    await json(['create', file, '-t', 'dcso', '-n', '100', '-p', '0.01', '--json']);
    const keys = `${Array.from({ length: 3000 }, (_, i) => `k${i}`).join('\n')}\n`;
    const added = await cli.run(['add', file], { input: keys });
    expect(await json(['info', file, '--json'])).toMatchObject({ capacity: 100, fpp: 0.01 });
    const dcso = DcsoBloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(dcso.designPoint()).toEqual({ capacity: 100, fpp: 0.01 });
    expect(added.stderr).toContain('design rate 0.01 (at about 100 keys)');
    const sharded = ShardedBloomFilter.create({ capacity: 5000, fpp: 0.001, shardBits: 4096 });
    expect(sharded.designPoint()).toEqual({ capacity: 5000, fpp: 0.001 });
  });

  it("info rounds a scalable layer's numbers as its own: 6 significant digits", async () => {
    const file = join(dir, 'one-number-scalable.bloom');
    const created = await json([
      'create',
      file,
      '-t',
      'scalable',
      '-n',
      '1000',
      '-p',
      '0.01',
      '--json',
    ]);
    // 0.01·(1 − 0.9) is 0.0009999999999999998 in doubles: printed as 0.001, as expectedFpp is.
    expect(created.layers).toMatchObject([{ capacity: 1000, fpp: 0.001 }]);
    expect((await json(['info', file, '--json'])).layers).toEqual(created.layers);
  });

  it("calc's lower bound is the solver's (and the page's): log2(1/p) of the rate it prints", async () => {
    for (const [n, p] of [
      [1, 0.5],
      [1000, 0.01],
      [12_345, 0.05],
    ]) {
      const c = JSON.parse(
        (await cli.run(['calc', '-n', String(n), '-p', String(p), '--json'])).stdout.toString(),
      );
      const solved = solveSize('classic', { n: n!, p: p! });
      expect(c.p).toBe(solved.p);
      expect(c.lowerBoundBitsPerKey, `n=${n} p=${p}`).toBe(Number(solved.lowerBound.toFixed(3)));
    }
  });

  it('a rate too low for 255 hashes: create, calc and the library refuse with one message', async () => {
    const message = 'fpp 1e-300 needs 996 hash functions, more than the maximum 255';
    for (const type of ['classic', 'counting']) {
      const file = join(dir, `one-number-k-${type}.bloom`);
      const create = await cli.run(['create', file, '-t', type, '-n', '1', '-p', '1e-300']);
      const calc = await cli.run(['calc', '-t', type, '-n', '1', '-p', '1e-300']);
      expect(create.stderr, type).toBe(`bloomkit create: ${message}\n`);
      expect(calc.stderr, type).toBe(`bloomkit calc: ${message}\n`);
      expect(() => solveSize(type, { n: 1, p: 1e-300 })).toThrow(message);
    }
    expect(() => DcsoBloomFilter.create({ capacity: 1, fpp: 1e-300 })).toThrow(
      'fpp 1e-300 needs 997 hash functions, more than the maximum 255',
    );
  });

  it('calc answers a size too small for its keys with p = 1, not an error about -p', async () => {
    for (const type of ['classic', 'blocked', 'split-block']) {
      const r = await cli.run(['calc', '-t', type, '-n', '1e9', '-m', '256', '--json']);
      expect(r.code, `${type}: ${r.stderr}`).toBe(0);
      const c = JSON.parse(r.stdout.toString('utf8'));
      expect(c.p, type).toBe(1);
      expect(c.types, type).toEqual([]);
      const text = await cli.run(['calc', '-t', type, '-n', '1e9', '-m', '256']);
      expect(text.code, `${type}: ${text.stderr}`).toBe(0);
      expect(text.stdout.toString('utf8'), type).toMatch(/^p = 1 /m);
    }
  });
});
