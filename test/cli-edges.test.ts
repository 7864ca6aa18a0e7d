/**
 * The command at its edges. As real processes (the built command): a saturated `dedup` state
 * that once made the command spin forever and ignore SIGTERM, and signals ending a long run with
 * the usual status and the state whole; every such run has a time bound (spawnSync's `timeout`),
 * so a hang fails the test instead of stalling the suite. In this process (the build's `main()`):
 * what `dedup` and `add` say about a filter past its capacity, `-n`/`-p` against an existing
 * state, `-q`, rounded figures, carriage returns (`--keep-cr`) and the help texts about bytes.
 */

import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressLine } from '../src/cli/progress.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';

let bin: BuiltCli;
let cli: InProcessCli;
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
  cli = inProcessCli();
  dir = bin.tempDir();
});

afterAll(() => {
  bin?.dispose();
  cli?.dispose();
});

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
    // The input stays open: the command waits for more until the signal comes. Sent once the
    // first batch was read (its saturation warning is out; the command listens for signals
    // from before its first read), not before.
    for (let i = 0; i < 500 && !err.includes('warning'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => {
      const bound = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.on('exit', (c, sig) => {
        clearTimeout(bound);
        resolve(c ?? (sig as never));
      });
    });
    expect(code, err).toBe(143);
    // Nothing new was added (every key was a repeat), and the file is still a filter.
    expect(readFileSync(state).equals(before)).toBe(true);
  });
});

/** The JSON object on the last line of `text`. */
function lastJson(text: string): Record<string, unknown> {
  return JSON.parse(text.trim().split('\n').at(-1)!);
}

describe('a filter past its capacity is not used silently', () => {
  it('dedup warns as soon as the rate passes 10x its design rate, and again at the end', async () => {
    const state = join(dir, 'small.bloom');
    const first = await cli.run(['dedup', '-n', '10', '-p', '0.01', '--state', state], {
      input: 'x\n',
    });
    expect(first.stderr).not.toContain('warning');
    // Two inputs, so two batches: the warning comes with the first, and again at the end.
    const more = join(dir, 'more.txt');
    writeFileSync(more, SEQ);
    const r = await cli.run(['dedup', '--state', state, '--json', more, more]);
    expect(r.code).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`the --state file ${state} is saturated`);
    expect(warnings[0]).toMatch(/times its design rate [0-9.e-]+ \(at about 10 keys\)/);
    expect(lastJson(r.stderr)).toMatchObject({ records: 10_000, saturated: true });
    // The text summary does not claim a small number of false drops for a saturated filter.
    const text = await cli.run(['dedup', '--state', state], { input: 'new-1\nnew-2\n' });
    expect(text.stderr).toContain('(the filter is saturated: many of them may be new keys)');
    expect(lastJson(r.stderr).saturation as number).toBeGreaterThan(10);
  });

  it('dedup without -n grows instead: every distinct line printed, no warning', async () => {
    const r = await cli.run(['dedup', '--state', join(dir, 'grows.bloom'), '--json'], {
      input: SEQ,
    });
    expect(r.stdout.toString()).toBe(SEQ);
    expect(r.stderr).not.toContain('warning');
    expect(lastJson(r.stderr)).toMatchObject({ printed: 5000, saturated: false });
  });

  it('-n and -p that do not match an existing --state file are an error; matching ones are not', async () => {
    const state = join(dir, 'made.bloom');
    await cli.run(['dedup', '-n', '1000', '-p', '0.01', '--state', state], { input: 'a\n' });
    for (const args of [
      ['-n', '2000'],
      ['-p', '0.001'],
      ['-n', '1000'],
      ['-n', '1000', '--type', 'classic', '-p', '0.01'],
    ]) {
      const r = await cli.run(['dedup', '--state', state, ...args], { input: 'b\n' });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`--state ${state} holds a blocked filter of`);
      expect(r.stderr).toContain('Leave out -n and -p');
      expect(r.stdout.toString()).toBe('');
    }
    const same = await cli.run(['dedup', '--state', state, '-n', '1000', '-p', '0.01'], {
      input: 'a\nb\n',
    });
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout.toString()).toBe('b\n');
    // A scalable state (made without -n) matches -p of its rate only.
    const grows = join(dir, 'grows-p.bloom');
    await cli.run(['dedup', '--state', grows, '-p', '0.001'], { input: 'a\n' });
    expect((await cli.run(['dedup', '--state', grows, '-p', '0.001'], { input: 'a\n' })).code).toBe(
      0,
    );
    const bad = await cli.run(['dedup', '--state', grows, '-n', '10'], { input: 'a\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('holds a scalable filter');
  });

  it('add warns the same way, and --json says saturated', async () => {
    const file = join(dir, 'add.bloom');
    expect((await cli.run(['create', file, '-n', '10', '-p', '0.01'])).code).toBe(0);
    const fine = await cli.run(['add', file, '--json'], { input: 'a\nb\n' });
    expect(fine.stderr).toBe('');
    expect(lastJson(fine.stdout.toString())).toMatchObject({ saturated: false });
    const r = await cli.run(['add', file, '--json'], { input: SEQ });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`bloomkit add: warning: ${file} is saturated`);
    expect(lastJson(r.stdout.toString())).toMatchObject({ records: 5000, saturated: true });
    // An add whose keys all look present still warns: a saturated filter takes new keys for
    // old ones, so its "0 new" is the case that needs the warning. Empty input asks nothing.
    const same = await cli.run(['add', file], { input: 'never-added-before\n' });
    expect(same.code).toBe(0);
    expect(same.stderr).toContain(`bloomkit add: warning: ${file} is saturated`);
    const empty = await cli.run(['add', file], { input: '' });
    expect(empty.code).toBe(0);
    expect(empty.stderr).toBe('');
    const asked = await cli.run(['add', file, '--json'], { input: 'a\n' });
    expect(lastJson(asked.stdout.toString())).toMatchObject({ new: 0, saturated: true });
  });
});

describe('dedup summary', () => {
  it('-q prints no summary; figures are rounded, not 1.09e-16', async () => {
    const quiet = await cli.run(['dedup', '-q'], { input: 'a\na\n' });
    expect(quiet.stdout.toString()).toBe('a\n');
    expect(quiet.stderr).toBe('');
    const r = await cli.run(['dedup', '-n', '1000'], { input: 'a\nb\n' });
    expect(r.stderr).toContain('(of which fewer than 0.01 new keys dropped by a false positive)');
    expect(r.stderr).not.toMatch(/e-\d/);
  });
});

describe('line endings and bytes', () => {
  it('a CR before the newline is not part of the key, unless --keep-cr', async () => {
    const input = 'a\r\na\nb\n';
    const byDefault = await cli.run(['dedup', '-q'], { input });
    expect(byDefault.stdout.toString()).toBe('a\r\nb\n');
    // As awk '!seen[$0]++' and sort -u: the two lines differ.
    const kept = await cli.run(['dedup', '-q', '--keep-cr'], { input });
    expect(kept.stdout.toString()).toBe(input);
    const file = join(dir, 'cr.bloom');
    await cli.run(['create', file, '-n', '100', '-p', '0.001']);
    await cli.run(['add', file, '--keep-cr'], { input: 'x\r\n' });
    expect((await cli.run(['check', file, '-c'], { input: 'x\n' })).stdout.toString()).toBe('0\n');
    expect(
      (await cli.run(['check', file, '-c', '--keep-cr'], { input: 'x\r\n' })).stdout.toString(),
    ).toBe('1\n');
  });

  it('the help says it once, after the options, and redis says what it does', async () => {
    for (const name of ['add', 'check', 'dedup']) {
      const help = (await cli.run(['help', name])).stdout.toString();
      const at = help.indexOf('Records and keys:');
      expect(at, name).toBeGreaterThan(0);
      expect(help.indexOf('Records and keys:', at + 1)).toBe(-1);
      // No option line after the paragraph.
      expect(
        help
          .slice(at)
          .split('\n')
          .some((l) => /^ {2}(-\w,| {4}--)/.test(l)),
        name,
      ).toBe(false);
      expect(help).toContain('--keep-cr');
      // Prose is filled to 80 columns: runs of whitespace compare as one space.
      expect(help.replace(/\s+/g, ' ')).toContain('invalid UTF-8 is hashed as the bytes it is');
    }
    const redis = (await cli.run(['help', 'redis'])).stdout.toString().replace(/\s+/g, ' ');
    expect(redis).toContain('invalid bytes become U+FFFD');
    expect(redis).not.toContain('invalid UTF-8 is');
    expect(redis).not.toContain("key's bytes as they are");
  });
});

describe('messages that say what is wrong', () => {
  it('merge names the two types and why they cannot be merged', async () => {
    const a = join(dir, 'm-a.bloom');
    const b = join(dir, 'm-s.bloom');
    await cli.run(['create', a, '-n', '100', '-p', '0.01']);
    await cli.run(['create', b, '-n', '100', '-p', '0.01', '--type', 'scalable']);
    const r = await cli.run(['merge', join(dir, 'm-out.bloom'), a, b]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${b}: a scalable filter cannot be merged with ${a}, a classic filter`,
    );
    expect(r.stderr).toContain('ORs the bits of filters of one type and shape');
    expect(r.stderr).not.toContain('[object Object]');
  });

  it('convert without --to says it is required and lists the formats', async () => {
    const a = join(dir, 'c-a.bloom');
    await cli.run(['create', a, '-n', '100', '-p', '0.01']);
    const r = await cli.run(['convert', a, join(dir, 'c-a.x')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--to is required: the format to write, one of native, guava, dcso, parquet-bitset',
    );
    expect(r.stderr).not.toContain('got ""');
  });

  it('a gzip-compressed filter file is called gzip', async () => {
    const a = join(dir, 'g.bloom');
    await cli.run(['create', a, '-n', '100', '-p', '0.01']);
    writeFileSync(`${a}.gz`, gzipSync(readFileSync(a)));
    for (const command of [['info'], ['check', '-c']]) {
      const r = await cli.run([...command, `${a}.gz`], { input: 'x\n' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `${a}.gz: this is gzip-compressed data, not a filter: decompress it first`,
      );
    }
  });

  it('create --json and info --json name the format alike', async () => {
    const a = join(dir, 'f.bloom');
    const created = JSON.parse(
      (await cli.run(['create', a, '-n', '100', '-p', '0.01', '--json'])).stdout.toString(),
    );
    const info = JSON.parse((await cli.run(['info', a, '--json'])).stdout.toString());
    expect(created.format).toBe('bloomkit native');
    expect(info.format).toBe(created.format);
  });
});

describe('the progress line', () => {
  it('fits a terminal line of 80 (and 40) columns without cutting the time left', () => {
    for (const width of [79, 39]) {
      for (const label of ['dedup', 'redis check']) {
        const line = progressLine(label, 1_234_567, 61.5, 987 * 2 ** 20, 3.9 * 2 ** 30, width);
        expect(line.length, line).toBeLessThanOrEqual(width);
        expect(line, line).toMatch(/\d+m\d\ds left$/);
        const unsized = progressLine(label, 1_234_567, 61.5, 987 * 2 ** 20, undefined, width);
        expect(unsized.length).toBeLessThanOrEqual(width);
      }
    }
    // A wide terminal keeps every part.
    expect(progressLine('dedup', 5000, 2, 2 ** 20, 2 ** 22, 200)).toBe(
      'dedup [#####...............] 25% 5000 records, 2500/s, 1.0 MiB of 4.0 MiB, 6s left',
    );
  });
});

/** A tmpfs of `size` mounted at `at` (as root, where mounting is allowed); false otherwise. */
function mountTmpfs(at: string, size: string): boolean {
  if (process.getuid?.() !== 0) return false;
  mkdirSync(at, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at]).status === 0;
}

describe('a file system that is full, then read-only (a tmpfs of its own, as root)', () => {
  let at = '';
  let mounted = false;
  beforeAll(() => {
    at = join(dir, 'small-fs');
    mounted = mountTmpfs(at, '3m');
  });
  afterAll(() => {
    if (mounted) spawnSync('umount', [at]);
  });

  it('add, convert, dedup --state: exit 2 naming the file and why, the filter file unchanged, no file left', (ctx) => {
    if (!mounted) ctx.skip();
    const file = join(at, 'f.bloom');
    // 1.8 MB of 3 MB: the new copy of it has no room.
    expect(run(['create', file, '-n', '1500000', '-p', '0.01'], '').code).toBe(0);
    const before = readFileSync(file);
    const keys = 'full-1\nfull-2\n';
    const runs: [string[], RegExp][] = [
      [['add', file], /f\.bloom: no space left on the device/],
      [['convert', file, join(at, 'g.guava'), '--to', 'guava'], /g\.guava: no space left/],
      [['dedup', '--state', join(at, 's.bloom'), '-n', '1500000', '-q'], /s\.bloom: no space left/],
    ];
    for (const [args, message] of runs) {
      const r = run(args, keys);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(at)).toEqual(['f.bloom']);
    // Read-only now: add cannot even take its lock, and says so in words.
    expect(spawnSync('mount', ['-o', 'remount,ro', at]).status).toBe(0);
    const r = run(['add', file], keys);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`bloomkit add: ${file}: read-only file system\n`);
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

describe('several inputs, one of them missing', () => {
  it('fails at once naming it, before any input is read: nothing printed, nothing saved', () => {
    const file = join(dir, 'several.bloom');
    expect(run(['create', file, '-n', '1000', '-p', '0.01'], '').code).toBe(0);
    expect(run(['add', file], 'there\n').code).toBe(0);
    const before = readFileSync(file);
    writeFileSync(join(dir, 'there.txt'), 'there\nnew\n');
    const missing = join(dir, 'no-such-input.txt');
    // A first input that would never end (a FIFO whose writer, this test, never writes).
    const fifo = join(dir, 'never.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const held = openSync(fifo, constants.O_RDWR);
    try {
      for (const args of [
        ['add', file, join(dir, 'there.txt'), missing],
        ['add', file, fifo, missing],
        ['add', '--threads', '2', file, fifo, missing],
        ['check', file, join(dir, 'there.txt'), missing],
        ['dedup', join(dir, 'there.txt'), missing],
      ]) {
        const r = run(args, '', 10_000);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toBe(`bloomkit ${args[0]}: ${missing}: no such file\n`);
        expect(r.stdout.length, args.join(' ')).toBe(0);
      }
    } finally {
      closeSync(held);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
  }, 60_000);
});
