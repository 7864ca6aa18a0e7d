/**
 * `--threads N` of the built command: `add` and `check` on 2 worker threads give byte for byte
 * what one thread gives (the filter file; the selected records, in order, with -v and -c too),
 * over an input of several read batches, each cut into several worker chunks, with repeats and
 * CRLF lines; `dedup` and types whose copies cannot be merged refuse it, saying why.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltCli, buildCli } from './support/cli.js';
import { mulberry32 } from './support/random.js';

let cli: BuiltCli;
let dir: string;
const path = (name: string) => join(dir, name);

beforeAll(async () => {
  cli = await buildCli();
  dir = cli.tempDir();
  // 200,000 lines (about 9 MB: three 4 MiB read batches of about 80,000 records, each sent to
  // the workers as two chunks of at most 65,536 keys), a third of them repeats.
  const rnd = mulberry32(11);
  const lines = Array.from({ length: 200_000 }, (_, i) => {
    const k = i % 3 === 2 ? Math.floor(rnd() * i) : i;
    return `https://threads.example/${k % 7}/${k}${k % 11 === 0 ? '\r' : ''}`;
  });
  writeFileSync(path('keys.txt'), `${lines.join('\n')}\n`);
  writeFileSync(
    path('queries.txt'),
    `${lines.map((l, i) => (i % 2 === 0 ? l : `${l}-absent`)).join('\n')}\n`,
  );
});

afterAll(() => cli?.dispose());

function ok(r: { code: number | null; stderr: string }, code = 0): void {
  expect(r.stderr.includes('    at '), r.stderr).toBe(false);
  expect(r.code, r.stderr).toBe(code);
}

describe('--threads', () => {
  it.each(['classic', 'blocked'])(
    'add and check on 2 threads equal 1 thread byte for byte (%s)',
    (type) => {
      const one = path(`one-${type}.bloom`);
      const two = path(`two-${type}.bloom`);
      for (const file of [one, two]) {
        ok(cli.run(['create', file, '-n', '150000', '-p', '0.01', '--type', type]));
      }
      // Half the keys, so that check finds present and absent records.
      const half = path('half.txt');
      const all = readFileSync(path('keys.txt'), 'utf8').split('\n');
      writeFileSync(half, `${all.slice(0, 100_000).join('\n')}\n`);
      ok(cli.run(['add', one, half]));
      ok(cli.run(['add', two, half, '--threads', '2']));
      expect(readFileSync(two)).toEqual(readFileSync(one));
      for (const extra of [[], ['-v'], ['-c']]) {
        const a = cli.run(['check', one, path('queries.txt'), ...extra]);
        const b = cli.run(['check', one, path('queries.txt'), ...extra, '-T', '2']);
        ok(a);
        ok(b);
        expect(b.stdout.equals(a.stdout), extra.join(' ')).toBe(true);
        expect(a.stdout.length).toBeGreaterThan(extra.length === 0 ? 1_000_000 : 0);
      }
    },
  );

  it('is refused where it cannot give the same answers, saying why', () => {
    const dedup = cli.run(['dedup', '--threads', '2'], { input: 'a\nb\n' });
    ok(dedup, 2);
    expect(dedup.stderr).toContain('--threads: dedup runs on one thread');
    ok(cli.run(['dedup', '--threads', '1'], { input: 'a\n' }));
    const scalable = path('scalable.bloom');
    ok(cli.run(['create', scalable, '-n', '1000', '-p', '0.01', '--type', 'scalable']));
    const add = cli.run(['add', scalable, '-T', '2'], { input: 'a\n' });
    ok(add, 2);
    expect(add.stderr).toContain('--threads adds to a classic, blocked or split-block filter');
    const bad = cli.run(['check', scalable, '--threads', 'two'], { input: 'a\n' });
    ok(bad, 2);
    expect(bad.stderr).toContain('--threads must be a whole number from 1 to 64, got "two"');
    for (const name of ['add', 'check', 'dedup']) {
      expect(cli.run(['help', name]).stdout.toString()).toContain('-T, --threads N');
    }
  });
});
