/**
 * Interop with the real DCSO `bloom` 0.2.4 (Debian's golang-github-dcso-bloom-cli), in both
 * directions, as test/guava-interop.test.ts does against Guava's jar:
 *
 * - a file made by `bloom create` and filled by `bloom insert` is read by bloomkit
 *   (`DcsoBloomFilter.fromDcso`, and the command's `info`, `check` and `convert`) with the same
 *   answers as `bloom check` (the same lines printed, in the same order) and the same facts as
 *   `bloom show` (bits, hashes, elements present);
 * - a file made by bloomkit (`create --type dcso`, then `insert`: the alias of `add`, or the
 *   library's `toDcso()`, or `convert --to dcso` from the native format) is byte for byte the
 *   file `bloom` makes from the same lines, and `bloom check` / `bloom show` read it with the
 *   same answers;
 * - attached data (`bloom set-data`) survives bloomkit's `add`; a file cut short is refused by
 *   bloomkit with one line naming it (as `bloom` refuses it), never read as an empty filter.
 *
 * The keys are seeded and include what trips line readers: an empty line, CRLF endings, spaces,
 * tabs and commas, UTF-8 of several lengths (CJK, emoji). Sizes include m not a multiple of 64.
 *
 * Without the `bloom` binary these tests skip locally and fail in CI
 * (`apt-get install golang-github-dcso-bloom-cli`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DcsoBloomFilter, FormatError } from '../src/index.js';
import { inProcessCli } from './support/cli.js';
import { lcg } from './support/random.js';

const BLOOM = ['/usr/bin/bloom', '/usr/local/bin/bloom'].find((p) => existsSync(p));

function isCI(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

if (BLOOM === undefined) {
  if (isCI()) {
    throw new Error("DCSO's bloom is required in CI: apt-get install golang-github-dcso-bloom-cli");
  }
  console.warn(
    "DCSO bloom interop skipped: install DCSO's bloom (apt-get install golang-github-dcso-bloom-cli)",
  );
}

/** Runs `bloom args` with `input` on standard input; its output, or an error showing it. */
function bloom(args: readonly string[], input = ''): { code: number; stdout: string } {
  const r = spawnSync(BLOOM!, args, { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout + r.stderr };
}

/** `bloom show`'s facts: bits, hashes, elements present. */
function show(file: string, gzip = false): { bits: number; hashes: number; present: number } {
  const out = bloom([...(gzip ? ['--gzip'] : []), 'show', file]).stdout;
  const field = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(out)![1]);
  return {
    bits: field('Bits'),
    hashes: field('Hash functions'),
    present: field('Elements present'),
  };
}

/** Seeded keys that trip line readers, `count` of them, none containing a newline. */
function keys(seed: number, count: number, tag: string): string[] {
  const next = lcg(seed);
  const extras = ['', ' ', 'a b', 'tab\there', 'x,y,z', 'naïve', '日本語', '🙂🙃', 'ℝ'];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = next() >>> 0;
    const extra = extras[r % extras.length]!;
    out.push(i % 7 === 0 ? `${extra}${tag}${i}` : `${tag}-${r.toString(36)}-${i}`);
  }
  return out;
}

const CASES = [
  { n: 1000, p: 0.01, count: 900 },
  { n: 20_000, p: 0.001, count: 25_000 }, // overfull: more keys than the capacity
  { n: 10, p: 0.3, count: 40 }, // m = 25 bits: one word, mostly set
];

const cli = inProcessCli();
afterAll(() => cli.dispose());

describe.skipIf(BLOOM === undefined)('DCSO bloom interop (the real bloom 0.2.4)', () => {
  for (const { n, p, count } of CASES) {
    describe(`n = ${n}, p = ${p}, ${count} keys`, () => {
      const present = keys(n, count, 'k');
      const probes = [...present.slice(0, 300), ...keys(n + 1, 3000, 'absent')];
      const lines = `${present.join('\n')}\n`;
      const probeLines = `${probes.join('\n')}\n`;

      it("reads bloom's file with bloom's answers and facts (library, info, check)", async () => {
        const dir = cli.tempDir();
        const theirs = join(dir, 'theirs.bloom');
        expect(bloom(['create', '-n', String(n), '-p', String(p), theirs]).code).toBe(0);
        expect(bloom(['insert', theirs], lines).code).toBe(0);
        const expected = bloom(['check', theirs], probeLines).stdout;
        const facts = show(theirs);
        // The library, probe by probe.
        const filter = DcsoBloomFilter.fromDcso(readFileSync(theirs));
        const selected = probes.filter((k) => filter.has(k));
        expect(selected.map((k) => `${k}\n`).join('')).toBe(expected);
        for (const k of present) expect(filter.has(k)).toBe(true);
        expect([filter.bitSize, filter.hashes, filter.estimatedCount()]).toEqual([
          facts.bits,
          facts.hashes,
          facts.present,
        ]);
        // The command: check prints the same lines; info says the same facts.
        const checked = await cli.run(['check', theirs], { input: probeLines });
        expect(checked.stderr).toBe('');
        expect(checked.stdout.toString('utf8')).toBe(expected);
        const info = await cli.run(['info', '--json', theirs]);
        expect(JSON.parse(info.stdout.toString('utf8'))).toMatchObject({
          format: 'DCSO bloom',
          type: 'dcso',
          bits: facts.bits,
          hashes: facts.hashes,
          estimatedCount: facts.present,
          capacity: n,
        });
        // convert to the native format and back: the same bytes as bloom wrote.
        const native = join(dir, 'native.blmk');
        const back = join(dir, 'back.bloom');
        expect((await cli.run(['convert', theirs, native, '--to', 'native'])).code).toBe(0);
        expect((await cli.run(['convert', native, back, '--to', 'dcso'])).code).toBe(0);
        expect(Buffer.compare(readFileSync(back), readFileSync(theirs))).toBe(0);
      });

      it('writes the file bloom writes, and bloom reads it with the same answers', async () => {
        const dir = cli.tempDir();
        const theirs = join(dir, 'theirs.bloom');
        const ours = join(dir, 'ours.bloom');
        bloom(['create', '-n', String(n), '-p', String(p), theirs]);
        bloom(['insert', theirs], lines);
        const made = await cli.run([
          'create',
          '--type',
          'dcso',
          '-n',
          String(n),
          '-p',
          String(p),
          ours,
        ]);
        expect(made.code).toBe(0);
        // `insert` is DCSO's verb; bloomkit takes it as `add`.
        const inserted = await cli.run(['insert', ours], { input: lines });
        expect([inserted.code, inserted.stderr]).toEqual([0, '']);
        expect(Buffer.compare(readFileSync(ours), readFileSync(theirs))).toBe(0);
        const expected = bloom(['check', theirs], probeLines).stdout;
        expect(bloom(['check', ours], probeLines).stdout).toBe(expected);
        expect(show(ours)).toEqual(show(theirs));
        // The library's own writer, too.
        const lib = DcsoBloomFilter.create({ capacity: n, fpp: p });
        for (const k of present) lib.add(k);
        const libFile = join(dir, 'lib.bloom');
        writeFileSync(libFile, lib.toDcso());
        expect(bloom(['check', libFile], probeLines).stdout).toBe(expected);
        expect(show(libFile).present).toBe(show(theirs).present);
      });
    });
  }

  it("keeps bloom's attached data through add, and bloom's join matches merge", async () => {
    const dir = cli.tempDir();
    const a = join(dir, 'a.bloom');
    const b = join(dir, 'b.bloom');
    for (const f of [a, b]) bloom(['create', '-n', '500', '-p', '0.01', f]);
    bloom(['insert', a], 'one\ntwo\n');
    bloom(['insert', b], 'three\n');
    bloom(['set-data', a], 'owner: team x\n');
    expect((await cli.run(['add', a], { input: 'four\n' })).code).toBe(0);
    expect(bloom(['get-data', a]).stdout).toBe('owner: team x\n');
    expect(bloom(['check', a], 'one\nfour\nfive\n').stdout).toBe('one\nfour\n');
    // bloom join adds b into a copy; bloomkit merge writes the union in the inputs' format.
    const joined = join(dir, 'joined.bloom');
    const merged = join(dir, 'merged.bloom');
    writeFileSync(joined, readFileSync(a));
    expect(bloom(['join', joined, b]).code).toBe(0);
    expect((await cli.run(['merge', merged, a, b])).code).toBe(0);
    expect(Buffer.compare(readFileSync(merged), readFileSync(joined))).toBe(0);
  });

  it('reads and writes back `bloom --gzip` files; a cut gzip file is refused in one line', async () => {
    const dir = cli.tempDir();
    const file = join(dir, 'gz.bloom');
    bloom(['--gzip', 'create', '-n', '2000', '-p', '0.01', file]);
    const present = keys(7, 1500, 'gz');
    const probes = `${[...present.slice(0, 100), ...keys(8, 1000, 'no')].join('\n')}\n`;
    bloom(['--gzip', 'insert', file], `${present.slice(0, 1000).join('\n')}\n`);
    const info = await cli.run(['info', '--json', file]);
    expect(JSON.parse(info.stdout.toString('utf8'))).toMatchObject({
      format: 'DCSO bloom (gzip)',
      estimatedCount: show(file, true).present,
    });
    const before = bloom(['--gzip', 'check', file], probes).stdout;
    expect((await cli.run(['check', file], { input: probes })).stdout.toString('utf8')).toBe(
      before,
    );
    // bloomkit adds the rest and writes gzip again; bloom reads it and agrees.
    const added = await cli.run(['insert', file], { input: `${present.slice(1000).join('\n')}\n` });
    expect([added.code, added.stderr]).toEqual([0, '']);
    expect(readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const after = bloom(['--gzip', 'check', file], probes).stdout;
    expect((await cli.run(['check', file], { input: probes })).stdout.toString('utf8')).toBe(after);
    const facts = JSON.parse((await cli.run(['info', '--json', file])).stdout.toString('utf8'));
    expect(facts.estimatedCount).toBe(show(file, true).present);
    const cut = join(dir, 'cut.bloom');
    const whole = readFileSync(file);
    writeFileSync(cut, whole.subarray(0, whole.length >> 1));
    const r = await cli.run(['check', cut], { input: 'x\n' });
    expect([r.code, r.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(r.stderr).toContain('damaged gzip data');
  });

  it('refuses a file cut short, as bloom does, with one line naming it', async () => {
    const dir = cli.tempDir();
    const whole = join(dir, 'whole.bloom');
    bloom(['create', '-n', '1000', '-p', '0.01', whole]);
    bloom(['insert', whole], 'apple\n');
    const bytes = readFileSync(whole);
    for (const length of [0, 20, 47, 48, 100, bytes.length - 1]) {
      const cut = join(dir, `cut-${length}.bloom`);
      writeFileSync(cut, bytes.subarray(0, length));
      expect(bloom(['check', cut], 'apple\n').code, `bloom on ${length} bytes`).not.toBe(0);
      const r = await cli.run(['check', cut], { input: 'apple\n' });
      expect(r.code, `${length} bytes`).toBe(2);
      expect(r.stdout.length).toBe(0);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(cut);
      if (length >= 48) expect(r.stderr).toContain('truncated');
      if (length >= 48) {
        expect(() => DcsoBloomFilter.fromDcso(bytes.subarray(0, length))).toThrow(FormatError);
      }
    }
  });
});
