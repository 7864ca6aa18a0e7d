/**
 * `bloomkit cascade build`: MLBF files that the rust-cascade reader (transcribed) answers exactly,
 * the native format, and one-line errors. The command runs in this process (the build's
 * `main()`); the MLBF build runs once more as the built command, as a process (the end-to-end run
 * of `cascade`), which must write the same bytes.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilterCascade } from '../src/filters/cascade/filter.js';
import { expectBytes } from './support/bytes.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';
import { rustCascadeFromBytes, rustCascadeHas } from './support/rust-cascade.js';

let cli: InProcessCli;
let bin: BuiltCli;
let dir: string;
const include = Array.from({ length: 300 }, (_, i) => `revoked-${i}`);
const exclude = Array.from({ length: 5000 }, (_, i) => `valid-${i}`);
const utf8 = (s: string) => new TextEncoder().encode(s);

beforeAll(async () => {
  cli = inProcessCli();
  bin = await buildCli();
  dir = cli.tempDir();
  writeFileSync(join(dir, 'inc.txt'), `${include.join('\n')}\n`);
  writeFileSync(join(dir, 'exc.txt'), `${exclude.join('\r\n')}\r\n`);
}, 60_000);
afterAll(() => {
  cli?.dispose();
  bin?.dispose();
});

describe('bloomkit cascade build', () => {
  it('writes an MLBF file that the transcribed rust-cascade reader answers exactly', async () => {
    const out = join(dir, 'out.mlbf');
    const r = await cli.run([
      'cascade',
      'build',
      '--include',
      join(dir, 'inc.txt'),
      '--exclude',
      join(dir, 'exc.txt'),
      out,
      '--format',
      'mlbf',
      '--hash',
      'sha256ctr',
      '--salt',
      '6e61636c',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const args = ['cascade', 'build', '--include', join(dir, 'inc.txt')];
    args.push('--exclude', join(dir, 'exc.txt'), join(dir, 'built.mlbf'), '--format', 'mlbf');
    const built = bin.run([...args, '--hash', 'sha256ctr', '--salt', '6e61636c']);
    expect([built.code, built.stderr]).toEqual([0, '']);
    expectBytes(readFileSync(join(dir, 'built.mlbf')), readFileSync(out));
    const rust = rustCascadeFromBytes(new Uint8Array(readFileSync(out)))!;
    expect(rust.hashAlgorithm).toBe(3);
    expect(include.every((k) => rustCascadeHas(rust, utf8(k)))).toBe(true);
    expect(exclude.some((k) => rustCascadeHas(rust, utf8(k)))).toBe(false);
  });

  it('writes the native format by default', async () => {
    const out = join(dir, 'out.bloom');
    const r = await cli.run([
      'cascade',
      'build',
      '--include',
      join(dir, 'inc.txt'),
      '--exclude',
      join(dir, 'exc.txt'),
      out,
      '--json',
    ]);
    expect(r.code).toBe(0);
    const facts = JSON.parse(r.stdout.toString());
    expect(facts.type).toMatch(/cascade/i);
    expect(facts.estimatedCount).toBe(300);
    const c = FilterCascade.fromBytes<string>(new Uint8Array(readFileSync(out)));
    expect(include.every((k) => c.has(k)) && !exclude.some((k) => c.has(k))).toBe(true);
  });

  it('fails with status 2 and one line for a key in both files or a bad option', async () => {
    const both = await cli.run([
      'cascade',
      'build',
      '--include',
      join(dir, 'inc.txt'),
      '--exclude',
      join(dir, 'inc.txt'),
      join(dir, 'x'),
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/a key is in both include and exclude/);
    const fmt = await cli.run([
      'cascade',
      'build',
      '--include',
      'a',
      '--exclude',
      'b',
      join(dir, 'x'),
      '--format',
      'xml',
    ]);
    expect(fmt.code).toBe(2);
    expect(fmt.stderr).toMatch(/--format must be native or mlbf, got "xml"/);
    const verb = await cli.run(['cascade', 'make', join(dir, 'x')]);
    expect(verb.stderr).toMatch(/unknown verb "make"/);
  });
});
