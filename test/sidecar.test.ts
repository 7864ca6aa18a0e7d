/**
 * Sidecar filters (HBase skips HFiles whose Bloom filter says no; document 000) and the ROW /
 * ROWCOL composite keys. The end-to-end proof: over a folder of generated data files, a present
 * key always lists its file, and an absent key lists few files, counted against the FPR.
 */
import { readdirSync } from 'node:fs';
import { appendFile, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSidecarPrefix } from '../src/node/sidecar.js';
import {
  BloomFilter,
  buildSidecar,
  buildSidecars,
  compositeKey,
  hbaseRowColBloomKey,
  readSidecar,
  rowColKey,
  rowKey,
  SidecarSet,
  sidecarPath,
} from '../src/node.js';
import { mulberry32 } from './support/random.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomkit-sidecar-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A CSV field, quoted when it must be. */
function csv(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

describe('end to end over a folder of data files', () => {
  it('a present key always lists its file; an absent key lists few files', async () => {
    const random = mulberry32(2024);
    const folder = join(dir, 'e2e');
    await rm(folder, { recursive: true, force: true });
    const { mkdir } = await import('node:fs/promises');
    await mkdir(folder);
    const files: string[] = [];
    const owner = new Map<string, string>();
    const perFile = 3000;
    for (let f = 0; f < 16; f++) {
      const path = join(folder, `part-${String(f).padStart(2, '0')}.csv`);
      const lines = ['id,name,city,score'];
      for (let i = 0; i < perFile; i++) {
        const id = `u${Math.floor(random() * 1e12).toString(36)}`;
        if (owner.has(id)) continue;
        owner.set(id, path);
        const name = random() < 0.1 ? `Smith, "J" ${i}\nJr.` : `name ${i}`;
        lines.push([id, csv(name), `city-${i % 50}`, String(i)].join(','));
      }
      await writeFile(path, `${lines.join(f % 2 === 0 ? '\n' : '\r\n')}\n`);
      files.push(path);
    }
    const infos = await buildSidecars(files, { format: 'csv', field: 'id' });
    expect(infos.every((i) => i.bloom === 'row' && i.records === i.keys)).toBe(true);
    expect(readdirSync(folder).filter((n) => n.endsWith('.bloom'))).toHaveLength(16);
    expect(readdirSync(folder).filter((n) => n.endsWith('.tmp'))).toEqual([]);

    const set = await SidecarSet.open(files);
    expect(set.unchecked).toEqual([]);
    // Every present key lists its own file.
    let extra = 0;
    const unlisted: string[] = [];
    for (const [id, path] of owner) {
      const listed = set.filesFor(id);
      if (!listed.includes(path) && unlisted.length < 10) unlisted.push(`${id} in ${path}`);
      extra += listed.length - 1;
    }
    expect(unlisted).toEqual([]);
    // Absent keys: each file answers "maybe" with its filter's rate.
    const fpps = await Promise.all(
      files.map(async (f) => ((await readSidecar(f)).filter as BloomFilter).expectedFpp()),
    );
    const expectedPerLookup = fpps.reduce((a, b) => a + b, 0);
    const lookups = 20_000;
    let listedTotal = 0;
    for (let i = 0; i < lookups; i++) listedTotal += set.filesFor(`absent-${i}`).length;
    const expected = lookups * expectedPerLookup;
    expect(expectedPerLookup).toBeLessThan(16 * 0.0105);
    expect(listedTotal).toBeLessThan(expected + 4 * Math.sqrt(expected) + 1);
    expect(listedTotal).toBeGreaterThan(expected - 4 * Math.sqrt(expected) - 1);
    // Present keys list their file plus about the same rate of others.
    expect(extra / owner.size).toBeLessThan(expectedPerLookup * 1.3 + 0.01);
  });
});

describe('formats and fields', () => {
  it('CSV: quotes, escaped quotes, line breaks in fields, CRLF, BOM, no final newline', async () => {
    const path = join(dir, 'tricky.csv');
    await writeFile(
      path,
      '\ufeffname,id\r\n"a, b",k1\r\n"say ""hi""",k2\n"line\nbreak","k,3"\n\n,\nx,k4',
    );
    const info = await buildSidecar(path, { format: 'csv', field: 'id' });
    expect(info.records).toBe(5); // the blank line is skipped; ",": a record with an empty id
    expect(info.keys).toBe(4);
    const set = await SidecarSet.open([path]);
    for (const k of ['k1', 'k2', 'k,3', 'k4']) expect(set.filesFor(k)).toEqual([path]);
    for (const k of ['k3', '"k,3"', 'id', '']) expect(set.filesFor(k)).toEqual([]);
    const byName = await buildSidecar(path, { format: 'csv', field: 0, header: true });
    expect(byName.keys).toBe(4); // the empty name gives no key
    const names = await SidecarSet.open([path]);
    expect(names.filesFor('line\nbreak')).toEqual([path]);
    expect(names.filesFor('say "hi"')).toEqual([path]);
    expect(names.filesFor('a, b')).toEqual([path]);
  });

  it('TSV by column index, NDJSON by dotted path, plain lines', async () => {
    const tsv = join(dir, 'data.tsv');
    await writeFile(tsv, 't1\tx\nt2\ty\n\nt3\n');
    expect((await buildSidecar(tsv, { format: 'tsv', field: 0 })).keys).toBe(3);
    const nd = join(dir, 'data.ndjson');
    await writeFile(
      nd,
      '{"user":{"id":"n1"}}\n\n{"user":{"id":42}}\n{"user":{"id":null}}\n{"other":1}\n{"user":{"id":true}}\n',
    );
    const ndInfo = await buildSidecar(nd, { format: 'ndjson', field: 'user.id' });
    expect(ndInfo).toMatchObject({ records: 5, keys: 3, header: false });
    const txt = join(dir, 'data.txt');
    await writeFile(txt, 'l1\r\n\r\nl2\n');
    expect((await buildSidecar(txt, { format: 'lines' })).keys).toBe(3);
    const set = await SidecarSet.open([tsv, nd, txt]);
    expect(set.filesFor('t2')).toEqual([tsv]);
    expect(set.filesFor('n1')).toEqual([nd]);
    expect(set.filesFor('42')).toEqual([nd]);
    expect(set.filesFor('true')).toEqual([nd]);
    expect(set.filesFor('l2')).toEqual([txt]);
    expect(set.filesFor('')).toEqual([txt]); // an empty line is a key of a 'lines' file
    expect(set.filesFor('null')).toEqual([]);
    await writeFile(nd, '{"user":1}\n{broken\n');
    await expect(buildSidecar(nd, { format: 'ndjson', field: 'user' })).rejects.toThrow(
      /line 2: not valid JSON/,
    );
  });

  it('rejects bad options naming the value', async () => {
    const path = join(dir, 'opts.csv');
    await writeFile(path, 'id\nx\n');
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ format: 'xml' }, /format must be .* got "xml"/],
      [{ format: 'csv' }, /field must be a column name or a 0-based column index .* got null/],
      [{ format: 'csv', field: -1 }, /got -1/],
      [{ format: 'csv', field: 'id', header: false }, /needs a header line/],
      [{ format: 'lines', field: 'id' }, /field is not used for format 'lines'/],
      [{ format: 'ndjson', field: 3 }, /property name .* got 3/],
      [{ format: 'ndjson', field: 'a', header: true }, /header is only used for csv and tsv/],
      [{ format: 'csv', field: 'id', fpp: 2 }, /fpp must be in \(0, 1\), got 2/],
      [{ format: 'csv', field: 'id', bloom: 'col' }, /bloom must be 'row' or 'rowcol', got "col"/],
      [{ format: 'csv', field: 'nope' }, /no column named "nope" in the header \("id"\)/],
      [
        { format: 'csv', field: 'id', capacity: 0 },
        /capacity must be a positive safe integer, got 0/,
      ],
    ];
    for (const [options, message] of bad) {
      await expect(buildSidecar(path, options as never), JSON.stringify(options)).rejects.toThrow(
        message,
      );
    }
    await expect(SidecarSet.open('x' as never)).rejects.toThrow(TypeError);
  });
});

describe('never a false negative from an out-of-date sidecar', () => {
  it('lists stale, missing and damaged sidecars on every query', async () => {
    const a = join(dir, 'a.csv');
    const b = join(dir, 'b.csv');
    const c = join(dir, 'c.csv');
    const d = join(dir, 'd.csv');
    for (const [p, id] of [
      [a, 'ka'],
      [b, 'kb'],
      [c, 'kc'],
      [d, 'kd'],
    ] as const) {
      await writeFile(p, `id\n${id}\n`);
      await buildSidecar(p, { format: 'csv', field: 'id' });
    }
    await appendFile(a, 'new-key\n'); // changed after its sidecar was built
    await rm(sidecarPath(b));
    const damaged = new Uint8Array(await readFile(sidecarPath(c)));
    damaged[damaged.length - 10]! ^= 1;
    await writeFile(sidecarPath(c), damaged);
    await copyFile(sidecarPath(d), sidecarPath(join(dir, 'e.csv')));
    await writeFile(join(dir, 'e.csv'), 'id\nkd\n');
    const set = await SidecarSet.open([a, b, c, d, join(dir, 'e.csv')]);
    expect(set.unchecked.map((u) => [u.path, u.reason])).toEqual([
      [a, 'stale'],
      [b, 'missing'],
      [c, 'damaged'],
      [join(dir, 'e.csv'), 'stale'],
    ]);
    expect(set.unchecked[2]!.detail).toMatch(/checksum mismatch/);
    expect(set.filesFor('new-key')).toEqual([a, b, c, join(dir, 'e.csv')]);
    expect(set.filesFor('kd')).toEqual([a, b, c, d, join(dir, 'e.csv')]);
    expect(set.infos().map((i) => i?.source ?? null)).toEqual([null, null, null, 'd.csv', null]);
  });
});

describe('ROW and ROWCOL keys', () => {
  it('length prefixes keep ("ab","c") and ("a","bc") apart', () => {
    expect(hex(rowColKey('ab', '', 'c'))).not.toBe(hex(rowColKey('a', '', 'bc')));
    expect(hex(rowColKey('ab', 'f', 'c'))).not.toBe(hex(rowColKey('a', 'bf', 'c')));
    expect(hex(compositeKey(['ab', 'c']))).not.toBe(hex(compositeKey(['a', 'bc'])));
    expect(hex(compositeKey(['abc']))).not.toBe(hex(compositeKey(['ab', 'c'])));
    expect(hex(rowColKey('ab', 'cf', 'q'))).toBe('0002616202636671');
    expect(hex(compositeKey(['ab', '', 'c']))).toBe('026162000163');
    expect(hex(rowKey('row'))).toBe('726f77');
    expect(hex(compositeKey([new Uint8Array(200)])).slice(0, 4)).toBe('c801'); // LEB128 length
  });

  it("reproduces HBase's ROWCOL Bloom key bytes (RowColBloomHashKey)", () => {
    // <row length: 2 B BE> <row> <0: family length> <qualifier> <LATEST_TIMESTAMP: 8 B BE> <Maximum: 0xFF>
    expect(hex(hbaseRowColBloomKey('row1', 'q'))).toBe(
      `0004${hex(Buffer.from('row1'))}0071${'7f'}${'ff'.repeat(7)}ff`,
    );
    expect(hex(hbaseRowColBloomKey('ab', 'c'))).not.toBe(hex(hbaseRowColBloomKey('a', 'bc')));
    expect(hbaseRowColBloomKey(new Uint8Array(300), '').length).toBe(2 + 300 + 1 + 9);
  });

  it('no collisions among many random tuples (seeded)', () => {
    const random = mulberry32(11);
    const seen = new Map<string, string>();
    const alphabet = ['a', 'b', '\u0000', '\u00ff', 'é'];
    const word = () =>
      Array.from(
        { length: Math.floor(random() * 4) },
        () => alphabet[Math.floor(random() * 5)]!,
      ).join('');
    const collisions: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const tuple = [word(), word(), word()];
      const id = JSON.stringify(tuple);
      for (const key of [
        hex(rowColKey(tuple[0]!, tuple[1]!, tuple[2]!)),
        `c${hex(compositeKey(tuple))}`,
      ]) {
        const other = seen.get(key);
        if (other !== undefined && other !== id) collisions.push(`${other} and ${id}: ${key}`);
        seen.set(key, id);
      }
    }
    expect(collisions).toEqual([]);
  });

  it('rejects fields beyond HBase limits and non-string/bytes parts', () => {
    expect(() => rowColKey('x'.repeat(32768), '', 'q')).toThrow(
      /row must be at most 32767 bytes, got 32768/,
    );
    expect(() => rowColKey('r', 'f'.repeat(128), 'q')).toThrow(
      /family must be at most 127 bytes, got 128/,
    );
    expect(() => rowColKey(5 as never, '', 'q')).toThrow(TypeError);
    expect(() => compositeKey('ab' as never)).toThrow(TypeError);
  });

  it('ROWCOL sidecars answer which files may hold a cell', async () => {
    const a = join(dir, 'cells-a.csv');
    const b = join(dir, 'cells-b.ndjson');
    await writeFile(a, 'id,email,phone\nr1,x@y,\nr2,,555\n');
    await writeFile(b, '{"id":"r1","phone":"1"}\n{"id":"r3","email":"z","phone":null}\n');
    const ia = await buildSidecar(a, { format: 'csv', field: 'id', bloom: 'rowcol', family: 'cf' });
    const ib = await buildSidecar(b, {
      format: 'ndjson',
      field: 'id',
      bloom: 'rowcol',
      family: 'cf',
    });
    expect([ia.keys, ib.keys]).toEqual([2, 2]);
    const set = await SidecarSet.open([a, b]);
    expect(set.filesForCell('r1', 'cf', 'email')).toEqual([a]);
    expect(set.filesForCell('r1', 'cf', 'phone')).toEqual([b]);
    expect(set.filesForCell('r2', 'cf', 'phone')).toEqual([a]);
    expect(set.filesForCell('r3', 'cf', 'email')).toEqual([b]);
    expect(set.filesForCell('r3', 'cf', 'phone')).toEqual([]); // null: no cell
    expect(set.filesForCell('r2', 'cf', 'email')).toEqual([]); // empty: no cell
    expect(set.filesForCell('r1', 'other', 'email')).toEqual([]);
    expect(() => set.filesFor('r1')).toThrow(/holds ROWCOL keys; use filesForCell/);
    const only = await buildSidecar(a, {
      format: 'csv',
      field: 'id',
      bloom: 'rowcol',
      qualifiers: ['phone'],
    });
    expect(only.keys).toBe(1);
  });
});

describe('keys as written, and one bad sidecar is its file alone', () => {
  it('NDJSON keys are the JSON text exactly as written in the file', async () => {
    const path = join(dir, 'numbers.ndjson');
    await writeFile(
      path,
      [
        '{"id":12345678901234567890}',
        '{"id":1.0}',
        '{"id":1e2}',
        '{"id":-0}',
        '{"id": { "b" : 1,"a":[1, 2] } , "x":"}"}',
        '{"id":"x\\u0041\\"}"}',
        '{"n":{"id":"nested-shadow"},"id":7,"id":8}',
        '{"id":true}',
        '{"id":null}',
      ].join('\n'),
    );
    const info = await buildSidecar(path, { format: 'ndjson', field: 'id', fpp: 1e-6 });
    expect(info.keys).toBe(8);
    const set = await SidecarSet.open([path]);
    for (const written of [
      '12345678901234567890',
      '1.0',
      '1e2',
      '-0',
      '{ "b" : 1,"a":[1, 2] }',
      'xA"}',
      '8',
      'true',
    ]) {
      expect(set.filesFor(written), written).toEqual([path]);
    }
    // What re-serializing would have stored instead.
    for (const rewritten of ['12345678901234567000', '1', '100', '0', '{"b":1,"a":[1,2]}', '7']) {
      expect(set.filesFor(rewritten), rewritten).toEqual([]);
    }
    const nested = join(dir, 'nested.ndjson');
    await writeFile(nested, '{"user":{"id":1.50}}\n{"user":[1]}\n{"user":{"id":{"deep":0e0}}}\n');
    await buildSidecar(nested, { format: 'ndjson', field: 'user.id', fpp: 1e-6 });
    const n = await SidecarSet.open([nested]);
    expect(n.filesFor('1.50')).toEqual([nested]);
    expect(n.filesFor('{"deep":0e0}')).toEqual([nested]);
    expect(n.filesFor('1.5')).toEqual([]);
    const arrays = join(dir, 'arrays.ndjson');
    await writeFile(arrays, '{"items":[{"id":"a"},{"id":2.50}]}\n{"items":{"1":{"id":"obj"}}}\n');
    await buildSidecar(arrays, { format: 'ndjson', field: 'items.1.id', fpp: 1e-6 });
    const a = await SidecarSet.open([arrays]);
    expect(a.filesFor('2.50')).toEqual([arrays]);
    expect(a.filesFor('obj')).toEqual([arrays]);
    expect(a.filesFor('a')).toEqual([]);
  });

  it('a sidecar with a foreign filter or metadata is unchecked; the other files still answer', async () => {
    const good = join(dir, 'good.csv');
    const foreign = join(dir, 'foreign.csv');
    const junk = join(dir, 'junk.csv');
    for (const p of [good, foreign, junk]) {
      await writeFile(p, 'id\nshared\n');
      await buildSidecar(p, { format: 'csv', field: 'id' });
    }
    // A valid filter, but of 64-bit integers: it cannot answer string keys.
    const { info } = await readSidecar(foreign);
    const longs = BloomFilter.create({ capacity: 10, fpp: 0.01, funnel: 'long' });
    longs.add(1n);
    await writeFile(
      sidecarPath(foreign),
      Buffer.concat([encodeSidecarPrefix(info), longs.toBytes()]),
    );
    // Valid checksum, metadata of the wrong shape.
    await writeFile(
      sidecarPath(junk),
      Buffer.concat([
        encodeSidecarPrefix({ ...info, source: 'junk.csv', keys: 'many' as never }),
        (await readFile(sidecarPath(good))).subarray(
          16 + Math.ceil(JSON.stringify({ ...info, source: 'good.csv' }).length / 8) * 8,
        ),
      ]),
    );
    const set = await SidecarSet.open([good, foreign, junk]);
    expect(set.unchecked.map((u) => [u.path, u.reason])).toEqual([
      [foreign, 'damaged'],
      [junk, 'damaged'],
    ]);
    expect(set.unchecked[0]!.detail).toMatch(
      /foreign\.csv\.bloom: a ROW sidecar needs a filter of funnel "string", this one has "long"/,
    );
    expect(set.unchecked[1]!.detail).toMatch(/junk\.csv\.bloom: .*field keys is invalid: "many"/);
    expect(set.filesFor('shared')).toEqual([good, foreign, junk]);
    expect(set.filesFor('absent-key')).toEqual([foreign, junk]);
  });

  it('reports progress in bytes over both passes; an aborted build writes nothing', async () => {
    const path = join(dir, 'progress.csv');
    const rows = Array.from({ length: 20_000 }, (_, i) => `k${i},${i}`);
    await writeFile(path, `id,n\n${rows.join('\n')}\n`);
    const size = (await readFile(path)).length;
    const seen: [number, number | undefined][] = [];
    await buildSidecar(path, {
      format: 'csv',
      field: 'id',
      onProgress: (done, total) => seen.push([done, total]),
    });
    expect(seen.every(([, total]) => total === 2 * size)).toBe(true);
    expect(seen.at(-1)).toEqual([2 * size, 2 * size]);
    expect(seen.map(([d]) => d)).toEqual([...seen.map(([d]) => d)].sort((a, b) => a - b));

    const fresh = join(dir, 'aborted.csv');
    await writeFile(fresh, `id,n\n${rows.join('\n')}\n`);
    const controller = new AbortController();
    await expect(
      buildSidecar(fresh, {
        format: 'csv',
        field: 'id',
        signal: controller.signal,
        onProgress: (done) => {
          if (done > size) controller.abort(new Error('enough'));
        },
      }),
    ).rejects.toThrow('enough');
    expect(readdirSync(dir).filter((n) => n.startsWith('aborted.csv.'))).toEqual([]);
  });
});
