/**
 * `npm start`: bloomkit's main job, the `bloomkit` command deduplicating a crawler's frontier.
 *
 * Runs the real command (the same `main` the installed `bloomkit` runs) on the bundled sample
 * samples/crawl-frontier.txt (12,000 links as a crawler finds them, many found more than once),
 * or on the file given after `npm start --`, and says in plain words what each step did:
 *
 *   1. `bloomkit dedup --state seen.bloom FILE`   first sightings only, in input order
 *   2. the same again: nothing is new, the state file remembers every link
 *   3. `bloomkit info seen.bloom`                 what the state file holds
 *   4. `bloomkit check -c seen.bloom samples/urls.txt`  which links of another list were seen
 *
 * The output of step 1 is compared with an exact in-memory dedup (what `awk '!seen[$0]++'`
 * prints); the demo exits with status 1 if a line differs beyond the expected false drops.
 */
import {
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/main.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const input = process.argv[2] ?? join(root, 'samples/crawl-frontier.txt');
const other = join(root, 'samples/urls.txt');
if (!existsSync(input) || !statSync(input).isFile()) {
  console.error(`npm start: ${input}: no such file (npm start -- FILE dedups FILE)`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'bloomkit-demo-'));
const state = join(work, 'seen.bloom');
const show = (p: string) => (p.startsWith(root) ? relative(root, p) : p);

/** Runs `bloomkit ...args`; stdout goes to `out` (a file) or is returned as text. */
async function bloomkit(
  args: string[],
  out?: Writable,
  outName = 'unique.txt',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  let err = '';
  if (out) stdout.pipe(out);
  else stdout.on('data', (d: Buffer) => (text += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  console.log(`\n$ bloomkit ${args.map(show).join(' ')}${out ? ` > ${outName}` : ''}`);
  const code = await main(args, { stdout, stderr, stdin: process.stdin });
  stdout.end();
  if (out) await new Promise((resolve) => out.on('finish', resolve));
  for (const part of [text, err]) {
    if (part) console.log(part.trimEnd().replace(/^/gm, '  '));
  }
  return { code, stdout: text, stderr: err };
}

const n = (x: number) => x.toLocaleString('en-US');

try {
  const lines = readFileSync(input).toString('latin1').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const firsts = new Set<string>();
  const expected: string[] = [];
  for (const line of lines) {
    const key = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (!firsts.has(key)) {
      firsts.add(key);
      expected.push(line);
    }
  }
  console.log(
    `bloomkit demo: deduplicating ${show(input)} (${n(lines.length)} lines) with the bloomkit command`,
  );

  const uniqueFile = join(work, 'unique.txt');
  const first = await bloomkit(['dedup', '--state', state, input], createWriteStream(uniqueFile));
  if (first.code !== 0) throw new Error(`bloomkit dedup exited with status ${first.code}`);
  const printed = readFileSync(uniqueFile).toString('latin1').split('\n').slice(0, -1);
  let mismatches = 0;
  for (let i = 0, j = 0; i < expected.length; i++) {
    if (printed[j] === expected[i]) j++;
    else mismatches++; // a new line dropped by a false positive
  }
  const summary = JSON.parse(
    (
      await bloomkit(
        ['dedup', '--json', '--state', state, input],
        new PassThrough().resume(),
        '/dev/null',
      )
    ).stderr,
  ) as { printed: number };
  console.log(`
In words: of ${n(lines.length)} lines, ${n(printed.length)} were seen for the first time and were
printed in their original order; the ${n(lines.length - printed.length)} repeats were dropped. An exact
dedup (awk '!seen[$0]++') prints ${n(expected.length)} lines: ${mismatches === 0 ? 'the very same ones' : `${mismatches} new lines were dropped by a false positive`}.
Instead of keeping every line in memory, bloomkit kept a Bloom filter and saved it to seen.bloom
(${n(statSync(state).size)} bytes). Run a second time over the same file with that state, it printed
${n(summary.printed)} lines: every link is remembered across runs (a crawler restarts where it stopped).`);

  await bloomkit(['info', state]);
  console.log(`
In words: the state is a scalable Bloom filter (it grows when more keys come) holding about
${n(firsts.size)} keys, and its false positive rate above is the chance that a new link would be
taken for one already seen.`);

  const check = await bloomkit(['check', '-c', state, other]);
  console.log(`
In words: of the ${n(readFileSync(other).toString('latin1').split('\n').length - 1)} links in ${show(other)}, ${n(Number(check.stdout))} may have been
seen by the crawl (a Bloom filter never misses a link it holds; an unseen link passes rarely).
Try it on your own file: npm start -- FILE   (and: npx bloomkit help)`);
  if (mismatches > Math.max(3, expected.length * 1e-4)) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
