/**
 * The web page, built by scripts/build-web.ts and served by serveStatic, driven in headless
 * Chromium (Debian's package) with playwright-core: the calculator's numbers equal the library's,
 * a typed key lights exactly the library's positions, a Guava file written by Java is inspected
 * and checked, and the measured false positive rates fall within binomial tolerance of the model.
 * With BLOOMKIT_SCREENSHOTS=1 the run saves a screenshot of each view into docs/screenshots/ (shown in
 * the README), at 1280 px (`<view>.png`) and on a 390-px phone (`<view>-390.png`); with
 * BLOOMKIT_SCREENSHOTS=/some/folder, into that folder.
 * Chromium is required in CI (the file fails, not skips, when it is missing there).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWeb } from '../scripts/build-web.js';
import { fuseShape } from '../src/filters/binary-fuse/construct.js';
import * as core from '../src/index.js';
import {
  BlockedBloomFilter,
  BloomFilter,
  blockedFalsePositiveRate,
  CountingBloomFilter,
  CuckooFilter,
  falsePositiveRate,
  optimalNumOfHashFunctions,
  SplitBlockBloomFilter,
  splitBlockFalsePositiveRate,
} from '../src/index.js';
import { type StaticServer, serveStatic } from '../src/node/serve.js';
import { CHROMIUM_ARGS, requireChromium } from './support/chromium.js';
import { guavaBuild, requireJava } from './support/guava.js';

const CHROMIUM = requireChromium('web page test');
const hasJava = requireJava();
/** The core's browser-safe Parquet reader, when this build exports it from the barrel. */
const readParquet = (core as unknown as Record<string, unknown>).readParquetBloomFilters as
  | ((
      bytes: Uint8Array,
    ) => Promise<{ rowGroup: number; column: string; filter: { has(v: string): boolean } }[]>)
  | undefined;

/**
 * Where the screenshots go: docs/screenshots/ (the README shows them) when BLOOMKIT_SCREENSHOTS=1,
 * else nowhere (a test run leaves the repository as it was, and skips the PNG encoding).
 */
const SHOTS_ENV = process.env.BLOOMKIT_SCREENSHOTS ?? '';
const SHOTS =
  SHOTS_ENV === '1'
    ? join(import.meta.dirname, '../docs/screenshots')
    : SHOTS_ENV.startsWith('/')
      ? SHOTS_ENV
      : '';
/** The widths every view is shown at: a laptop and a phone. */
const WIDTHS = [1280, 390] as const;

type Shape = Record<string, number | string>;

/** The shape `create({ capacity, fpp })` gives each type, read off real filters. */
function libraryShape(kind: string, n: number, p: number): Shape {
  switch (kind) {
    case 'classic': {
      const f = BloomFilter.create({ capacity: n, fpp: p });
      return { kind, bits: f.bitSize, hashes: f.hashes };
    }
    case 'blocked': {
      const f = BlockedBloomFilter.create({ capacity: n, fpp: p });
      return { kind, blocks: f.blocks, hashes: f.hashes };
    }
    case 'split-block':
      return { kind, blocks: SplitBlockBloomFilter.create({ capacity: n, fpp: p }).blocks };
    case 'counting': {
      const f = CountingBloomFilter.create({ capacity: n, fpp: p });
      return { kind, counters: f.counterSize, hashes: f.hashes };
    }
    case 'cuckoo': {
      const f = CuckooFilter.create({ capacity: n, fpp: p });
      return { kind, buckets: f.bucketCount, fingerprintBits: f.fingerprintBits };
    }
    case 'binary-fuse': {
      const fingerprintBits = p >= 2 ** -8 ? 8 : 16;
      // Above 250,000 keys, the cells of the sizing the build itself runs (fuseShape), which
      // binary-fuse.test.ts checks against a filter built from 10^6 keys: building one here as
      // well cost about a second of CPU for the same number.
      if (n > 250_000) return { kind, keys: n, cells: fuseShape(n).arrayLength, fingerprintBits };
      const f = core.BinaryFuseFilter.build(
        Array.from({ length: n }, (_, i) => `key-${i}`),
        { fingerprintBits },
      );
      return { kind, keys: n, cells: f.fingerprints.length, fingerprintBits: f.fingerprintBits };
    }
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

/** The library's model rate for a shape after n keys (each type's documented formula). */
function libraryRate(s: Shape, n: number): number {
  const num = (k: string): number => s[k] as number;
  switch (s.kind) {
    case 'classic':
      return falsePositiveRate(n, num('bits'), num('hashes'));
    case 'counting':
      return falsePositiveRate(n, num('counters'), num('hashes'));
    case 'blocked':
      return blockedFalsePositiveRate(n / num('blocks'), num('hashes'));
    case 'split-block':
      return splitBlockFalsePositiveRate(n / num('blocks'));
    case 'binary-fuse':
      return 2 ** -num('fingerprintBits');
    default: {
      // CuckooFilter.expectedFpp(): 1 − (1 − 1/(2^f − 1))^(8·load)
      const load = n / (4 * num('buckets'));
      return -Math.expm1(8 * load * Math.log1p(-1 / (2 ** num('fingerprintBits') - 1)));
    }
  }
}

/**
 * The same double up to rounding: Chromium's V8 and Node's may differ in the last bit of
 * `Math.pow` and friends, so rates are compared to 1e-14 relative.
 */
function expectSameRate(actual: number, expected: number, what = ''): void {
  expect(Math.abs(actual - expected), `${what} ${actual} vs ${expected}`).toBeLessThanOrEqual(
    1e-14 * Math.abs(expected),
  );
}

/** A raw GET (no URL normalization by the client): status and content type. */
function rawGet(
  url: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url), { path, method }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode!, type: String(res.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('serveStatic', () => {
  it('serves the files of its folder and nothing outside it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'bloomkit-serve-'));
    const dir = join(root, 'site');
    mkdirSync(dir);
    writeFileSync(join(dir, 'index.html'), '<h1>x</h1>');
    writeFileSync(join(dir, 'app.js'), 'void 0');
    writeFileSync(join(root, 'secret.txt'), 'secret');
    const server = await serveStatic(dir);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(await rawGet(server.url, '/')).toEqual({
        status: 200,
        type: 'text/html; charset=utf-8',
      });
      expect((await rawGet(server.url, '/app.js')).type).toBe('text/javascript; charset=utf-8');
      for (const path of [
        '/../secret.txt',
        '/%2e%2e/secret.txt',
        '/..%2fsecret.txt',
        '/nope.html',
        '/%00',
      ]) {
        expect((await rawGet(server.url, path)).status, path).toBeGreaterThanOrEqual(400);
      }
      expect((await rawGet(server.url, '/', 'POST')).status).toBe(405);
      expect((await rawGet(server.url, '/', 'HEAD')).status).toBe(200);
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
    await expect(serveStatic(dir, { port: 70000 })).rejects.toThrow(
      /port must be an integer from 0 to 65535, got 70000/,
    );
  });
});

describe.skipIf(!CHROMIUM)('the web page in headless Chromium', () => {
  let out: string;
  let profile: string;
  let server: StaticServer;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const requests: string[] = [];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'bloomkit-web-'));
    profile = mkdtempSync(join(tmpdir(), 'bloomkit-chromium-'));
    await buildWeb(out);
    server = await serveStatic(out);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM!,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => errors.push(e.message));
    context.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await context?.close();
    await server?.close();
    for (const dir of [out, profile]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Saves a full-page screenshot of the current view, scrolled to the top. */
  const shot = async (name: string): Promise<void> => {
    await page.evaluate('window.scrollTo(0, 0)');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };

  const open = async (hash: string): Promise<void> => {
    await page.goto(`${server.url}${hash}`);
    await page.waitForSelector('main section:not([hidden]) h1');
  };

  it('calculator: every type has the shape and rate of the library for (n, p)', async () => {
    await open('#calculator');
    const grid: [number, number][] = [
      [1000, 0.01],
      [1_000_000, 0.01],
      [12_345, 0.05],
      [250_000, 0.001],
      [777, 1e-5],
    ];
    for (const [n, p] of grid) {
      await page.fill('#calc-n', String(n));
      await page.fill('#calc-p', String(p));
      const rows = await page.$$eval('#compare tbody tr', (trs) =>
        trs.map((tr) => ({
          kind: tr.getAttribute('data-kind'),
          shape: tr.getAttribute('data-shape'),
          p: Number(tr.getAttribute('data-p')),
        })),
      );
      // The codec table's order (type ids).
      expect(rows.map((r) => r.kind)).toEqual([
        'classic',
        'counting',
        'cuckoo',
        'blocked',
        'split-block',
        'binary-fuse',
      ]);
      for (const row of rows) {
        if (row.kind === 'binary-fuse' && p < 2 ** -16) {
          // Its rate is 2^-8 or 2^-16, so a lower p has no binary fuse filter.
          expect(row.shape).toBeNull();
          continue;
        }
        const shape = JSON.parse(row.shape!) as Shape;
        expect(shape, `${row.kind} n=${n} p=${p}`).toEqual(libraryShape(row.kind!, n, p));
        expectSameRate(row.p, libraryRate(shape, n), `${row.kind} n=${n} p=${p}`);
      }
    }
    await page.fill('#calc-n', '1000000');
    await page.fill('#calc-p', '1%');
    await page.locator('#calc-p').blur();
    await shot('calculator');
  });

  it('calculator: (n, m), (m, p) and k solve as the library does, with sizes such as 64 MiB', async () => {
    await open('#calculator?type=classic&n=100000&m=1%20MiB');
    const read = async () =>
      page.$$eval('#compare tbody tr', (trs) =>
        Object.fromEntries(
          trs.map((tr) => [
            tr.getAttribute('data-kind'),
            {
              shape: JSON.parse(tr.getAttribute('data-shape') ?? 'null'),
              p: Number(tr.getAttribute('data-p')),
              n: Number(tr.getAttribute('data-n')),
            },
          ]),
        ),
      );
    let r = await read();
    const m = 8 * 2 ** 20;
    expect(r.classic.shape).toEqual({
      kind: 'classic',
      bits: m,
      hashes: optimalNumOfHashFunctions(100_000, m),
    });
    expectSameRate(r.classic.p, falsePositiveRate(100_000, m, r.classic.shape.hashes));
    expect(r.blocked.shape.blocks).toBe(m / 512);
    expectSameRate(
      r.blocked.p,
      blockedFalsePositiveRate(100_000 / (m / 512), r.blocked.shape.hashes),
    );
    expectSameRate(r['split-block'].p, splitBlockFalsePositiveRate(100_000 / (m / 256)));
    expect(r.counting.shape.counters).toBe(m / 4);

    // (m, p): the most keys whose rate stays at or below p.
    await open('#calculator?type=classic&m=64%20MiB&p=0.001&k=10');
    r = await read();
    const bits = 64 * 8 * 2 ** 20;
    expect(r.classic.shape).toEqual({ kind: 'classic', bits, hashes: 10 });
    expect(falsePositiveRate(r.classic.n, bits, 10)).toBeLessThanOrEqual(0.001);
    expect(falsePositiveRate(r.classic.n + 1, bits, 10)).toBeGreaterThan(0.001);
    const z = bits / 256;
    expect(splitBlockFalsePositiveRate(r['split-block'].n / z)).toBeLessThanOrEqual(0.001);
    expect(splitBlockFalsePositiveRate((r['split-block'].n + 1) / z)).toBeGreaterThan(0.001);

    // A size far too small for n: p = 1 and no lower bound, as calc says (not ∞ or NaN); a
    // cuckoo table of 40 bits takes 8 bytes, as create and info say.
    await open('#calculator?type=classic&n=1000000000&m=64');
    expect(await page.textContent('#view-calculator [data-out="p"]')).toBe('100%');
    const bound = await page.textContent('#view-calculator .bound');
    expect(bound).toContain('no lower bound');
    expect(`${bound} ${await page.textContent('#compare')}`).not.toMatch(/∞|NaN/);
    await open('#calculator?type=cuckoo&n=1&p=0.01');
    expect(await page.getAttribute('#view-calculator [data-out="bytes"]', 'data-value')).toBe('8');

    // Bad input is named, with what the field takes, not guessed.
    for (const p of ['1.5', '2']) {
      await page.fill('#calc-p', p);
      expect(await page.getAttribute('#calc-p', 'aria-invalid')).toBe('true');
      expect(await page.textContent('#view-calculator .status')).toBe(
        `p must be a rate between 0 and 1, both excluded (0.01, 1%, 1/1000), got “${p}”`,
      );
    }
  });

  it('live filter: a typed key lights exactly the bits the library computes', async () => {
    await open('#live');
    const shape = JSON.parse((await page.getAttribute('#live-cells', 'data-shape'))!);
    expect(shape.kind).toBe('classic');
    await page.fill('#live-key', 'hello');
    await page.press('#live-key', 'Enter');
    const lit = await page.$$eval('#live-cells .cell.probe', (els) =>
      els.map((e) => Number(e.getAttribute('data-i'))),
    );
    const expected = new BloomFilter({ bits: shape.bits, hashes: shape.hashes }).indexesOf('hello');
    expect(lit.sort((a, b) => a - b)).toEqual([...new Set(expected)].sort((a, b) => a - b));

    // Blocked filter: after the same keys, the page's set bits are the library filter's.
    await page.click('label[for="live-type-blocked"]');
    const bshape = JSON.parse((await page.getAttribute('#live-cells', 'data-shape'))!);
    const node = new BlockedBloomFilter({ blocks: bshape.blocks, hashes: bshape.hashes });
    for (const key of ['hello', 'world', 'bloom', 'filter']) {
      if (key !== 'hello') {
        await page.fill('#live-key', key);
        await page.press('#live-key', 'Enter');
      }
      node.add(key);
    }
    const on = await page.$$eval('#live-cells .cell.on', (els) =>
      els.map((e) => Number(e.getAttribute('data-i'))),
    );
    const want: number[] = [];
    for (let i = 0; i < node.bitSize; i++) if (node.bits.get(i)) want.push(i);
    expect(on.sort((a, b) => a - b)).toEqual(want);
    // Checking a key says why, and agrees with the library.
    await page.fill('#live-check', 'absent-key');
    await page.press('#live-check', 'Enter');
    expect(await page.getAttribute('#live-why', 'data-answer')).toBe(
      String(node.has('absent-key')),
    );
    expect(await page.textContent('#live-why')).toContain('absent-key');

    // Counting: the lit counters are `indexesOf`. Cuckoo: after the same keys in the same order,
    // every slot of the page's table holds what the library's table holds.
    const typed = ['hello', 'world', 'bloom', 'filter'];
    await page.click('label[for="live-type-counting"]');
    // The blocked filter's explanation does not stay under the counting filter.
    expect(await page.textContent('#live-why')).toBe('');
    expect(await page.getAttribute('#live-why', 'data-answer')).toBeNull();
    const cshape = JSON.parse((await page.getAttribute('#live-cells', 'data-shape'))!);
    await page.fill('#live-key', 'counted');
    await page.press('#live-key', 'Enter');
    const litCounters = await page.$$eval('#live-cells .cell.probe', (els) =>
      els.map((e) => Number(e.getAttribute('data-i'))),
    );
    const counting = new CountingBloomFilter({ counters: cshape.counters, hashes: cshape.hashes });
    expect(litCounters.sort((a, b) => a - b)).toEqual(
      [...new Set(counting.indexesOf('counted'))].sort((a, b) => a - b),
    );
    typed.push('counted');
    await page.click('label[for="live-type-cuckoo"]');
    const kshape = JSON.parse((await page.getAttribute('#live-cells', 'data-shape'))!);
    const cuckoo = new CuckooFilter({
      buckets: kshape.buckets,
      fingerprintBits: kshape.fingerprintBits,
    });
    for (const key of typed) cuckoo.add(key);
    const slots = await page.$$eval('#live-cells .cell', (els) =>
      els.map((e) => Number.parseInt(e.textContent || '0', 16)),
    );
    const f = cuckoo.fingerprintBits;
    const librarySlots = slots.map((_, s) => {
      let v = 0;
      for (let b = f - 1; b >= 0; b--) {
        const bit = s * f + b;
        v = v * 2 + ((cuckoo.table[bit >>> 5]! >>> (bit & 31)) & 1);
      }
      return v;
    });
    expect(slots).toEqual(librarySlots);
    expect(slots.filter((v) => v !== 0).length).toBe(typed.length);

    await page.click('label[for="live-type-classic"]');
    await page.click('text=Add 10 words');
    await page.fill('#live-key', 'hello');
    await page.press('#live-key', 'Enter');
    await page.fill('#live-check', 'nope');
    await page.press('#live-check', 'Enter');
    await shot('live');
  });

  it.skipIf(!hasJava)('inspector: reads a Guava file written by Java and checks keys', async () => {
    const inserts = Array.from({ length: 300 }, (_, i) => `guava:${i}`);
    const probes = ['guava:7', 'guava:299', 'never:1', 'never:2', 'never:3'];
    const java = guavaBuild({ funnel: 'string', n: 500, fpp: 0.01, inserts, probes });
    const file = join(out, 'guava-filter.bin');
    writeFileSync(file, java.bytes);
    await open('#inspector');
    await page.setInputFiles('#inspect-file', file);
    await page.waitForSelector('#inspect-result [data-out="estimated"]');
    expect(await page.textContent('#inspect-result [data-out="type"]')).toContain('Guava');
    const estimated = Number(
      await page.getAttribute('#inspect-result [data-out="estimated"]', 'data-value'),
    );
    expect(estimated).toBe(java.approxCount);
    const fpr = Number(await page.getAttribute('#inspect-result [data-out="fpr"]', 'data-value'));
    expect(fpr).toBe(java.expectedFpp);
    await page.fill('#inspect-keys', probes.join('\n'));
    await page.click('#view-inspector button[type="submit"]');
    const answers = await page.$$eval('#inspect-answers li', (lis) =>
      lis.map((li) => li.getAttribute('data-answer') === 'true'),
    );
    expect(answers).toEqual(java.probeResults);
    expect(answers.slice(0, 2)).toEqual([true, true]);
    await shot('inspector');
  });

  it.skipIf(readParquet === undefined)(
    'inspector: reads the Bloom filters of a Parquet file written by DuckDB',
    async () => {
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const file = join(out, 'values.parquet');
      const db = await DuckDBInstance.create();
      const con = await db.connect();
      await con.run('SET threads = 1');
      await con.run(
        // DuckDB writes a filter for a dictionary-encoded column: few distinct values per group.
        `COPY (SELECT 'user-' || (i % 500) AS s FROM range(20480) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 10240)`,
      );
      con.closeSync();
      const { readFileSync } = await import('node:fs');
      const entries = await readParquet!(new Uint8Array(readFileSync(file)));
      expect(entries.length).toBeGreaterThan(0);
      await open('#inspector');
      await page.setInputFiles('#inspect-file', file);
      await page.waitForSelector('#inspect-parts tbody tr');
      expect(await page.textContent('#inspect-result [data-out="type"]')).toContain('Parquet');
      expect(await page.$$eval('#inspect-parts tbody tr', (r) => r.length)).toBe(entries.length);
      const probes = ['user-1', 'user-499', 'user-500', 'nobody'];
      await page.fill('#inspect-keys', probes.join('\n'));
      await page.click('#view-inspector button[type="submit"]');
      const answers = await page.$$eval('#inspect-answers li', (lis) =>
        lis.map((li) => li.getAttribute('data-answer') === 'true'),
      );
      expect(answers).toEqual(
        probes.map((v) => entries.some((e) => e.column === 's' && e.filter.has(v))),
      );
      expect(answers.slice(0, 2)).toEqual([true, true]);
    },
  );

  it('inspector: reads a binary fuse filter, an MLBF cascade and a DCSO bloom file, and answers as the library', async () => {
    const include = Array.from({ length: 2000 }, (_, i) => `in:${i}`);
    const exclude = Array.from({ length: 3000 }, (_, i) => `out:${i}`);
    const probes = ['in:0', 'in:1999', 'out:0', 'out:2999', 'other'];
    const fuse = core.BinaryFuseFilter.build(include);
    const cascade = core.FilterCascade.build({ include, exclude });
    const dcso = core.DcsoBloomFilter.create({ capacity: 2000, fpp: 0.01 });
    for (const k of include) dcso.add(k);
    const files: [string, Uint8Array, string, { has(k: string): boolean }][] = [
      // DCSO bloom's own file format, read by the page too.
      ['dcso.bloom', dcso.toDcso(), 'filter', dcso],
      ['fuse.blmk', fuse.toBytes(), 'Binary fuse', fuse],
      ['cascade.mlbf', cascade.toMlbf(), 'MLBF', cascade],
    ];
    await open('#inspector');
    for (const [name, bytes, type, filter] of files) {
      const file = join(out, name);
      writeFileSync(file, bytes);
      await page.setInputFiles('#inspect-file', file);
      await page.waitForSelector(`#inspect-result [data-out="type"]:has-text("${type}")`);
      await page.fill('#inspect-keys', probes.join('\n'));
      await page.click('#view-inspector button[type="submit"]');
      const answers = await page.$$eval('#inspect-answers li', (lis) =>
        lis.map((li) => li.getAttribute('data-answer') === 'true'),
      );
      expect(answers, name).toEqual(probes.map((k) => filter.has(k)));
      expect(answers.slice(0, 2), name).toEqual([true, true]);
    }
    expect(await page.$$eval('#inspect-parts tbody tr', (r) => r.length)).toBe(
      cascade.layers.length,
    );
  });

  it('inspector: the funnel selector only for the formats that need it; tiny rates as 1 in 4.2e18; a scalable fill map shows each layer', async () => {
    await open('#inspector');
    const funnelRow = async () =>
      page.$eval('#inspect-funnel', (e) => {
        const row = e.parentElement as unknown as { hidden: boolean } & typeof e;
        return row.hidden ? null : row.querySelector('label')!.textContent;
      });
    const load = async (name: string, bytes: Uint8Array | string, type: string) => {
      const file = join(out, name);
      writeFileSync(file, bytes);
      await page.setInputFiles('#inspect-file', file);
      // Each load says its file's name in the status line once read.
      // (A function, not a string: the page's CSP forbids eval.)
      await page.waitForFunction((n) => {
        type Doc = { querySelector(s: string): { textContent: string | null } | null };
        const doc = (globalThis as unknown as { document: Doc }).document;
        return doc.querySelector('#view-inspector .status')?.textContent?.startsWith(`${n}:`);
      }, name);
      expect(await page.getAttribute('#view-inspector', 'data-state')).toBe(type);
    };
    // A classic filter with few keys: a rate of about 1e-43, in one short line.
    const sparse = BloomFilter.create({ capacity: 10_000, fpp: 1e-6 });
    for (let i = 0; i < 100; i++) sparse.add(`k${i}`);
    await load('sparse.blmk', sparse.toBytes(), 'ok');
    const expected = (1 / sparse.expectedFpp()).toPrecision(2).replace('e+', 'e');
    expect(await page.textContent('#inspect-result .tile:last-child .tile-sub')).toBe(
      `1 in ${expected}`,
    );
    expect(expected).toMatch(/^\d\.\de\d+$/);
    expect(await funnelRow()).toBeNull();
    // Guava bytes: the selector, named for Guava; then a text file: gone; an MLBF: not Guava's.
    await load('classic.guava', sparse.toGuava(), 'ok');
    expect(await funnelRow()).toBe('Guava funnel');
    await load('keys.txt', 'apple\nbanana\n', 'error');
    expect(await funnelRow()).toBeNull();
    await load('guava-again.bin', sparse.toGuava(), 'ok');
    const cascade = core.FilterCascade.build({ include: ['a', 'b'], exclude: ['c', 'd'] });
    await load('cascade.mlbf', cascade.toMlbf(), 'ok');
    expect(await funnelRow()).not.toContain('Guava');
    // A scalable filter with four full layers and a fifth filling: the map is not one flat band.
    const scalable = core.ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    for (let i = 0; i < 20_000; i++) scalable.add(`s${i}`);
    const fills = scalable.layers().map((l, i) => scalable.layer(i).bitCount / l.bits);
    expect(fills.length).toBeGreaterThanOrEqual(3);
    await load('scalable.blmk', scalable.toBytes(), 'ok');
    const [first, last] = await page.$eval('#inspect-result canvas.fillmap', (c) => {
      const canvas = c as unknown as {
        width: number;
        getContext(kind: '2d'): {
          getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
        } | null;
      };
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, 1).data;
      // Mean lightness (R + G + B) of the first and the last twentieth of the map.
      const mean = (from: number, to: number) => {
        let sum = 0;
        for (let x = from; x < to; x++) sum += data[4 * x]! + data[4 * x + 1]! + data[4 * x + 2]!;
        return sum / (to - from);
      };
      const w = canvas.width;
      const part = Math.floor(w / 20);
      return [mean(0, part), mean(w - part, w)];
    });
    // The first layer is full (about half its bits set), the last one far less: lighter.
    expect(fills[0]!).toBeGreaterThan(fills[fills.length - 1]! + 0.2);
    expect(last! - first!).toBeGreaterThan(60);
  });

  it('plots: measured false positive rates fall within binomial tolerance of the model', async () => {
    await open('#plots?type=classic&n=20000&p=0.05');
    await page.waitForSelector('#view-plots[data-measure="done"]', { timeout: 60_000 });
    const points = await page.$$eval('#measured tbody tr', (trs) =>
      trs.map((tr) => ({
        kind: tr.getAttribute('data-kind'),
        trials: Number(tr.getAttribute('data-trials')),
        positives: Number(tr.getAttribute('data-positives')),
        model: Number(tr.getAttribute('data-model')),
      })),
    );
    expect(new Set(points.map((p) => p.kind))).toEqual(
      new Set(['classic', 'blocked', 'split-block', 'counting', 'cuckoo']),
    );
    expect(points.length).toBeGreaterThanOrEqual(45);
    for (const pt of points) {
      // 4 binomial standard deviations, plus 3% of the rate for the models' own approximation.
      const expected = pt.trials * pt.model;
      const sigma = Math.sqrt(expected * (1 - pt.model));
      expect(Math.abs(pt.positives - expected), JSON.stringify(pt)).toBeLessThanOrEqual(
        4 * sigma + 0.03 * expected + 1,
      );
    }
    await shot('plots');
  });

  it('every view at 1280 px and on a 390-px phone: nothing wider than the screen, every tab in view', async () => {
    const scalable = core.ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    for (let i = 0; i < 20_000; i++) scalable.add(`s${i}`);
    const file = join(out, 'scalable-shot.blmk');
    writeFileSync(file, scalable.toBytes());
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const view of ['calculator', 'plots', 'live', 'inspector']) {
        await open(`#${view}`);
        if (view === 'live') await page.click('text=Add 10 words');
        if (view === 'inspector') {
          await page.setInputFiles('#inspect-file', file);
          await page.waitForSelector('#inspect-result canvas.fillmap');
        }
        const where = `${view} at ${width} px`;
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        expect(overflow, where).toBeLessThanOrEqual(0);
        const tabs = await page.$eval('.tabs', (ul) => ({
          scrolls: ul.scrollWidth > ul.clientWidth,
          cut: [...ul.querySelectorAll('a')]
            .filter((a) => {
              const r = a.getBoundingClientRect();
              return (
                r.left < 0 ||
                r.right > (globalThis as unknown as { innerWidth: number }).innerWidth ||
                a.scrollWidth > a.clientWidth
              );
            })
            .map((a) => a.textContent),
        }));
        expect(tabs, where).toEqual({ scrolls: false, cut: [] });
        if (SHOTS) {
          await page.evaluate('window.scrollTo(0, 0)');
          await page.screenshot({ path: join(SHOTS, `${view}-${width}.png`), fullPage: true });
        }
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('on narrower phones too (360 and 320 px) every tab is in view, none scrolled out', async () => {
    for (const width of [360, 320]) {
      await page.setViewportSize({ width, height: 740 });
      await open('#inspector');
      const cut = await page.$eval('.tabs', (ul) =>
        [...ul.querySelectorAll('a')]
          .filter((a) => {
            const r = a.getBoundingClientRect();
            return (
              ul.scrollWidth > ul.clientWidth ||
              r.left < 0 ||
              r.right > (globalThis as unknown as { innerWidth: number }).innerWidth ||
              a.scrollWidth > a.clientWidth
            );
          })
          .map((a) => a.textContent),
      );
      expect(cut, `${width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('reads on a phone-width screen and loads nothing from the network', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await open('#calculator?type=blocked&n=10M&p=0.1%25');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'phone.png'), fullPage: false });
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - window.innerWidth',
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1200, height: 900 });
    // Every control has a name a screen reader can read (a label, aria-label or its text).
    for (const view of ['#calculator', '#plots', '#live', '#inspector']) {
      await open(view);
      const unnamed = await page.$$eval(
        'main section:not([hidden]) :is(input, select, textarea, button)',
        (els) =>
          els
            .filter((e) => {
              const el = e as typeof e & { labels?: { length: number } | null };
              return (
                !el.labels?.length && !el.getAttribute('aria-label') && !el.textContent?.trim()
              );
            })
            .map((e) => e.outerHTML.slice(0, 80)),
      );
      expect(unnamed, view).toEqual([]);
    }
    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith(server.url) && !u.startsWith('blob:'))).toEqual([]);
  });
});
