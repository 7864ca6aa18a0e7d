/**
 * The command against other programs and file kinds: a filter made by `bloomkit create/add` and
 * `convert --to guava` read by real Guava in Java; `info` on a Parquet file written by DuckDB, a
 * sidecar and a chunked filter file; `which` over sidecars; `serve` answering HTTP. The command
 * runs in this process (the build's `main()`, which loads the Parquet, sidecar and chunked code
 * on demand as the command does), except `serve` (stopped by a signal) and one `which`, run as
 * the built command.
 */

import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilterCascade } from '../src/index.js';
import { buildSidecar, ChunkedBloomFilter, readParquetBloomFilters } from '../src/node.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';
import { guavaBuild, guavaRead, requireJava } from './support/guava.js';
import { keys } from './support/random.js';

let cli: InProcessCli;
let bin: BuiltCli;
let dir: string;
const path = (name: string) => join(dir, name);

beforeAll(async () => {
  cli = inProcessCli();
  bin = await buildCli();
  dir = cli.tempDir();
});

afterAll(() => {
  cli?.dispose();
  bin?.dispose();
});

describe.skipIf(!requireJava())('Guava', () => {
  it('reads the filter the command wrote, bit for bit what Guava builds from the same keys', async () => {
    const inserts = keys('https://example.com/a/', 2000).concat(['ünïcödé', '']);
    const probes = keys('https://example.com/b/', 2000);
    writeFileSync(path('g.txt'), `${inserts.join('\n')}\n`);
    expect((await cli.run(['create', path('g.bloom'), '-n', '2000', '-p', '0.02'])).code).toBe(0);
    expect((await cli.run(['add', path('g.bloom'), path('g.txt')])).code).toBe(0);
    expect(
      (await cli.run(['convert', path('g.bloom'), path('g.guava'), '--to', 'guava'])).code,
    ).toBe(0);
    const bytes = new Uint8Array(readFileSync(path('g.guava')));
    const java = guavaBuild({ funnel: 'string', n: 2000, fpp: 0.02, inserts });
    expect(Buffer.from(bytes).equals(Buffer.from(java.bytes))).toBe(true);
    const read = guavaRead({ funnel: 'string', bytes, probes: [...inserts, ...probes] });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.probeResults.slice(0, inserts.length).every(Boolean)).toBe(true);
    // The command's check answers the probes as Guava's mightContain does.
    const mine = await cli.run(['check', '-c', path('g.guava')], {
      input: `${probes.join('\n')}\n`,
    });
    const javaCount = read.probeResults.slice(inserts.length).filter(Boolean).length;
    expect(mine.stdout.toString()).toBe(`${javaCount}\n`);
  });
});

describe('info on other file kinds, which, serve', () => {
  it('lists one entry per column chunk of a Parquet file written by DuckDB', async () => {
    const file = path('t.parquet');
    const db = await DuckDBInstance.create();
    const con = await db.connect();
    await con.run('SET threads = 1');
    await con.run(
      `COPY (SELECT 'user-' || (i % 500) AS s, (i % 700)::BIGINT AS b FROM range(81920) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 40960)`,
    );
    con.closeSync();
    const expected = await readParquetBloomFilters(file);
    expect(expected.length).toBeGreaterThan(0);
    const r = await cli.run(['info', '--json', file]);
    expect(r.code, r.stderr).toBe(0);
    const entries = JSON.parse(r.stdout.toString());
    const list = Array.isArray(entries) ? entries : [entries];
    expect(list.map((e: { column: string; rowGroup: number }) => [e.column, e.rowGroup])).toEqual(
      expected.map((e) => [e.column, e.rowGroup]),
    );
    for (const [i, e] of list.entries()) {
      expect(e).toMatchObject({
        format: 'Parquet',
        type: 'split-block',
        bitsSet: expected[i]!.filter.bitCount,
      });
    }
    // A Parquet file is not a filter to add to.
    const add = await cli.run(['add', file], { input: 'x\n' });
    expect(add.code).toBe(2);
    expect(add.stderr).toContain('a Parquet file');
  });

  it('describes a chunked filter file and a sidecar; which lists the files that may hold a key', async () => {
    await ChunkedBloomFilter.build(path('c.bkc'), keys('k', 5000), { capacity: 5000, fpp: 0.01 });
    const chunked = JSON.parse(
      (await cli.run(['info', '--json', path('c.bkc')])).stdout.toString(),
    );
    expect(chunked).toMatchObject({ format: 'bloomkit chunked', type: 'chunked' });

    const logs = join(dir, 'logs');
    mkdirSync(logs);
    writeFileSync(join(logs, 'a.log'), 'alice\nbob\n');
    writeFileSync(join(logs, 'b.log'), 'carol\nbob\n');
    writeFileSync(join(logs, 'notes.txt'), 'alice\n'); // no sidecar: not a data file here
    for (const f of ['a.log', 'b.log'])
      await buildSidecar(join(logs, f), { format: 'lines', fpp: 1e-6 });
    const info = JSON.parse(
      (await cli.run(['info', '--json', join(logs, 'a.log.bloom')])).stdout.toString(),
    );
    expect(info).toMatchObject({ format: 'bloomkit sidecar', estimatedCount: 2 });
    const one = await cli.run(['which', logs, 'bob']);
    expect(one.stdout.toString()).toBe(`${join(logs, 'a.log')}\n${join(logs, 'b.log')}\n`);
    // The built command as a process answers the same.
    const built = bin.run(['which', logs, 'bob']);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout.equals(one.stdout)).toBe(true);
    const many = await cli.run(['which', '--json', logs, 'alice', 'carol', 'zed']);
    expect(JSON.parse(many.stdout.toString()).keys).toEqual({
      alice: [join(logs, 'a.log')],
      carol: [join(logs, 'b.log')],
      zed: [],
    });
    expect((await cli.run(['which', logs, 'zed'])).code).toBe(1);
    expect((await cli.run(['which', join(dir, 'nowhere'), 'x'])).stderr).toContain('no such file');
  });

  it('reads a Mozilla MLBF filter cascade: info describes it, check answers as the cascade', async () => {
    const include = keys('in-', 300);
    const exclude = keys('out-', 3000);
    const cascade = FilterCascade.build({ include, exclude });
    writeFileSync(path('c.mlbf'), cascade.toMlbf());
    const info = JSON.parse((await cli.run(['info', '--json', path('c.mlbf')])).stdout.toString());
    expect(info).toMatchObject({
      format: 'Mozilla MLBF',
      type: 'cascade',
      layers: cascade.layers.map((l) => ({ bits: l.bits, hashes: l.hashes })),
    });
    const r = await cli.run(['check', path('c.mlbf')], {
      input: `${[...include, ...exclude].join('\n')}\n`,
    });
    expect(r.stdout.toString()).toBe(`${include.join('\n')}\n`);
    expect((await cli.run(['add', path('c.mlbf')], { input: 'x\n' })).stderr).toContain(
      'not added to',
    );
  });

  it('serve answers HTTP on the port it prints and stops on SIGTERM', async () => {
    const site = join(dir, 'site');
    mkdirSync(site);
    writeFileSync(join(site, 'index.html'), '<h1>bloomkit</h1>');
    const child = bin.start(['serve', site]);
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    const url = /at (http:\/\/\S+)/.exec(line.toString())?.[1];
    expect(url).toBeDefined();
    const page = await fetch(url!);
    expect(await page.text()).toBe('<h1>bloomkit</h1>');
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    expect(code).toBe(0);
  });
});
