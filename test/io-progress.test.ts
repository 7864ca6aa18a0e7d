/**
 * `save` and `load` report progress and stop when aborted: an aborted save leaves no temporary
 * file and keeps the previous file as it was; an aborted load rejects with the signal's reason.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BloomFilter, load, save } from '../src/node.js';

// 48 MiB of bits: six slices of 8 MiB.
const big = new BloomFilter({ bits: 48 * 8 * 1024 * 1024, hashes: 3 });
big.add('kept');

/** The test's folder (48 MiB files), removed after it. */
let dir = '';
function tempDir(prefix: string): string {
  dir = mkdtempSync(join(tmpdir(), prefix));
  return dir;
}
afterEach(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('save and load with progress and abort', () => {
  it('reports bytes written and read, ending at the container size', async () => {
    const dir = tempDir('bloomkit-progress-');
    const path = join(dir, 'f.blmk');
    const saved: number[] = [];
    const size = await save(big, path, { onProgress: (done, total) => saved.push(done, total!) });
    expect(statSync(path).size).toBe(size);
    const dones = saved.filter((_, i) => i % 2 === 0);
    expect(dones.length).toBeGreaterThan(5);
    expect(dones).toEqual([...dones].sort((a, b) => a - b));
    expect(dones.at(-1)).toBe(size);
    expect(saved[1]).toBe(size);
    const read: number[] = [];
    const g = await load(path, { onProgress: (done) => read.push(done) });
    expect(read.at(-1)).toBe(size);
    expect(g.has('kept' as never)).toBe(true);
  });

  it('an aborted save leaves the previous file and no temporary file', async () => {
    const dir = tempDir('bloomkit-abort-');
    const path = join(dir, 'f.blmk');
    const small = BloomFilter.create({ capacity: 10, fpp: 0.1 });
    await save(small, path);
    const before = readFileSync(path);
    const controller = new AbortController();
    const reason = new Error('stop here');
    const attempt = save(big, path, {
      signal: controller.signal,
      onProgress: (done) => {
        if (done > 10_000_000) controller.abort(reason);
      },
    });
    await expect(attempt).rejects.toBe(reason);
    expect(readdirSync(dir)).toEqual(['f.blmk']);
    expect(readFileSync(path)).toEqual(before);
  });

  it('an aborted load rejects with the reason; an aborted signal stops before any work', async () => {
    const dir = tempDir('bloomkit-abort-');
    const path = join(dir, 'f.blmk');
    await save(big, path);
    const controller = new AbortController();
    const attempt = load(path, {
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    await expect(attempt).rejects.toMatchObject({ name: 'AbortError' });
    await expect(
      save(big, join(dir, 'g.blmk'), { signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(readdirSync(dir)).toEqual(['f.blmk']);
  });
});
