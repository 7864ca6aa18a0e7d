/**
 * The command at its edges, as real processes (the built command): a saturated `dedup` state
 * that once made the command spin forever and ignore SIGTERM, and signals ending a long run with
 * the usual status and the state whole. Every run has a time bound (spawnSync's `timeout`), so a
 * hang fails the test instead of stalling the suite.
 */

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltCli, buildCli } from './support/cli.js';

let bin: BuiltCli;
let dir: string;

/** Runs the built command with a bound of `ms` (a hang is killed and fails the test). */
function run(args: string[], input: string, ms = 20_000) {
  const r = spawnSync(process.execPath, [bin.bin, ...args], {
    input,
    timeout: ms,
    killSignal: 'SIGKILL',
    env: { ...process.env, BLOOMKIT_DEBUG: '' },
    maxBuffer: 1 << 26,
  });
  expect(r.signal, `bloomkit ${args.join(' ')} was killed after ${ms} ms`).toBeNull();
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

const SEQ = `${Array.from({ length: 5000 }, (_, i) => i + 1).join('\n')}\n`;

beforeAll(async () => {
  bin = await buildCli();
  dir = bin.tempDir();
});

afterAll(() => bin?.dispose());

describe('dedup on a saturated state', () => {
  it('returns at once when every bit of the state is set', () => {
    const state = join(dir, 'full.bloom');
    expect(run(['dedup', '-n', '10', '-p', '0.01', '--state', state], 'x\n').code).toBe(0);
    expect(run(['dedup', '--state', state], SEQ).code).toBe(0);
    const info = run(['info', '--json', state], '');
    expect(JSON.parse(info.stdout.toString())).toMatchObject({ bitsSet: 512, bits: 512 });
    const third = run(['dedup', '--state', state], 'y\n');
    expect(third.code).toBe(0);
    expect(third.stdout.toString()).toBe('');
  });

  it('SIGTERM during a run on a full state ends it with 143, the state whole', async () => {
    const state = join(dir, 'full-term.bloom');
    run(['dedup', '-n', '10', '-p', '0.01', '--state', state], SEQ);
    const before = readFileSync(state);
    const child = bin.start(['dedup', '--state', state]);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdin!.write(SEQ);
    // The input stays open: the command waits for more until the signal comes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => {
      const bound = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.on('exit', (c) => {
        clearTimeout(bound);
        resolve(c);
      });
    });
    expect(code, err).toBe(143);
    // Nothing new was added (every key was a repeat), and the file is still a filter.
    expect(readFileSync(state).equals(before)).toBe(true);
  });
});
