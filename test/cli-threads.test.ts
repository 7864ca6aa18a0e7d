/**
 * `--threads N` of the built command: `add` and `check` on 2 worker threads give byte for byte
 * what one thread gives (the filter file; the selected records, in order, with -v and -c too),
 * over inputs of three read batches, the first two each cut into two worker chunks (the layout is
 * checked below), with repeats and CRLF lines; `add` whose workers split the records themselves
 * (inputs over several 1 MiB text chunks, CRLF, `-0`, gzip, an unterminated last record) writes
 * the file one thread writes and counts the same records, and added again on top of a filter
 * holding them counts none new (the workers' copies start from the file's bits); `dedup` and
 * types whose copies cannot
 * be merged refuse it, saying why.
 *
 * Everything runs main() in this process (its workers load the command's built files, as the
 * installed command's do), but for one 2-thread run, the classic filter's plain check: the built
 * command as a subprocess, where only a real process shows that it starts its workers from beside
 * cli.js, and that all its answers are through the pipe before it exits (each process costs a
 * Node start and a load of the command, about 0.3 s of CPU, on top of its work).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POOL_CHUNK_KEYS } from '../src/node/parallel-pool.js';
import { TEXT_CHUNK } from '../src/node/parallel-text.js';
import { expectBytes } from './support/bytes.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';
import { mulberry32 } from './support/random.js';

/** What the command reads from a file at a time (src/cli/records.ts): one batch of records. */
const READ_SLICE = 1 << 20;
const LINES = 170_000;

let bin: BuiltCli;
let cli: InProcessCli;
let dir: string;
const path = (name: string) => join(dir, name);

/** Records per read batch of `text`: whole lines of each 1 MiB read, the rest carried over. */
function batchSizes(text: Buffer): number[] {
  const sizes: number[] = [];
  for (let start = 0; start < text.length; ) {
    const end = Math.min(text.length, start + READ_SLICE);
    const cut = end === text.length ? end : text.lastIndexOf(0x0a, end - 1) + 1;
    let count = 0;
    for (let i = start; i < cut; i++) if (text[i] === 0x0a) count++;
    sizes.push(count);
    start = cut;
  }
  return sizes;
}

beforeAll(async () => {
  bin = await buildCli();
  cli = inProcessCli();
  dir = cli.tempDir();
  // 170,000 lines of about 13.5 bytes, a third of them repeats: three 1 MiB read batches, the
  // first two of 75,000 to 80,000 records (two chunks of at most 65,536 keys each), so a batch
  // waits while two are in the workers, and answers come back in order.
  const rnd = mulberry32(11);
  const lines = Array.from({ length: LINES }, (_, i) => {
    const k = i % 3 === 2 ? Math.floor(rnd() * i) : i;
    return `${k % 7}/${k}.html${k % 11 === 0 ? '\r' : ''}`;
  });
  writeFileSync(path('keys.txt'), `${lines.join('\n')}\n`);
  // Every other line absent (as long as the present one: the same read batches), so that check
  // finds present and absent records.
  writeFileSync(
    path('queries.txt'),
    `${lines.map((l, i) => (i % 2 === 0 ? l : l.replace('.html', '.xhtm'))).join('\n')}\n`,
  );
});

afterAll(() => {
  bin?.dispose();
  cli?.dispose();
});

function ok(r: { code: number | null; stderr: string }, code = 0): void {
  expect(r.stderr.includes('    at '), r.stderr).toBe(false);
  expect(r.code, r.stderr).toBe(code);
}

describe('--threads', () => {
  it('gets inputs of three read batches, the first two of two worker chunks each', () => {
    for (const name of ['keys.txt', 'queries.txt']) {
      const sizes = batchSizes(readFileSync(path(name)));
      expect(sizes.length, name).toBe(3);
      for (const n of sizes.slice(0, 2)) {
        expect(n, name).toBeGreaterThan(POOL_CHUNK_KEYS);
        expect(n, name).toBeLessThanOrEqual(2 * POOL_CHUNK_KEYS);
      }
    }
  });

  it.each(['classic', 'blocked'])(
    'add and check on 2 threads equal 1 thread byte for byte (%s)',
    async (type) => {
      const one = path(`one-${type}.bloom`);
      const two = path(`two-${type}.bloom`);
      for (const file of [one, two]) {
        ok(await cli.run(['create', file, '-n', '150000', '-p', '0.01', '--type', type]));
      }
      ok(await cli.run(['add', one, path('keys.txt')]));
      ok(await cli.run(['add', two, path('keys.txt'), '--threads', '2']));
      expectBytes(readFileSync(two), readFileSync(one));
      // -v and -c select from the workers' answers in the main thread, whatever the type: the
      // classic run covers them, the blocked run the plain check.
      for (const extra of type === 'classic' ? [[], ['-v'], ['-c']] : [[]]) {
        const a = await cli.run(['check', one, path('queries.txt'), ...extra]);
        const args = ['check', one, path('queries.txt'), ...extra, '-T', '2'];
        const b = type === 'classic' && extra.length === 0 ? bin.run(args) : await cli.run(args);
        ok(a);
        ok(b);
        expect(b.stdout.equals(a.stdout), extra.join(' ')).toBe(true);
        // Without -v or -c: the present half of the queries, about 6.8 bytes per query.
        expect(a.stdout.length).toBeGreaterThan(extra.length === 0 ? 5 * LINES : 0);
      }
    },
  );

  it('add splits records on the workers: inputs of several text chunks, CRLF, -0, gzip, an unterminated last record', async () => {
    // Over several 1 MiB text chunks: records straddle each cut; every third line ends in CRLF.
    const lines = Array.from({ length: 150_000 }, (_, i) => `https://example.com/page/${i * 7}`);
    const text = lines.map((l, i) => (i % 3 === 0 ? `${l}\r\n` : `${l}\n`)).join('');
    expect(text.length).toBeGreaterThan(TEXT_CHUNK);
    writeFileSync(path('chunks.txt'), `${text}unterminated\r`);
    writeFileSync(path('chunks.txt.gz'), gzipSync(`${lines.slice(0, 9000).join('\n')}\nlast`));
    writeFileSync(path('chunks.bin'), `${lines.slice(5000, 7000).join('\0')}\0`);
    const inputs = [
      [path('chunks.txt'), path('chunks.txt.gz')],
      ['-0', path('chunks.bin')],
    ];
    for (const args of inputs) {
      const files = [path('one-chunks.bloom'), path('two-chunks.bloom')];
      const json: string[] = [];
      for (const [i, file] of files.entries()) {
        ok(await cli.run(['create', file, '-n', '200000', '-p', '0.01', '--force']));
        const r = await cli.run(['add', file, ...args, '--json', '-T', String(i + 1)]);
        ok(r);
        json.push(JSON.parse(r.stdout.toString()).records);
      }
      expectBytes(readFileSync(files[1]!), readFileSync(files[0]!), args.join(' '));
      expect(json[1], args.join(' ')).toBe(json[0]);
      expect(json[0]).toBe(args[0] === '-0' ? 2000 : 150_000 + 1 + 9001);
    }
    // Again on top of what the file holds (one thread's adds of chunks.txt): the workers' copies
    // start from the file's bits (blank copies would count its keys as new), and the file stays
    // the one-thread file.
    for (const file of [path('one-chunks.bloom'), path('two-chunks.bloom')]) {
      ok(await cli.run(['add', file, path('chunks.txt')]));
    }
    const again = await cli.run([
      'add',
      path('two-chunks.bloom'),
      path('chunks.txt'),
      '--json',
      '-T',
      '2',
    ]);
    ok(again);
    expect(JSON.parse(again.stdout.toString())).toMatchObject({ records: 150_001, new: 0 });
    expectBytes(readFileSync(path('two-chunks.bloom')), readFileSync(path('one-chunks.bloom')));
  });

  it('is refused where it cannot give the same answers, saying why', async () => {
    const dedup = await cli.run(['dedup', '--threads', '2'], { input: 'a\nb\n' });
    ok(dedup, 2);
    expect(dedup.stderr).toContain('--threads: dedup runs on one thread');
    ok(await cli.run(['dedup', '--threads', '1'], { input: 'a\n' }));
    const scalable = path('scalable.bloom');
    ok(await cli.run(['create', scalable, '-n', '1000', '-p', '0.01', '--type', 'scalable']));
    const add = await cli.run(['add', scalable, '-T', '2'], { input: 'a\n' });
    ok(add, 2);
    expect(add.stderr).toContain('--threads adds to a classic, blocked or split-block filter');
    const bad = await cli.run(['check', scalable, '--threads', 'two'], { input: 'a\n' });
    ok(bad, 2);
    expect(bad.stderr).toContain('--threads must be a whole number from 1 to 64, got "two"');
    for (const name of ['add', 'check', 'dedup']) {
      expect((await cli.run(['help', name])).stdout.toString()).toContain('-T, --threads N');
    }
  });
});
