/**
 * The package as a user receives it: `npm pack` (which builds through `prepack`), the tarball
 * installed into an empty project outside this repository, and there used from ESM, CommonJS,
 * TypeScript (`--strict`, NodeNext and Bundler resolution), a browser bundle run in headless
 * Chromium, and the `bloomkit` command. Every consumer reads the golden filters this repository's
 * own tests froze (test/fixtures/golden), so the published build must decode the native format
 * exactly as the sources do.
 *
 * Slow by nature (a full build and an install): the pack and install happen once, in `beforeAll`,
 * and every check below reuses them. TypeScript, esbuild and Chromium are the repository's (run
 * with the consumer project as their working directory), so the install fetches only bloomkit's
 * own dependencies, from npm's cache when it has them.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from '../scripts/golden-cases.js';
import type { Key } from '../src/index.js';
import { CHROMIUM_ARGS, requireChromium } from './support/chromium.js';
import { ensureDist } from './support/dist.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const repoPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/**
 * TypeScript 7 (the native compiler, the repository's `typescript-7`), run as `tsc -p` in the
 * consumer project with skipLibCheck off: it checks the consumer's code, the installed package's
 * declarations and @types/node in about a second, where 5.9's compiler API took about 7 s of CPU
 * for the same projects without @types/node. (The declarations are emitted by TypeScript 5.9,
 * which reports any type error in the sources while it builds them.)
 */
const tsc = join(root, 'node_modules', 'typescript-7', 'bin', 'tsc');

const CHROMIUM = requireChromium('the package in Chromium');

/** A golden key, as JSON (bigints and bytes have no JSON form of their own). */
type WireKey = { s: string } | { n: number } | { b: string } | { u: number[] };
const wire = (k: Key): WireKey =>
  typeof k === 'string'
    ? { s: k }
    : typeof k === 'number'
      ? { n: k }
      : typeof k === 'bigint'
        ? { b: k.toString() }
        : { u: Array.from(k) };

/** The golden native containers a consumer can decode from bytes (not sidecars, not chunk files). */
const goldens = GOLDEN_CASES.filter((c) => c.kind === undefined && c.type !== 7).map((c) => ({
  file: c.file,
  present: c.present.map(wire),
  absent: c.absent.map(wire),
}));

/**
 * Consumer code shared by the ESM, CJS and browser checks (it only uses what it is passed):
 * decodes every golden container with the published `fromBytes` and checks its recorded answers;
 * checks that every exported class and function keeps its own name (no bundler renaming).
 */
const CHECK = `
function check(lib, cases, fixtures) {
  const key = (w) => ('s' in w ? w.s : 'n' in w ? w.n : 'b' in w ? BigInt(w.b) : new Uint8Array(w.u));
  const problems = [];
  for (const c of cases) {
    const filter = lib.fromBytes(fixtures[c.file]);
    for (const w of c.present) if (filter.has(key(w)) !== true) problems.push(c.file + ' lost ' + JSON.stringify(w));
    for (const w of c.absent) if (filter.has(key(w)) !== false) problems.push(c.file + ' holds ' + JSON.stringify(w));
  }
  for (const [name, value] of Object.entries(lib)) {
    if (typeof value === 'function' && value.name !== name) problems.push('export: ' + name + ' is named ' + value.name);
  }
  const f = lib.BloomFilter.create({ capacity: 1000, fpp: 0.01 });
  f.add('a');
  if (!f.has('a')) problems.push('BloomFilter lost a key');
  // A filter survives a JSON API, and says what it is in its own words (not a bundler's name).
  const json = JSON.parse(JSON.stringify(f));
  if (!lib.fromJSON(json).has('a')) problems.push('fromJSON lost a key');
  if (json.type !== 'BloomFilter') problems.push('name: toJSON type is ' + json.type);
  if (!String(f).startsWith('BloomFilter')) problems.push('name: toString gives ' + String(f));
  try {
    f.union(lib.BloomFilter.create({ capacity: 10, fpp: 0.5 }));
    problems.push('union of different sizes was accepted');
  } catch (e) {
    if (!/^BloomFilters must /.test(e.message)) problems.push('name: union error reads ' + e.message);
  }
  return { problems, decoded: cases.length };
}
`;

let dir = '';
let project = '';
let tarball = '';
let packed: string[] = [];
let installedPkg: Record<string, unknown> = {};
/** What `npm install` of the tarball printed (warnings included). */
let installOutput = '';
/** What the browser check found (set by the Chromium test, read by the naming test). */
let browserProblems: string[] | undefined;

const exec = promisify(execFile);

/** Runs a command without blocking the test worker; its output, or an error that shows it. */
async function run(
  file: string,
  args: string[],
  cwd = project,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  return (await runBoth(file, args, cwd, env)).stdout;
}

/** {@link run}, resolving to both output streams. */
async function runBoth(
  file: string,
  args: string[],
  cwd = project,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(file, args, {
      cwd,
      env,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    return { stdout, stderr };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${file} ${args.join(' ')} failed:\n${err.stdout ?? ''}\n${err.stderr ?? err.message}`,
    );
  }
}

describe('the packed package, installed in an empty project', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bloomkit-package-'));
    // `npm pack` runs `prepack` (scripts/pack.mjs: the build, then package.json without its
    // scripts) and `postpack` (package.json back). Here the build is made once and reused while it
    // is newer than the sources (`npm ci` in a fresh clone has just made it), which
    // BLOOMKIT_PACK_REUSE_BUILD tells the prepack step. --json lists what went into the tarball;
    // the JSON report starts at a line holding '['.
    await ensureDist();
    const out = await run('npm', ['pack', '--json', '--pack-destination', dir], root, {
      ...process.env,
      BLOOMKIT_PACK_REUSE_BUILD: '1',
    });
    const report = JSON.parse(out.slice(out.search(/^\[$/m)));
    tarball = join(dir, report[0].filename);
    packed = report[0].files.map((f: { path: string }) => f.path);

    project = join(dir, 'consumer');
    mkdirSync(join(project, 'fixtures'), { recursive: true });
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }),
    );
    const installed = await runBoth('npm', [
      'install',
      tarball,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--loglevel=warn',
    ]);
    installOutput = installed.stdout + installed.stderr;
    installedPkg = JSON.parse(
      readFileSync(join(project, 'node_modules', 'bloomkit', 'package.json'), 'utf8'),
    );
    for (const c of goldens) {
      copyFileSync(
        join(root, 'test', 'fixtures', 'golden', c.file),
        join(project, 'fixtures', c.file),
      );
    }
    writeFileSync(join(project, 'cases.json'), JSON.stringify(goldens));
  }, 400_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the build, its types, LICENSE, README and CHANGELOG, and nothing from the repository', () => {
    for (const entry of ['index', 'node', 'redis']) {
      for (const ext of ['js', 'cjs', 'd.ts', 'd.cts']) {
        expect(packed, `dist/${entry}.${ext}`).toContain(`dist/${entry}.${ext}`);
      }
    }
    // The static page `bloomkit serve` serves ships built.
    if (repoPkg.scripts['build:web'] !== undefined) expect(packed).toContain('dist/web/index.html');
    for (const file of ['package.json', 'LICENSE', 'README.md', 'CHANGELOG.md']) {
      expect(packed, file).toContain(file);
    }
    expect(
      packed.filter((p) => !/^(dist\/|package\.json$|LICENSE$|README\.md$|CHANGELOG\.md$)/.test(p)),
    ).toEqual([]);
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    // Every export target is in the tarball, with `types` first in every condition.
    for (const [entry, conditions] of Object.entries(repoPkg.exports as Record<string, unknown>)) {
      if (typeof conditions === 'string') {
        expect(packed, entry).toContain(conditions.replace(/^\.\//, ''));
        continue;
      }
      for (const [kind, target] of Object.entries(
        conditions as Record<string, Record<string, string>>,
      )) {
        expect(Object.keys(target)[0], `${entry} ${kind}`).toBe('types');
        for (const file of Object.values(target))
          expect(packed, `${entry} ${kind}`).toContain(file.replace(/^\.\//, ''));
      }
    }
  });

  it('says where it comes from and what it may drop (repository, homepage, bugs, license, sideEffects)', () => {
    expect(installedPkg.license).toBe('MIT');
    expect(installedPkg.repository).toMatchObject({
      type: 'git',
      url: expect.stringMatching(/^git\+https:\/\/.+\.git$/),
    });
    expect(installedPkg.homepage).toMatch(/^https:\/\//);
    expect(installedPkg.bugs).toMatchObject({
      url: expect.stringMatching(/^https:\/\/.+\/issues$/),
    });
    expect(installedPkg.type).toBe('module');
    expect(installedPkg.sideEffects).toBe(false);
    // `npm pack` and `npm publish` build first, and the build makes every entry the package ships.
    expect(repoPkg.scripts.prepack).toBe('node scripts/pack.mjs prepack');
    expect(repoPkg.scripts.build).toMatch(/^tsup\b/);
  });

  it('installs without a lifecycle script or an install-script warning; the repository keeps prepare', () => {
    // The published package.json has no scripts at all, so no lifecycle script can run or warn.
    expect(installedPkg.scripts).toBeUndefined();
    expect(installOutput).not.toMatch(/install.?script|prepare|allowScripts/i);
    // Installing from git runs the repository's `prepare` in the clone, which builds dist/.
    expect(repoPkg.scripts.prepare).toBe('node scripts/prepare.mjs');
    // The pack put the working copy's package.json back.
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))).toEqual(repoPkg);
  });

  it('works from ESM: every golden filter decodes, names survive, one core behind every entry', async () => {
    writeFileSync(
      join(project, 'esm.mjs'),
      `import { readFileSync } from 'node:fs';
import * as lib from 'bloomkit';
import * as node from 'bloomkit/node';
import * as redis from 'bloomkit/redis';
${CHECK}
const cases = JSON.parse(readFileSync('cases.json', 'utf8'));
const fixtures = Object.fromEntries(cases.map((c) => [c.file, readFileSync('fixtures/' + c.file)]));
const result = check(lib, cases, fixtures);
if (node.BloomFilter !== lib.BloomFilter || redis.BloomFilter !== lib.BloomFilter) result.problems.push('two copies of the core');
// bloomkit/node's streaming load gives the very class the core's fromBytes gives.
const first = cases[0].file;
const loaded = await node.load('fixtures/' + first);
if (loaded.constructor !== lib.fromBytes(fixtures[first]).constructor) result.problems.push('load and fromBytes differ');
console.log(JSON.stringify(result));
`,
    );
    const result = JSON.parse(await run('node', ['esm.mjs']));
    expect(result.problems).toEqual([]);
    expect(result.decoded).toBe(goldens.length);
  });

  it('works from CommonJS (require), with the same checks', async () => {
    writeFileSync(
      join(project, 'cjs.cjs'),
      `const { readFileSync } = require('node:fs');
const lib = require('bloomkit');
const node = require('bloomkit/node');
const redis = require('bloomkit/redis');
${CHECK}
const cases = JSON.parse(readFileSync('cases.json', 'utf8'));
const fixtures = Object.fromEntries(cases.map((c) => [c.file, readFileSync('fixtures/' + c.file)]));
const result = check(lib, cases, fixtures);
if (node.BloomFilter !== lib.BloomFilter || redis.BloomFilter !== lib.BloomFilter) result.problems.push('two copies of the core');
console.log(JSON.stringify(result));
`,
    );
    const result = JSON.parse(await run('node', ['cjs.cjs']));
    expect(result.problems).toEqual([]);
    expect(result.decoded).toBe(goldens.length);
  });

  it('type-checks under tsc --strict with NodeNext (ESM and CJS files) and with Bundler resolution', async () => {
    const body = (from: string) => `
const ids = BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'long' });
ids.add(42n);
ids.add(7);
const seen: boolean = ids.has(42n);
const copy = fromBytes(ids.toBytes());
const count: number = copy.estimatedCount();
// @ts-expect-error a 'long' filter takes bigint | number keys, not strings
ids.add('42');
const counts = CountingBloomFilter.create({ capacity: 100, fpp: 0.01, funnel: 'int' });
counts.add(1);
// @ts-expect-error an 'int' filter takes numbers, not bigints
counts.remove(1n);
export const out = [seen, count, ${from}];
`;
    mkdirSync(join(project, 'ts'), { recursive: true });
    writeFileSync(
      join(project, 'ts', 'esm.mts'),
      `import { BloomFilter, CountingBloomFilter, fromBytes, type MembershipFilter } from 'bloomkit';
import { save, load } from 'bloomkit/node';
const any: MembershipFilter = BloomFilter.create({ capacity: 10, fpp: 0.1 });
${body('any, save, load')}`,
    );
    writeFileSync(
      join(project, 'ts', 'cjs.cts'),
      `import bloomkit = require('bloomkit');
import node = require('bloomkit/node');
const { BloomFilter, CountingBloomFilter, fromBytes } = bloomkit;
${body('node.save')}`,
    );
    writeFileSync(
      join(project, 'ts', 'bundler.ts'),
      `import { BloomFilter, CountingBloomFilter, fromBytes } from 'bloomkit';
${body('BloomFilter.name')}`,
    );
    // The package's own declarations are checked (skipLibCheck off), with @types/node in the
    // NodeNext project. The browser-style Bundler project gets no Node types at all: the core's
    // declarations must compile without them.
    const common = {
      strict: true,
      target: 'ES2022',
      noEmit: true,
      skipLibCheck: false,
      typeRoots: [join(root, 'node_modules', '@types')],
    };
    writeFileSync(
      join(project, 'tsconfig.nodenext.json'),
      JSON.stringify({
        compilerOptions: {
          ...common,
          types: ['node'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
        },
        files: ['ts/esm.mts', 'ts/cjs.cts'],
      }),
    );
    writeFileSync(
      join(project, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: { ...common, types: [], module: 'ESNext', moduleResolution: 'Bundler' },
        files: ['ts/bundler.ts'],
      }),
    );
    // --listFiles names every file of the program: the consumer's and the package's
    // declarations must be among them (a resolution that found nothing would pass vacuously).
    // One checker thread each: the two run side by side.
    const [nodenext, bundler] = await Promise.all(
      ['tsconfig.nodenext.json', 'tsconfig.bundler.json'].map((config) =>
        run(tsc, ['-p', config, '--pretty', 'false', '--listFiles', '--singleThreaded']),
      ),
    );
    for (const file of [
      'ts/esm.mts',
      'ts/cjs.cts',
      'bloomkit/dist/node.d.ts',
      'bloomkit/dist/node.d.cts',
    ])
      expect(nodenext).toContain(file);
    for (const file of ['ts/bundler.ts', 'bloomkit/dist/index.d.ts'])
      expect(bundler).toContain(file);
  }, 300_000);

  it.skipIf(!CHROMIUM)(
    'bundles the core for the browser and runs it in headless Chromium',
    async () => {
      writeFileSync(
        join(project, 'browser.mjs'),
        `import * as lib from 'bloomkit';
${CHECK}
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const input = globalThis.__input;
const fixtures = Object.fromEntries(Object.entries(input.fixtures).map(([k, v]) => [k, b64(v)]));
globalThis.__result = check(lib, input.cases, fixtures);
`,
      );
      const bundle = await build({
        absWorkingDir: project,
        entryPoints: ['browser.mjs'],
        bundle: true,
        format: 'iife',
        platform: 'browser',
        minify: true,
        write: false,
        logLevel: 'silent',
      });
      const js = bundle.outputFiles[0]!.text;
      expect(js).not.toMatch(/require\(["']node:/);
      const fixtures = Object.fromEntries(
        goldens.map((c) => [
          c.file,
          readFileSync(join(project, 'fixtures', c.file)).toString('base64'),
        ]),
      );
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: CHROMIUM_ARGS,
      });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        await page.setContent('<!doctype html><meta charset="utf-8"><title>bloomkit</title>');
        await page.evaluate(
          (input) => {
            (globalThis as { __input?: unknown }).__input = input;
          },
          { cases: goldens, fixtures },
        );
        await page.addScriptTag({ content: js });
        const result = await page.evaluate(() => (globalThis as { __result?: unknown }).__result);
        expect(errors).toEqual([]);
        // Minified: the exported bindings' names are the bundler's to choose (`export ...`);
        // what a filter says about itself (`name: ...`) is checked below.
        browserProblems = (result as { problems: string[] }).problems;
        expect(browserProblems.filter((p) => !/^(export|name):/.test(p))).toEqual([]);
        expect((result as { decoded: number }).decoded).toBe(goldens.length);
      } finally {
        await browser.close();
      }
    },
    180_000,
  );

  it.skipIf(!CHROMIUM)(
    'names the filter type in toString, toJSON and errors inside a minified browser bundle',
    () => {
      // An application's bundler renames classes (esbuild: `class _BloomFilter`, then `e` when
      // minified), so a message built from `constructor.name` would read `es must have ...`.
      expect(browserProblems).toBeDefined();
      expect(browserProblems!.filter((p) => p.startsWith('name:'))).toEqual([]);
    },
  );

  it.skipIf(repoPkg.bin === undefined)(
    'runs the bloomkit command npm linked (bloomkit --help)',
    async () => {
      // The command npm linked (what `npx bloomkit` runs), started through its shebang.
      const help = await run(join(project, 'node_modules', '.bin', 'bloomkit'), ['--help']);
      expect(help).toMatch(/bloomkit/);
      expect(help.toLowerCase()).toMatch(/usage/);
    },
  );

  it.skipIf(repoPkg.bin === undefined)(
    'runs create, add and check from the installed files, on one thread and on worker threads',
    async () => {
      // The command's files are CommonJS with lazy parts (commands, types, the worker entry):
      // each is reached here as an installed package reaches it.
      const bin = join(project, 'node_modules', '.bin', 'bloomkit');
      expect(await run(bin, ['--version'])).toBe(`bloomkit ${repoPkg.version}\n`);
      const keys = join(project, 'keys.txt');
      writeFileSync(keys, `${Array.from({ length: 5000 }, (_, i) => `key-${i}`).join('\n')}\n`);
      const one = join(project, 'one.bloom');
      const two = join(project, 'two.bloom');
      await run(bin, ['create', one, '-n', '10000', '-p', '0.01', '--force']);
      await run(bin, ['create', two, '-n', '10000', '-p', '0.01', '--force']);
      await run(bin, ['add', one, keys]);
      await run(bin, ['add', '--threads', '2', two, keys]);
      expect(readFileSync(two).equals(readFileSync(one))).toBe(true);
      expect(await run(bin, ['check', '-c', '--threads', '2', one, keys])).toBe('5000\n');
      expect(await run(bin, ['check', '-c', two, keys])).toBe('5000\n');
    },
  );
});
