/**
 * The codec table (src/formats/registry.ts) is the only list of filter types: this test walks it
 * and proves that every row reaches every consumer that its capabilities promise. A row with a
 * `create` is made by `bloomkit create --type NAME` (and by each alias); every row is described
 * by `bloomkit info` under its name and shown by the page's inspector with its own view; a row
 * with a size model is solved by the page's calculator and by `bloomkit calc --type NAME`, which
 * agree; a row with `openShared` lives in shared memory and opens from its `share()` handle.
 * Each row's sample filter is its golden fixture (test/fixtures/golden/), so a type that gets a
 * row and a fixture but misses a consumer fails here.
 *
 * The second part asserts that the command and the page print the same numbers for a grid of
 * inputs (every pair of n, p, m, k) for every type with a size model, and fail alike.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TYPE_ROWS_FILE, typeRowsSource } from '../scripts/make-type-table.js';
import { readFilter } from '../src/cli/filter-file.js';
import {
  CAPABILITIES,
  loadCodec,
  loadedCodec,
  TYPE_ROWS,
  typeNamesWith,
  typeRowNamed,
} from '../src/formats/type-table.js';
import {
  CODECS,
  type FilterCodec,
  fromBytes,
  type MembershipFilter,
  TYPE_NAMES,
  typeNamed,
} from '../src/index.js';
import { fromSharedHandle } from '../src/node/shared-handle.js';
import { solve } from '../web/src/calc.js';
import { describe as inspectFilter } from '../web/src/inspect.js';
import { KINDS } from '../web/src/kinds.js';
import { type InProcessCli, inProcessCli } from './support/cli.js';

const root = join(import.meta.dirname, '..');
const golden = join(root, 'test', 'fixtures', 'golden');

/** One golden fixture per native type id (the first in name order). */
function fixtures(): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  for (const name of readdirSync(golden).sort()) {
    if (!name.endsWith('.blmk')) continue;
    const bytes = new Uint8Array(readFileSync(join(golden, name)));
    const typeId = bytes[6]!; // the header's filter type id (docs/FORMAT.md)
    if (!out.has(typeId)) out.set(typeId, bytes);
  }
  return out;
}

let cli: InProcessCli;
let dir: string;
const samples = fixtures();

beforeAll(() => {
  cli = inProcessCli();
  dir = cli.tempDir();
});
afterAll(() => cli?.dispose());

const json = (args: string[]) => cli.json(args);

describe('the codec table reaches every consumer', () => {
  it('names every type once: names and aliases resolve to their row, nothing else does', () => {
    const all = CODECS.flatMap((row) => [row.name, ...(row.aliases ?? [])]);
    expect(new Set(all).size).toBe(all.length);
    expect(TYPE_NAMES).toEqual(CODECS.map((row) => row.name));
    for (const row of CODECS) {
      for (const name of [row.name, ...(row.aliases ?? [])]) expect(typeNamed(name)).toBe(row);
    }
    expect(typeNamed('bloom').name).toBe('classic');
    expect(() => typeNamed('magic')).toThrow(/type must be one of classic, counting/);
  });

  it("has the lazy table's rows (type-rows.ts) as scripts/make-type-table.ts writes them from CODECS", async () => {
    // Generated from this table, never written by hand: a type is declared once (its codec).
    expect(readFileSync(TYPE_ROWS_FILE, 'utf8')).toBe(await typeRowsSource());
    expect(TYPE_ROWS.map((r) => r.name)).toEqual(CODECS.map((c) => c.name));
    for (const [i, row] of TYPE_ROWS.entries()) {
      const c = CODECS[i]!;
      expect(row.typeId, row.name).toBe(c.typeId);
      expect(row.aliases, row.name).toEqual(c.aliases ?? []);
      expect(row.capabilities, row.name).toEqual(CAPABILITIES.filter((k) => c[k] !== undefined));
      // Its loader gives this table's codec itself (one module instance), then keeps it.
      expect(await loadCodec(row), row.name).toBe(c);
      expect(loadedCodec(row.typeId), row.name).toBe(c);
      expect(await loadCodec(row.typeId), row.name).toBe(c);
      for (const name of [row.name, ...row.aliases]) expect(typeRowNamed(name)).toBe(row);
    }
    for (const capability of CAPABILITIES) {
      expect(typeNamesWith(capability), capability).toEqual(
        CODECS.filter((c) => c[capability] !== undefined).map((c) => c.name),
      );
    }
    expect(await loadCodec(0x7f)).toBeUndefined();
    expect(() => typeRowNamed('magic', 'create', '--type')).toThrow(
      /--type must be one of classic, counting/,
    );
  });

  for (const row of CODECS as readonly FilterCodec[]) {
    describe(row.name, () => {
      const sample = samples.get(row.typeId);

      it('has a golden fixture, which info describes under its name', async () => {
        expect(sample, `no golden fixture of type id ${row.typeId}`).toBeDefined();
        const file = join(dir, `${row.name}.blmk`);
        const { writeFileSync } = await import('node:fs');
        writeFileSync(file, sample!);
        const info = await json(['info', '--json', file]);
        expect(info.type).toBe(row.name);
        expect(info.funnel).toBeTypeOf('string');
      });

      it("is shown by the page's inspector with its own view", () => {
        expect(row.view, `${row.name} has no view for the inspector`).toBeDefined();
        const filter = fromBytes(sample!);
        const shown = inspectFilter('native', filter, sample!.length);
        expect(shown.type).toBe(row.view!(filter).title);
        expect(shown.shape.length).toBeGreaterThan(0);
      });

      it.skipIf(row.create === undefined)(
        'is created by `bloomkit create --type` under its name and aliases',
        async () => {
          for (const name of [row.name, ...(row.aliases ?? [])]) {
            const file = join(dir, `made-${name}.blmk`);
            await json(['create', file, '-n', '1000', '-p', '0.01', '--type', name, '--json']);
            // Read as the command reads files: a type with a file format of its own (DCSO's)
            // is created in that format.
            const made = (await readFilter(file)).filter;
            expect(made).toBeInstanceOf(row.filterClass);
            expect((await json(['info', '--json', file])).type).toBe(row.name);
          }
        },
      );

      it.skipIf(row.model === undefined)(
        "is solved alike by the page's calculator and `bloomkit calc --type`",
        async () => {
          if (row.display !== undefined) expect(KINDS.map((k) => k.id)).toContain(row.name);
          const page = solve(row.name, { n: 1000, p: 0.01 });
          const command = await json([
            'calc',
            '--type',
            row.name,
            '-n',
            '1000',
            '-p',
            '0.01',
            '--json',
          ]);
          expect(command).toMatchObject({
            n: page.n,
            m: page.bits,
            k: page.k,
            p: page.p,
            shape: page.shape,
          });
          const types = command.types as { type: string; bits: number }[];
          expect(types.find((t) => t.type === row.name)?.bits).toBe(page.bits);
        },
      );

      it.skipIf(row.openShared === undefined)(
        'lives in shared memory and opens from its share() handle',
        () => {
          const filter = row.create!({
            capacity: 1000,
            fpp: 0.01,
            funnel: 'string',
            shared: true,
          }) as MembershipFilter & { share(): Parameters<typeof fromSharedHandle>[0] };
          const handle = filter.share();
          expect(handle.type).toBe(row.name);
          const view = fromSharedHandle(handle);
          view.add('from another thread');
          expect(filter.has('from another thread')).toBe(true);
        },
      );
    });
  }
});

describe('the command and the page give the same numbers', () => {
  const modelled = CODECS.filter((row) => row.model !== undefined).map((row) => row.name);
  const grid: { n?: number; p?: number; m?: number; k?: number }[] = [
    { n: 1000, p: 0.01 },
    { n: 1_000_000, p: 1e-6 },
    { n: 12_345, p: 0.05 },
    { m: 64 * 8 * 2 ** 20, p: 1e-6 },
    { m: 9600, p: 0.01 },
    { n: 100_000, m: 8 * 2 ** 20 },
    { n: 50_000, k: 7 },
    { m: 8 * 2 ** 20, k: 5 },
    { n: 10_000, p: 0.001, k: 4 },
    { n: 5 },
    { p: 0.1, k: 3 },
    { m: 64, p: 1e-9 },
  ];
  const args = (input: (typeof grid)[number]): string[] =>
    Object.entries(input).flatMap(([name, value]) => [`-${name}`, String(value)]);

  for (const type of modelled) {
    it(`${type}: calc --json equals the calculator's answer, or both refuse with one message`, async () => {
      for (const input of grid) {
        let page: ReturnType<typeof solve> | Error;
        try {
          page = solve(type, input);
        } catch (error) {
          page = error as Error;
        }
        const r = await cli.run(['calc', '--type', type, ...args(input), '--json']);
        const what = `${type} ${JSON.stringify(input)}`;
        if (page instanceof Error) {
          expect(r.code, what).toBe(2);
          expect(r.stderr, what).toContain(page.message);
          continue;
        }
        expect(r.code, `${what}: ${r.stderr}`).toBe(0);
        const command = JSON.parse(r.stdout.toString('utf8'));
        expect(command, what).toMatchObject({
          type,
          n: page.n,
          m: page.bits,
          k: page.k,
          p: page.p,
          bytes: page.bytes,
          shape: page.shape,
          from: page.from,
          notes: page.notes,
        });
      }
    });
  }
});

/** Every .ts file under `dir`, as paths relative to the repository root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

const ROOT = join(import.meta.dirname, '..');
const NAME = `'(?:classic|blocked|split-block|counting|scalable|cuckoo)'`;
/** The shapes a second list of types takes in code (comments removed first). */
const LISTS: readonly [string, RegExp][] = [
  ['an array of type names', new RegExp(`\\[[^\\[\\]]*${NAME}[^\\[\\]]*${NAME}[^\\[\\]]*\\]`, 'g')],
  ['a union of type names', new RegExp(`${NAME}\\s*\\|\\s*(?:'[a-z-]+'\\s*\\|\\s*)*${NAME}`, 'g')],
  ['a switch on a type name', new RegExp(`case\\s+${NAME}`, 'g')],
  ['a test of a type name', new RegExp(`[!=]==\\s*${NAME}|${NAME}\\s*[!=]==`, 'g')],
];

/**
 * What may stay outside the codec rows, each with its reason (file, then the text found). These
 * are not lists of filter types but names of stored data that must not change with the table.
 */
const ALLOWED: Record<string, readonly string[]> = {
  // The shard kinds of the stored filters: key prefixes in Redis and in the memory store (a
  // storage format, `bloom` included, which is not a type name); never a list of types.
  'src/sharded/store.ts': ["'counting' | 'cuckoo' | 'scalable'"],
  'src/sharded/stored-open.ts': ["'counting' | 'cuckoo'"],
  'src/sharded/memory-store.ts': ["=== 'scalable'"],
  'src/redis/shard-store.ts': ["=== 'scalable'"],
};

describe('no list of filter types outside the codec table', () => {
  it('finds the shapes it looks for (the patterns can fail)', () => {
    const found = (code: string) => LISTS.filter(([, re]) => code.match(re) !== null).length;
    expect(found("const T = ['classic', 'blocked', 'split-block'];")).toBe(1);
    expect(found("type T = 'classic' | 'blocked';")).toBe(1);
    expect(found("switch (t) { case 'cuckoo': }")).toBe(1);
    expect(found("if (type === 'blocked') {}")).toBe(1);
    expect(found("const x = typeNamed('classic', 'create');")).toBe(0);
  });

  it('has no array, union, switch or test of type names in src/ but the codec rows', () => {
    const found: string[] = [];
    for (const file of sourceFiles('src')) {
      // The codec table, the lazy rows generated from it, and the rows' own files.
      const table = file === 'src/formats/registry.ts' || file === 'src/formats/type-rows.ts';
      if (table || file.endsWith('/codec.ts')) continue;
      const code = readFileSync(join(ROOT, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
      for (const [what, re] of LISTS) {
        for (const match of code.match(re) ?? []) {
          const text = match.replace(/\s+/g, ' ');
          if (!(ALLOWED[file] ?? []).some((allowed) => text.includes(allowed))) {
            found.push(`${file}: ${what}: ${text}`);
          }
        }
      }
    }
    expect(found).toEqual([]);
  });
});
