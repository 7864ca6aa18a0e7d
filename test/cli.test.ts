/**
 * The `bloomkit` command, run as a subprocess from its build: every command, exit statuses,
 * gzip, NUL records, fields, number funnels, JSON output, and bad files. Filters it writes are
 * compared bit for bit with the library's filters built from the same keys.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands/index.js';
import {
  BlockedBloomFilter,
  BloomFilter,
  bloomSize,
  fromBytes,
  SplitBlockBloomFilter,
} from '../src/index.js';
import { type BuiltCli, buildCli } from './support/cli.js';
import { keys } from './support/random.js';

let cli: BuiltCli;
let dir: string;
const words = keys('https://example.com/page/', 3000);
const absent = keys('https://absent.example.org/', 3000);

beforeAll(async () => {
  cli = await buildCli();
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

function ok(r: { code: number | null; stderr: string }, code = 0): void {
  expect(r.stderr.includes('    at '), r.stderr).toBe(false);
  expect(r.code, r.stderr).toBe(code);
}

describe('help', () => {
  it('lists every command of the table, and documents each', () => {
    const r = cli.run(['help']);
    ok(r);
    for (const c of COMMANDS) {
      expect(r.stdout.toString()).toContain(`  ${c.name} `);
      const one = cli.run(['help', c.name]);
      ok(one);
      expect(one.stdout.toString()).toContain(`Usage: bloomkit ${c.usage}`);
    }
    const dedupHelp = cli.run(['help', 'dedup']).stdout.toString();
    expect(cli.run(['dedup', '--help']).stdout.toString()).toBe(dedupHelp);
  });

  it('refuses an unknown command, an unknown option and missing arguments with status 2', () => {
    const unknown = cli.run(['frobnicate']);
    ok(unknown, 2);
    expect(unknown.stderr).toContain('no command "frobnicate"');
    const option = cli.run(['info', '--bogus', 'x']);
    ok(option, 2);
    expect(option.stderr).toContain("Unknown option '--bogus'");
    ok(cli.run(['create']), 2);
    expect(cli.run(['create', path('x.bloom'), '-n', '10']).stderr).toContain('-p FPP');
    expect(cli.run(['create', path('x.bloom'), '-n', 'ten', '-p', '0.01']).stderr).toContain(
      '-n must be a positive whole number',
    );
    expect(cli.run(['create', path('x.bloom'), '-n', '10', '-p', '1.5']).stderr).toContain(
      '-p must be a probability in (0, 1)',
    );
  });
});

describe('create, add, check', () => {
  beforeAll(() => {
    ok(cli.run(['create', path('w.bloom'), '-n', '3000', '-p', '0.01']));
    ok(cli.run(['add', path('w.bloom'), path('words.txt')]));
  });

  it('writes the bits the library writes for the same keys (Guava sizing and hashing)', () => {
    const ref = BloomFilter.create({ capacity: 3000, fpp: 0.01 });
    for (const w of words) ref.add(w);
    expect(readFileSync(path('w.bloom'))).toEqual(Buffer.from(ref.toBytes()));
    const size = bloomSize(3000, 0.01);
    const info = JSON.parse(cli.run(['info', '--json', path('w.bloom')]).stdout.toString());
    expect(info).toMatchObject({
      type: 'classic',
      funnel: 'string',
      bits: size.bits,
      hashes: size.hashes,
    });
    expect(info.bitsSet).toBe(ref.bitCount);
  });

  it('check prints the records that may be present, in order, and exits like grep', () => {
    const r = cli.run(['check', path('w.bloom'), path('mixed.txt')]);
    ok(r);
    const ref = BloomFilter.create({ capacity: 3000, fpp: 0.01 });
    for (const w of words) ref.add(w);
    const all = [...words.slice(0, 100), ...absent.slice(0, 100)];
    expect(lines(r.stdout)).toEqual(all.filter((k) => ref.has(k)));
    const inverted = cli.run(['check', '-v', path('w.bloom'), path('mixed.txt')]);
    expect(lines(inverted.stdout)).toEqual(all.filter((k) => !ref.has(k)));
    const count = cli.run(['check', '-c', path('w.bloom'), path('mixed.txt')]);
    expect(count.stdout.toString()).toBe(`${all.filter((k) => ref.has(k)).length}\n`);
    const json = cli.run(['check', '-c', '--json', path('w.bloom'), path('mixed.txt')]);
    expect(JSON.parse(json.stdout.toString())).toEqual({
      records: 200,
      selected: all.filter((k) => ref.has(k)).length,
    });
    const quiet = cli.run(['check', '-q', path('w.bloom')], { input: `${words[5]}\n` });
    ok(quiet, 0);
    expect(quiet.stdout.length).toBe(0);
    const none = cli.run(['check', path('w.bloom')], { input: 'certainly-not-added-\u00e9\n' });
    ok(none, 1);
    expect(none.stdout.length).toBe(0);
  });

  it('reads standard input as a pipe, as a regular file, and gzip in both (magic, not name)', () => {
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
      ok(cli.run(['create', file, '-n', '3000', '-p', '0.01']));
      ok(cli.run(['add', file, ...args], opts));
      expect(bitsOf(file), name).toEqual(ref);
    }
    // A truncated gzip stream is an error naming the input, and the filter is left as it was.
    const cut = gzipSync(text).subarray(0, 200);
    writeFileSync(path('cut.gz'), cut);
    const before = readFileSync(path('w.bloom'));
    const r = cli.run(['add', path('w.bloom'), path('cut.gz')]);
    ok(r, 2);
    expect(r.stderr).toContain('cut.gz');
    expect(readFileSync(path('w.bloom'))).toEqual(before);
  });

  it('hashes invalid UTF-8, a 10,000,000-character line, CRLF and empty lines as bytes', () => {
    const bad = Buffer.from([0x61, 0xff, 0xfe, 0x80, 0x62]); // not UTF-8
    const long = Buffer.alloc(10_000_000, 0x78);
    const input = Buffer.concat([bad, Buffer.from('\n'), long, Buffer.from('\nplain\r\n\nlast')]);
    writeFileSync(path('odd.txt'), input);
    ok(cli.run(['create', path('odd.bloom'), '-n', '100', '-p', '0.001']));
    ok(cli.run(['add', path('odd.bloom'), path('odd.txt')]));
    // The same bits as a 'bytes' filter given the raw bytes (UTF-8 strings hash as their bytes).
    const ref = BloomFilter.create({ capacity: 100, fpp: 0.001, funnel: 'bytes' });
    for (const k of [bad, long, Buffer.from('plain'), Buffer.alloc(0), Buffer.from('last')]) {
      ref.add(new Uint8Array(k));
    }
    expect(bitsOf(path('odd.bloom'))).toEqual(ref.bits.data);
    // check gives every record back byte for byte (the CR printed as it was read).
    const r = cli.run(['check', path('odd.bloom'), path('odd.txt')]);
    ok(r);
    expect(r.stdout.equals(Buffer.concat([input, Buffer.from('\n')]))).toBe(true);
  });

  it('-0 splits at NUL bytes; -d/-f take fields as the key and print whole records', () => {
    ok(cli.run(['create', path('nul.bloom'), '-n', '100', '-p', '0.01']));
    ok(cli.run(['add', '-0', path('nul.bloom')], { input: 'a\nb\0c d\0' }));
    const ref = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    ref.add('a\nb');
    ref.add('c d');
    expect(bitsOf(path('nul.bloom'))).toEqual(ref.bits.data);
    expect(
      cli.run(['check', '-0', path('nul.bloom')], { input: 'x\0c d\0' }).stdout.toString(),
    ).toBe('c d\0');

    const csv =
      'id,url,score\n1,https://a.example/,5\n2,https://b.example/,7\n3,https://a.example/,9\n';
    ok(cli.run(['create', path('f.bloom'), '-n', '100', '-p', '0.001']));
    ok(cli.run(['add', path('f.bloom')], { input: 'https://a.example/\n' }));
    const r = cli.run(['check', '-d', ',', '-f', '2', path('f.bloom')], { input: csv });
    expect(r.stdout.toString()).toBe('1,https://a.example/,5\n3,https://a.example/,9\n');
    // Several fields: joined by the delimiter.
    ok(cli.run(['create', path('f2.bloom'), '-n', '100', '-p', '0.001']));
    ok(cli.run(['add', path('f2.bloom')], { input: '2\t7\n' }));
    const two = cli.run(['check', '-d', ',', '-f', '1,3', path('f2.bloom')], {
      input: csv.replaceAll(',', '\t').replaceAll('\t', ','),
    });
    expect(two.stdout.toString()).toBe('');
    const tab = cli.run(['check', '-f', '1,3', path('f2.bloom')], {
      input: csv.replaceAll(',', '\t'),
    });
    expect(tab.stdout.toString()).toBe('2\thttps://b.example/\t7\n');
    ok(cli.run(['check', '-f', '0', path('f.bloom')], { input: 'x\n' }), 2);
  });

  it('--funnel long reads decimal keys as Guava longs; a bad number names the line', () => {
    ok(cli.run(['create', path('l.bloom'), '-n', '1000', '-p', '0.01', '--funnel', 'long']));
    ok(cli.run(['add', path('l.bloom')], { input: '42\n-7\n9223372036854775807\n' }));
    const ref = BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'long' });
    for (const k of [42n, -7n, 9223372036854775807n]) ref.add(k);
    expect(readFileSync(path('l.bloom'))).toEqual(Buffer.from(ref.toBytes()));
    const r = cli.run(['add', path('l.bloom')], { input: '1\n2\nfour\n' });
    ok(r, 2);
    expect(r.stderr).toContain('standard input: line 3: "four" is not a decimal integer');
    const big = cli.run(['add', path('l.bloom')], { input: '9223372036854775808\n' });
    expect(big.stderr).toContain('outside [-2^63, 2^63)');
  });

  it('create makes every type; add and check work on each', () => {
    for (const type of ['classic', 'blocked', 'split-block', 'counting', 'scalable', 'cuckoo']) {
      const file = path(`t-${type}.bloom`);
      ok(cli.run(['create', file, '-n', '5000', '-p', '0.01', '--type', type]));
      ok(cli.run(['add', file, path('words.txt')]));
      const r = cli.run(['check', '-c', file, path('words.txt')]);
      expect(r.stdout.toString(), type).toBe(`${words.length}\n`);
      const info = JSON.parse(cli.run(['info', '--json', file]).stdout.toString());
      expect(info.type).toBe(type);
    }
    const blocked = fromBytes(new Uint8Array(readFileSync(path('t-blocked.bloom'))));
    expect(blocked).toBeInstanceOf(BlockedBloomFilter);
    ok(cli.run(['create', path('t-classic.bloom'), '-n', '5', '-p', '0.5']), 2);
    ok(cli.run(['create', path('t-classic.bloom'), '-n', '5', '-p', '0.5', '--force']));
    expect(
      cli.run(['create', path('z.bloom'), '-n', '5', '-p', '0.1', '--type', 'magic']).stderr,
    ).toContain('--type must be one of classic, blocked');
  });
});

describe('merge, convert, info, calc', () => {
  it('merge unions (and intersects) filters of one shape and refuses others', () => {
    for (const [name, input] of [
      ['a', 'x\ny\n'],
      ['b', 'y\nz\n'],
    ] as const) {
      ok(cli.run(['create', path(`m-${name}.bloom`), '-n', '100', '-p', '0.01']));
      ok(cli.run(['add', path(`m-${name}.bloom`)], { input }));
    }
    ok(cli.run(['merge', path('m-u.bloom'), path('m-a.bloom'), path('m-b.bloom')]));
    expect(cli.run(['check', path('m-u.bloom')], { input: 'x\ny\nz\n' }).stdout.toString()).toBe(
      'x\ny\nz\n',
    );
    ok(cli.run(['merge', '--intersect', path('m-i.bloom'), path('m-a.bloom'), path('m-b.bloom')]));
    const both = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    both.add('y');
    const a = fromBytes(new Uint8Array(readFileSync(path('m-a.bloom')))) as BloomFilter;
    const b = fromBytes(new Uint8Array(readFileSync(path('m-b.bloom')))) as BloomFilter;
    expect(bitsOf(path('m-i.bloom'))).toEqual(a.clone().intersect(b).bits.data);
    ok(cli.run(['create', path('m-c.bloom'), '-n', '1000', '-p', '0.01']));
    const r = cli.run(['merge', path('m-x.bloom'), path('m-a.bloom'), path('m-c.bloom')]);
    ok(r, 2);
    expect(r.stderr).toContain('m-c.bloom');
  });

  it('convert writes Guava bytes and Parquet bitsets that read back equal', () => {
    ok(cli.run(['convert', path('w.bloom'), path('w.guava'), '--to', 'guava']));
    const native = fromBytes(new Uint8Array(readFileSync(path('w.bloom')))) as BloomFilter;
    const guava = BloomFilter.fromGuava(new Uint8Array(readFileSync(path('w.guava'))));
    expect(guava.equals(native)).toBe(true);
    // info and check read the Guava file too, detected from its bytes.
    const info = JSON.parse(cli.run(['info', '--json', path('w.guava')]).stdout.toString());
    expect(info).toMatchObject({
      format: 'Guava writeTo',
      bits: native.bitSize,
      hashes: native.hashes,
    });
    expect(cli.run(['check', '-c', path('w.guava'), path('words.txt')]).stdout.toString()).toBe(
      `${words.length}\n`,
    );
    ok(cli.run(['convert', path('w.guava'), path('w2.bloom'), '--to', 'native']));
    expect(readFileSync(path('w2.bloom'))).toEqual(readFileSync(path('w.bloom')));
    ok(
      cli.run([
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
    const wrong = cli.run(['convert', path('t-blocked.bloom'), path('x.guava'), '--to', 'guava']);
    ok(wrong, 2);
    expect(wrong.stderr).toContain("Guava's format holds a classic Bloom filter");
    ok(cli.run(['convert', path('w.bloom'), path('x'), '--to', 'zip']), 2);
  });

  it('calc solves any two of n, p, m, k as Guava sizes', () => {
    const size = bloomSize(1_000_000, 0.01);
    const r = JSON.parse(cli.run(['calc', '-n', '1e6', '-p', '1%', '--json']).stdout.toString());
    expect(r).toMatchObject({ n: 1_000_000, m: size.bits, k: size.hashes });
    expect(r.types.map((t: { type: string }) => t.type)).toEqual([
      'classic',
      'blocked',
      'split-block',
      'counting',
      'cuckoo',
    ]);
    const fromMk = JSON.parse(
      cli.run(['calc', '-m', '1MiB', '-k', '7', '--json']).stdout.toString(),
    );
    expect(fromMk.m).toBe(8 * 2 ** 20);
    expect(fromMk.n).toBe(Math.floor((8 * 2 ** 20 * Math.LN2) / 7));
    const fromMp = JSON.parse(
      cli.run(['calc', '-m', '9600', '-p', '0.01', '--json']).stdout.toString(),
    );
    expect(fromMp.n).toBe(Math.floor((-9600 * Math.LN2 ** 2) / Math.log(0.01)));
    ok(cli.run(['calc', '-n', '5']), 2);
    ok(cli.run(['calc', '-p', '0.1', '-k', '3']), 2);
  });
});

describe('bad files', () => {
  it('names a missing file, a directory, an empty file, a text file and a damaged filter', () => {
    const missing = cli.run(['info', path('nope.bloom')]);
    ok(missing, 2);
    expect(missing.stderr).toBe(`bloomkit info: ${path('nope.bloom')}: no such file\n`);
    expect(cli.run(['check', path('nope.bloom')], { input: 'x\n' }).code).toBe(2);
    expect(cli.run(['add', path('w.bloom'), path('nope.txt')]).stderr).toContain(
      `${path('nope.txt')}: no such file`,
    );
    expect(cli.run(['info', dir]).stderr).toContain('is a directory');
    writeFileSync(path('empty.bloom'), '');
    expect(cli.run(['info', path('empty.bloom')]).stderr).toContain('the file is empty');
    const text = cli.run(['check', path('words.txt')], { input: 'x\n' });
    ok(text, 2);
    expect(text.stderr).toContain('not a filter file bloomkit reads');
    const bytes = readFileSync(path('w.bloom'));
    bytes[100] = bytes[100]! ^ 0x01;
    writeFileSync(path('bad.bloom'), bytes);
    const bad = cli.run(['check', path('bad.bloom')], { input: 'x\n' });
    ok(bad, 2);
    expect(bad.stderr).toMatch(/bad\.bloom: damaged filter file: .*(CRC|checksum)/i);
    const cut = readFileSync(path('w.bloom')).subarray(0, 50);
    writeFileSync(path('cut.bloom'), cut);
    expect(cli.run(['info', path('cut.bloom')]).stderr).toContain('cut.bloom: damaged filter file');
  });

  it('an empty input adds nothing and selects nothing', () => {
    writeFileSync(path('none.txt'), '');
    const before = readFileSync(path('w.bloom'));
    ok(cli.run(['add', path('w.bloom'), path('none.txt')]));
    expect(readFileSync(path('w.bloom'))).toEqual(before);
    ok(cli.run(['check', path('w.bloom'), path('none.txt')]), 1);
    const d = cli.run(['dedup', path('none.txt')]);
    ok(d);
    expect(d.stdout.length).toBe(0);
  });
});
