/**
 * The `bloomkit` command: every command, exit statuses, gzip, NUL records, fields, number
 * funnels, JSON output, and bad files. Filters it writes are compared bit for bit with the
 * library's filters built from the same keys. The command runs in this process (the build's
 * `main()` with in-memory streams), except in 'the built command, as a process', which runs it
 * as a subprocess for what only a process shows: its `#!` line and exit status, standard input
 * as fd 0 (a pipe, a regular file), a reader that goes away (`| head`), and the filter-file
 * commands end to end (create, add, check, convert; info's exit status). One process per point
 * (each costs a Node start and a load of the command, about 0.3 s of CPU): what differs between
 * cases of one point (a plain and a gzip regular file) is main()'s work, checked in this process
 * above.
 */

import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlockedBloomFilter,
  BloomFilter,
  bloomSize,
  falsePositiveRate,
  fromBytes,
  optimalNumOfHashFunctions,
  SplitBlockBloomFilter,
} from '../src/index.js';
import { expectBytes } from './support/bytes.js';
import {
  type BuiltCli,
  buildCli,
  builtModule,
  type InProcessCli,
  inProcessCli,
  type RunOptions,
} from './support/cli.js';
import { keys } from './support/random.js';

let cli: InProcessCli;
let dir: string;
const words = keys('https://example.com/page/', 3000);
const absent = keys('https://absent.example.org/', 3000);

beforeAll(() => {
  cli = inProcessCli();
  dir = cli.tempDir();
  writeFileSync(join(dir, 'words.txt'), `${words.join('\n')}\n`);
  writeFileSync(
    join(dir, 'mixed.txt'),
    `${[...words.slice(0, 100), ...absent.slice(0, 100)].join('\n')}\n`,
  );
});

afterAll(() => cli?.dispose());

const path = (name: string) => join(dir, name);
const lines = (b: Buffer) => b.toString('utf8').split('\n').slice(0, -1);

/** The words of a classic filter's bits, for comparisons across funnels (same hash input). */
function bitsOf(file: string): Uint32Array {
  const f = fromBytes(new Uint8Array(readFileSync(file))) as BloomFilter;
  return f.bits.data;
}

/** Standard output (as text) and standard error of `bloomkit ...args`, run in this process. */
const out = async (args: readonly string[], options?: RunOptions) =>
  (await cli.run(args, options)).stdout.toString();
const err = async (args: readonly string[], options?: RunOptions) =>
  (await cli.run(args, options)).stderr;

function ok(r: { code: number | null; stderr: string }, code = 0): void {
  expect(r.stderr.includes('    at '), r.stderr).toBe(false);
  expect(r.code, r.stderr).toBe(code);
}

describe('help', () => {
  it('lists every command of the table, and documents each', async () => {
    const { COMMANDS } = await builtModule('commands');
    const r = await cli.run(['help']);
    ok(r);
    for (const c of COMMANDS) {
      expect(r.stdout.toString()).toContain(`  ${c.name} `);
      const one = await cli.run(['help', c.name]);
      ok(one);
      // The usage line is wrapped to 80 columns: compare with runs of whitespace as one space.
      expect(one.stdout.toString().replace(/\s+/g, ' ')).toContain(`Usage: bloomkit ${c.usage}`);
      // `main` loads each command on its own (commands/lazy.ts): every one of the table is there.
      const own = await cli.run([c.name, '--help']);
      ok(own);
      expect(own.stdout.toString()).toBe(one.stdout.toString());
    }
    const dedupHelp = await out(['help', 'dedup']);
    expect(await out(['dedup', '--help'])).toBe(dedupHelp);
  });

  it('refuses an unknown command, an unknown option and missing arguments with status 2', async () => {
    const unknown = await cli.run(['frobnicate']);
    ok(unknown, 2);
    expect(unknown.stderr).toContain('no command "frobnicate"');
    const option = await cli.run(['info', '--bogus', 'x']);
    ok(option, 2);
    expect(option.stderr).toContain("Unknown option '--bogus'");
    ok(await cli.run(['create']), 2);
    expect(await err(['create', path('x.bloom'), '-n', '10'])).toContain('-p FPP');
    expect(await err(['create', path('x.bloom'), '-n', 'ten', '-p', '0.01'])).toContain(
      '-n must be a positive whole number',
    );
    expect(await err(['create', path('x.bloom'), '-n', '10', '-p', '1.5'])).toContain(
      '-p must be a probability in (0, 1)',
    );
  });
});

describe('create, add, check', () => {
  beforeAll(async () => {
    ok(await cli.run(['create', path('w.bloom'), '-n', '3000', '-p', '0.01']));
    ok(await cli.run(['add', path('w.bloom'), path('words.txt')]));
  });

  it('writes the bits the library writes for the same keys (Guava sizing and hashing)', async () => {
    const ref = BloomFilter.create({ capacity: 3000, fpp: 0.01 });
    for (const w of words) ref.add(w);
    expectBytes(readFileSync(path('w.bloom')), Buffer.from(ref.toBytes()));
    const size = bloomSize(3000, 0.01);
    const info = JSON.parse(await out(['info', '--json', path('w.bloom')]));
    expect(info).toMatchObject({
      type: 'classic',
      funnel: 'string',
      bits: size.bits,
      hashes: size.hashes,
    });
    expect(info.bitsSet).toBe(ref.bitCount);
  });

  it('check prints the records that may be present, in order, and exits like grep', async () => {
    const r = await cli.run(['check', path('w.bloom'), path('mixed.txt')]);
    ok(r);
    const ref = BloomFilter.create({ capacity: 3000, fpp: 0.01 });
    for (const w of words) ref.add(w);
    const all = [...words.slice(0, 100), ...absent.slice(0, 100)];
    expect(lines(r.stdout)).toEqual(all.filter((k) => ref.has(k)));
    const inverted = await cli.run(['check', '-v', path('w.bloom'), path('mixed.txt')]);
    expect(lines(inverted.stdout)).toEqual(all.filter((k) => !ref.has(k)));
    const count = await cli.run(['check', '-c', path('w.bloom'), path('mixed.txt')]);
    expect(count.stdout.toString()).toBe(`${all.filter((k) => ref.has(k)).length}\n`);
    const json = await cli.run(['check', '-c', '--json', path('w.bloom'), path('mixed.txt')]);
    expect(JSON.parse(json.stdout.toString())).toEqual({
      records: 200,
      selected: all.filter((k) => ref.has(k)).length,
    });
    const quiet = await cli.run(['check', '-q', path('w.bloom')], { input: `${words[5]}\n` });
    ok(quiet, 0);
    expect(quiet.stdout.length).toBe(0);
    const none = await cli.run(['check', path('w.bloom')], {
      input: 'certainly-not-added-\u00e9\n',
    });
    ok(none, 1);
    expect(none.stdout.length).toBe(0);
  });

  it('reads standard input as a pipe, as a regular file, and gzip in both (magic, not name)', async () => {
    const text = readFileSync(path('words.txt'));
    writeFileSync(path('words.data'), gzipSync(text));
    const ref = bitsOf(path('w.bloom'));
    for (const [name, opts, args] of [
      ['pipe', { input: text }, []],
      ['file', { stdinFile: path('words.txt') }, []],
      ['gzip pipe', { input: gzipSync(text) }, []],
      ['gzip file stdin', { stdinFile: path('words.data') }, []],
      ['gzip file', {}, [path('words.data')]],
      ['dash', { input: text }, ['-']],
    ] as const) {
      const file = path(`in-${name.replace(/ /g, '-')}.bloom`);
      ok(await cli.run(['create', file, '-n', '3000', '-p', '0.01']));
      ok(await cli.run(['add', file, ...args], opts));
      expect(bitsOf(file), name).toEqual(ref);
    }
    // A truncated gzip stream is an error naming the input, and the filter is left as it was.
    const cut = gzipSync(text).subarray(0, 200);
    writeFileSync(path('cut.gz'), cut);
    const before = readFileSync(path('w.bloom'));
    const r = await cli.run(['add', path('w.bloom'), path('cut.gz')]);
    ok(r, 2);
    expect(r.stderr).toContain('cut.gz');
    expectBytes(readFileSync(path('w.bloom')), before);
  });

  it('hashes invalid UTF-8, a 10,000,000-character line, CRLF and empty lines as bytes', async () => {
    const bad = Buffer.from([0x61, 0xff, 0xfe, 0x80, 0x62]); // not UTF-8
    const long = Buffer.alloc(10_000_000, 0x78);
    const input = Buffer.concat([bad, Buffer.from('\n'), long, Buffer.from('\nplain\r\n\nlast')]);
    writeFileSync(path('odd.txt'), input);
    ok(await cli.run(['create', path('odd.bloom'), '-n', '100', '-p', '0.001']));
    ok(await cli.run(['add', path('odd.bloom'), path('odd.txt')]));
    // The same bits as a 'bytes' filter given the raw bytes (UTF-8 strings hash as their bytes).
    const ref = BloomFilter.create({ capacity: 100, fpp: 0.001, funnel: 'bytes' });
    for (const k of [bad, long, Buffer.from('plain'), Buffer.alloc(0), Buffer.from('last')]) {
      ref.add(new Uint8Array(k));
    }
    expect(bitsOf(path('odd.bloom'))).toEqual(ref.bits.data);
    // check gives every record back byte for byte (the CR printed as it was read).
    const r = await cli.run(['check', path('odd.bloom'), path('odd.txt')]);
    ok(r);
    expect(r.stdout.equals(Buffer.concat([input, Buffer.from('\n')]))).toBe(true);
  });

  it('-0 splits at NUL bytes; -d/-f take fields as the key and print whole records', async () => {
    ok(await cli.run(['create', path('nul.bloom'), '-n', '100', '-p', '0.01']));
    ok(await cli.run(['add', '-0', path('nul.bloom')], { input: 'a\nb\0c d\0' }));
    const ref = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    ref.add('a\nb');
    ref.add('c d');
    expect(bitsOf(path('nul.bloom'))).toEqual(ref.bits.data);
    expect(await out(['check', '-0', path('nul.bloom')], { input: 'x\0c d\0' })).toBe('c d\0');

    const csv =
      'id,url,score\n1,https://a.example/,5\n2,https://b.example/,7\n3,https://a.example/,9\n';
    ok(await cli.run(['create', path('f.bloom'), '-n', '100', '-p', '0.001']));
    ok(await cli.run(['add', path('f.bloom')], { input: 'https://a.example/\n' }));
    const r = await cli.run(['check', '-d', ',', '-f', '2', path('f.bloom')], { input: csv });
    expect(r.stdout.toString()).toBe('1,https://a.example/,5\n3,https://a.example/,9\n');
    // Several fields: joined by the delimiter.
    ok(await cli.run(['create', path('f2.bloom'), '-n', '100', '-p', '0.001']));
    ok(await cli.run(['add', path('f2.bloom')], { input: '2\t7\n' }));
    const two = await cli.run(['check', '-d', ',', '-f', '1,3', path('f2.bloom')], {
      input: csv.replaceAll(',', '\t').replaceAll('\t', ','),
    });
    expect(two.stdout.toString()).toBe('');
    const tab = await cli.run(['check', '-f', '1,3', path('f2.bloom')], {
      input: csv.replaceAll(',', '\t'),
    });
    expect(tab.stdout.toString()).toBe('2\thttps://b.example/\t7\n');
    ok(await cli.run(['check', '-f', '0', path('f.bloom')], { input: 'x\n' }), 2);
  });

  it('--funnel long reads decimal keys as Guava longs; a bad number names the line', async () => {
    ok(await cli.run(['create', path('l.bloom'), '-n', '1000', '-p', '0.01', '--funnel', 'long']));
    ok(await cli.run(['add', path('l.bloom')], { input: '42\n-7\n9223372036854775807\n' }));
    const ref = BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'long' });
    for (const k of [42n, -7n, 9223372036854775807n]) ref.add(k);
    expectBytes(readFileSync(path('l.bloom')), Buffer.from(ref.toBytes()));
    const r = await cli.run(['add', path('l.bloom')], { input: '1\n2\nfour\n' });
    ok(r, 2);
    expect(r.stderr).toContain('standard input: line 3: "four" is not a decimal integer');
    const big = await cli.run(['add', path('l.bloom')], { input: '9223372036854775808\n' });
    expect(big.stderr).toContain('outside [-2^63, 2^63)');
  });

  it('create makes every type; add and check work on each', async () => {
    for (const type of ['classic', 'blocked', 'split-block', 'counting', 'scalable', 'cuckoo']) {
      const file = path(`t-${type}.bloom`);
      ok(await cli.run(['create', file, '-n', '5000', '-p', '0.01', '--type', type]));
      ok(await cli.run(['add', file, path('words.txt')]));
      const r = await cli.run(['check', '-c', file, path('words.txt')]);
      expect(r.stdout.toString(), type).toBe(`${words.length}\n`);
      const info = JSON.parse(await out(['info', '--json', file]));
      expect(info.type).toBe(type);
    }
    const blocked = fromBytes(new Uint8Array(readFileSync(path('t-blocked.bloom'))));
    expect(blocked).toBeInstanceOf(BlockedBloomFilter);
    ok(await cli.run(['create', path('t-classic.bloom'), '-n', '5', '-p', '0.5']), 2);
    ok(await cli.run(['create', path('t-classic.bloom'), '-n', '5', '-p', '0.5', '--force']));
    expect(
      await err(['create', path('z.bloom'), '-n', '5', '-p', '0.1', '--type', 'magic']),
    ).toContain(
      '--type must be one of classic, counting, scalable, cuckoo, blocked, split-block, dcso, got',
    );
  });
  it('add that changes nothing leaves the file untouched; one new key rewrites it', async () => {
    /** Whether `bloomkit add file` with `input` left the file itself in place (not replaced). */
    const inPlace = async (file: string, input: string) => {
      // A second name holds the file's inode, so that a rewrite cannot be given the same one.
      linkSync(file, `${file}.held`);
      ok(await cli.run(['add', file], { input }));
      const same = statSync(file).ino === statSync(`${file}.held`).ino;
      unlinkSync(`${file}.held`);
      return same;
    };
    for (const type of ['classic', 'blocked', 'split-block', 'counting']) {
      const file = path(`same-${type}.bloom`);
      ok(await cli.run(['create', file, '-n', '1000', '-p', '0.01', '-t', type]));
      ok(await cli.run(['add', file], { input: 'a\nb\n' }));
      const bytes = readFileSync(file);
      expect(await inPlace(file, ''), type).toBe(true); // nothing read
      // Every key there already (a counting filter counts them again: it changes).
      expect(await inPlace(file, 'b\na\n'), type).toBe(type !== 'counting');
      if (type !== 'counting') expectBytes(readFileSync(file), bytes);
      expect(await inPlace(file, 'a\nc\n'), type).toBe(false);
      ok(await cli.run(['check', file], { input: 'c\n' }));
    }
  });

  it('create keeps the funnel it was given, and add then hashes the records with it', async () => {
    for (const type of ['classic', 'blocked', 'split-block', 'counting']) {
      const file = path(`f-${type}.bloom`);
      ok(
        await cli.run([
          'create',
          file,
          '-n',
          '5000',
          '-p',
          '0.01',
          '-t',
          type,
          '--funnel',
          'bytes',
        ]),
      );
      expect(JSON.parse(await out(['info', '--json', file])).funnel, type).toBe('bytes');
      ok(await cli.run(['add', file, path('words.txt')]));
      const r = await cli.run(['check', '-c', file, path('words.txt')]);
      expect(r.stdout.toString(), type).toBe(`${words.length}\n`);
    }
  });
});

describe('merge, convert, info, calc', () => {
  it('merge unions (and intersects) filters of one shape and refuses others', async () => {
    for (const [name, input] of [
      ['a', 'x\ny\n'],
      ['b', 'y\nz\n'],
    ] as const) {
      ok(await cli.run(['create', path(`m-${name}.bloom`), '-n', '100', '-p', '0.01']));
      ok(await cli.run(['add', path(`m-${name}.bloom`)], { input }));
    }
    ok(await cli.run(['merge', path('m-u.bloom'), path('m-a.bloom'), path('m-b.bloom')]));
    expect(await out(['check', path('m-u.bloom')], { input: 'x\ny\nz\n' })).toBe('x\ny\nz\n');
    ok(
      await cli.run([
        'merge',
        '--intersect',
        path('m-i.bloom'),
        path('m-a.bloom'),
        path('m-b.bloom'),
      ]),
    );
    const both = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    both.add('y');
    const a = fromBytes(new Uint8Array(readFileSync(path('m-a.bloom')))) as BloomFilter;
    const b = fromBytes(new Uint8Array(readFileSync(path('m-b.bloom')))) as BloomFilter;
    expect(bitsOf(path('m-i.bloom'))).toEqual(a.clone().intersect(b).bits.data);
    ok(await cli.run(['create', path('m-c.bloom'), '-n', '1000', '-p', '0.01']));
    const r = await cli.run(['merge', path('m-x.bloom'), path('m-a.bloom'), path('m-c.bloom')]);
    ok(r, 2);
    expect(r.stderr).toContain('m-c.bloom');
  });

  it('convert writes Guava bytes and Parquet bitsets that read back equal', async () => {
    ok(await cli.run(['convert', path('w.bloom'), path('w.guava'), '--to', 'guava']));
    const native = fromBytes(new Uint8Array(readFileSync(path('w.bloom')))) as BloomFilter;
    const guava = BloomFilter.fromGuava(new Uint8Array(readFileSync(path('w.guava'))));
    expect(guava.equals(native)).toBe(true);
    // info and check read the Guava file too, detected from its bytes.
    const info = JSON.parse(await out(['info', '--json', path('w.guava')]));
    expect(info).toMatchObject({
      format: 'Guava writeTo',
      bits: native.bitSize,
      hashes: native.hashes,
    });
    expect(await out(['check', '-c', path('w.guava'), path('words.txt')])).toBe(
      `${words.length}\n`,
    );
    ok(await cli.run(['convert', path('w.guava'), path('w2.bloom'), '--to', 'native']));
    expectBytes(readFileSync(path('w2.bloom')), readFileSync(path('w.bloom')));
    ok(
      await cli.run([
        'convert',
        path('t-split-block.bloom'),
        path('sb.parquet-bloom'),
        '--to',
        'parquet-bitset',
      ]),
    );
    const sb = fromBytes(
      new Uint8Array(readFileSync(path('t-split-block.bloom'))),
    ) as SplitBlockBloomFilter;
    const back = SplitBlockBloomFilter.fromParquet(
      new Uint8Array(readFileSync(path('sb.parquet-bloom'))),
    );
    expect(back.bits.data).toEqual(sb.bits.data);
    const wrong = await cli.run([
      'convert',
      path('t-blocked.bloom'),
      path('x.guava'),
      '--to',
      'guava',
    ]);
    ok(wrong, 2);
    expect(wrong.stderr).toContain("Guava's format holds a classic Bloom filter");
    ok(await cli.run(['convert', path('w.bloom'), path('x'), '--to', 'zip']), 2);
  });

  it('calc solves any two of n, p, m, k as Guava sizes', async () => {
    const size = bloomSize(1_000_000, 0.01);
    const r = JSON.parse(await out(['calc', '-n', '1e6', '-p', '1%', '--json']));
    expect(r).toMatchObject({ n: 1_000_000, m: size.bits, k: size.hashes });
    expect(r.types.map((t: { type: string }) => t.type)).toEqual([
      'classic',
      'counting',
      'cuckoo',
      'blocked',
      'split-block',
      'binary-fuse',
    ]);
    const fromMk = JSON.parse(await out(['calc', '-m', '1MiB', '-k', '7', '--json']));
    expect(fromMk.m).toBe(8 * 2 ** 20);
    expect(fromMk.n).toBe(Math.floor((8 * 2 ** 20 * Math.LN2) / 7));
    // (m, p): the most keys whose rate with Guava's k for them stays at most p.
    const fromMp = JSON.parse(await out(['calc', '-m', '9600', '-p', '0.01', '--json']));
    const rateAt = (n: number) => falsePositiveRate(n, 9600, optimalNumOfHashFunctions(n, 9600));
    expect(rateAt(fromMp.n)).toBeLessThanOrEqual(0.01);
    expect(rateAt(fromMp.n + 1)).toBeGreaterThan(0.01);
    ok(await cli.run(['calc', '-n', '5']), 2);
    ok(await cli.run(['calc', '-p', '0.1', '-k', '3']), 2);
  });
});

describe('bad files', () => {
  it('names a missing file, a directory, an empty file, a text file and a damaged filter', async () => {
    const missing = await cli.run(['info', path('nope.bloom')]);
    ok(missing, 2);
    expect(missing.stderr).toBe(`bloomkit info: ${path('nope.bloom')}: no such file\n`);
    expect((await cli.run(['check', path('nope.bloom')], { input: 'x\n' })).code).toBe(2);
    expect(await err(['add', path('w.bloom'), path('nope.txt')])).toContain(
      `${path('nope.txt')}: no such file`,
    );
    expect(await err(['info', dir])).toContain('is a directory');
    writeFileSync(path('empty.bloom'), '');
    expect(await err(['info', path('empty.bloom')])).toContain('the file is empty');
    const text = await cli.run(['check', path('words.txt')], { input: 'x\n' });
    ok(text, 2);
    expect(text.stderr).toContain('not a filter file bloomkit reads');
    const bytes = readFileSync(path('w.bloom'));
    bytes[100] = bytes[100]! ^ 0x01;
    writeFileSync(path('bad.bloom'), bytes);
    const bad = await cli.run(['check', path('bad.bloom')], { input: 'x\n' });
    ok(bad, 2);
    expect(bad.stderr).toMatch(/bad\.bloom: damaged filter file: .*(CRC|checksum)/i);
    const cut = readFileSync(path('w.bloom')).subarray(0, 50);
    writeFileSync(path('cut.bloom'), cut);
    expect(await err(['info', path('cut.bloom')])).toContain('cut.bloom: damaged filter file');
  });

  it('an empty input adds nothing and selects nothing', async () => {
    writeFileSync(path('none.txt'), '');
    const before = readFileSync(path('w.bloom'));
    ok(await cli.run(['add', path('w.bloom'), path('none.txt')]));
    expectBytes(readFileSync(path('w.bloom')), before);
    ok(await cli.run(['check', path('w.bloom'), path('none.txt')]), 1);
    const d = await cli.run(['dedup', path('none.txt')]);
    ok(d);
    expect(d.stdout.length).toBe(0);
  });
});

describe('the built command, as a process', () => {
  let bin: BuiltCli;
  /** The library's filter of `words` as `create -n 3000 -p 0.01` and `add` make it. */
  const reference = () => {
    const ref = BloomFilter.create({ capacity: 3000, fpp: 0.01 });
    for (const w of words) ref.add(w);
    return ref;
  };
  /** Runs `args` as a process and in this process: the same status, output and errors. */
  const same = async (args: readonly string[], input?: string, code = 0) => {
    const proc = bin.run(args, { input });
    ok(proc, code);
    const here = await cli.run(args, { input });
    expect(proc.stderr, args.join(' ')).toBe(here.stderr);
    expect(proc.stdout.equals(here.stdout), args.join(' ')).toBe(true);
    return proc;
  };

  beforeAll(async () => {
    bin = await buildCli();
    ok(bin.run(['create', path('p.bloom'), '-n', '3000', '-p', '0.01']));
    // Standard input (fd 0) as a pipe.
    ok(bin.run(['add', path('p.bloom')], { input: readFileSync(path('words.txt')) }));
  });

  afterAll(() => bin?.dispose());

  it('runs by its #! line and prints what main() prints', async () => {
    const direct = spawnSync(bin.bin, ['help'], { env: { ...process.env, BLOOMKIT_DEBUG: '' } });
    expect(direct.status, String(direct.stderr)).toBe(0);
    expect(direct.stdout.equals((await cli.run(['help'])).stdout)).toBe(true);
  });

  it('runs the filter-file commands end to end, writing the bits the library writes', async () => {
    const ref = reference();
    expectBytes(readFileSync(path('p.bloom')), Buffer.from(ref.toBytes()));
    const all = [...words.slice(0, 100), ...absent.slice(0, 100)];
    const check = await same(['check', path('p.bloom'), path('mixed.txt')]);
    expect(lines(check.stdout)).toEqual(all.filter((k) => ref.has(k)));
    ok(bin.run(['convert', path('p.bloom'), path('p.guava'), '--to', 'guava']));
    const guava = BloomFilter.fromGuava(new Uint8Array(readFileSync(path('p.guava'))));
    expect(guava.equals(ref)).toBe(true);
  });

  it('exits with the status main() returns, its error in one line on stderr', async () => {
    await same(['check', '-q', path('p.bloom')], 'certainly-not-added\n', 1);
    await same(['info', path('nope.bloom')], '', 2);
  });

  it('reads fd 0 as a regular file (gzip, found by its first bytes)', async () => {
    writeFileSync(path('p-words.gz'), gzipSync(readFileSync(path('words.txt'))));
    const file = path('p-in-gzip-file.bloom');
    ok(await cli.run(['create', file, '-n', '3000', '-p', '0.01']));
    ok(bin.run(['add', file], { stdinFile: path('p-words.gz') }));
    expect(bitsOf(file)).toEqual(reference().bits.data);
  });

  it('stops quietly, with status 0, when its reader goes away (| head)', async () => {
    // Every record selected: about 3.5 MB of output, far more than a pipe holds.
    writeFileSync(path('p-many.txt'), readFileSync(path('words.txt'), 'utf8').repeat(100));
    const child = bin.start(['check', path('p.bloom'), path('p-many.txt')]);
    child.stdin!.end();
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const [first] = (await once(child.stdout!, 'data')) as [Buffer];
    child.stdout!.destroy();
    const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
    expect(first.toString().startsWith(`${words[0]}\n`)).toBe(true);
    expect(err).toBe('');
    expect([code, signal]).toEqual([0, null]);
  });
});
