/**
 * `share()` / `fromShared()` across browser Web Workers, in real headless Chromium.
 *
 * The browser-safe core is bundled with esbuild and served on loopback twice: under /isolated/
 * with `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`
 * (a cross-origin-isolated page, which has `SharedArrayBuffer`), and under /plain/ without them.
 *
 * On the isolated page, for each type that can share its memory (classic, blocked, split-block,
 * counting), the page creates a shared filter and posts `share()`'s handle to 4 module Web
 * Workers that import the same bundle. They open it with `fromShared`, wait at a gate, and are
 * released together to add their own disjoint keys as fast as they can (the counting filter's
 * workers also remove some of their own keys as they go). Afterwards the page finds every key
 * that was added and not removed, and the filter's bytes equal those of a filter built on one
 * thread in Node from the same operations (for the classic filter, the Guava bytes too). A handle
 * that was copied instead of shared would leave the page's filter empty; a lost bit or counter
 * change would show in the bytes.
 *
 * On the plain page `SharedArrayBuffer` is missing, and every way into shared memory throws
 * `SharedMemoryUnavailableError` naming cross-origin isolation and the two headers (also checked
 * in Node with the global removed).
 * Chromium is required in CI (the file fails, not skips, when it is missing there).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as bloomkit from '../src/index.js';
import {
  bundleCore,
  launchChromium,
  type PageServer,
  requireChromium,
  servePages,
} from './support/chromium.js';
import {
  type BrowserGlobals,
  classes,
  operations,
  type PageReport,
  type SharedType,
  sharedPageSources,
  type tryShared,
  type WorkerReport,
} from './support/shared-page.js';

const CHROMIUM = requireChromium('browser Web Worker test');

const TYPES: readonly SharedType[] = ['classic', 'blocked', 'split-block', 'counting'];
const WORKERS = 4;
const KEYS_PER_WORKER = 20_000;
const FPP = 0.01;
/**
 * The counting filter's shape: 2^12 counters (2 KiB), far denser than `create` would make it, so
 * that workers change counters of the same byte at the same moment (with a plain
 * read-modify-write instead of the compare-and-swap loop, this test failed in about half of its
 * runs on the loaded 2-core machine it was written on). Most keys are removed soon after their
 * add, so no counter can reach 15 in any interleaving (checked by `peakBound`): past 15 the
 * result would depend on the order.
 */
const COUNTING_SHAPE = { counters: 1 << 12, hashes: 3 };
/** What every way into shared memory says where there is none. */
const NEEDS_ISOLATION =
  'SharedArrayBuffer needs a cross-origin-isolated page: serve it with ' +
  'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';

/** The shape each type is tested at: what `create` gives for all keys at `FPP`, but counting. */
function shapeOf(type: SharedType): object {
  if (type === 'counting') return COUNTING_SHAPE;
  return classes(bloomkit)
    [type].create({ capacity: WORKERS * KEYS_PER_WORKER, fpp: FPP })
    .shape();
}

/** The same filter built by one thread in Node from the same operations, in worker order. */
function sequential(type: SharedType) {
  const mixed = type === 'counting';
  const filter = new (classes(bloomkit)[type])(shapeOf(type));
  for (let w = 0; w < WORKERS; w++) {
    for (const [op, key] of operations(w, KEYS_PER_WORKER, mixed)) {
      if (op === 'add') filter.add(key);
      else (filter as bloomkit.CountingBloomFilter).remove(key);
    }
  }
  return filter;
}

/** How many keys are added and not removed, over all workers. */
function liveKeys(mixed: boolean): number {
  let live = 0;
  for (let w = 0; w < WORKERS; w++) {
    const present = new Set<string>();
    for (const [op, key] of operations(w, KEYS_PER_WORKER, mixed)) {
      if (op === 'add') present.add(key);
      else present.delete(key);
    }
    live += present.size;
  }
  return live;
}

/**
 * An upper bound on any counter's value at any moment of any interleaving of the workers'
 * counting operations: at every moment a worker has added to counter c at most the most it ever
 * holds from that worker alone (its own timeline, replayed on a private filter), and the workers'
 * contributions add up. Below 15 no counter saturates, so every interleaving ends in the
 * sequential result.
 */
function peakBound(): number {
  const bound = new Uint32Array(COUNTING_SHAPE.counters);
  for (let w = 0; w < WORKERS; w++) {
    const own = new bloomkit.CountingBloomFilter<string>(COUNTING_SHAPE);
    const most = new Uint8Array(COUNTING_SHAPE.counters);
    for (const [op, key] of operations(w, KEYS_PER_WORKER, true)) {
      if (op === 'remove') {
        own.remove(key);
        continue;
      }
      own.add(key);
      for (const i of own.indexesOf(key)) most[i] = Math.max(most[i]!, own.counters.get(i));
    }
    for (let i = 0; i < bound.length; i++) bound[i]! += most[i]!;
  }
  return Math.max(...bound);
}

/** Equal hex strings, or a failure naming the first differing byte (not a 200 kB diff). */
function expectSameHex(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && actual[i] === expected[i]) i++;
  const at = Math.floor(i / 2);
  expect.fail(
    `${what}: ${actual.length / 2} bytes vs ${expected.length / 2}, first difference at byte ${at}: ` +
      `${actual.slice(at * 2, at * 2 + 16)} vs ${expected.slice(at * 2, at * 2 + 16)}`,
  );
}

const hexOf = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('without SharedArrayBuffer (in Node, the global removed)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('every way into shared memory says what is missing and what a page needs', () => {
    const plain = bloomkit.BloomFilter.create({ capacity: 10, fpp: 0.1 });
    vi.stubGlobal('SharedArrayBuffer', undefined);
    for (const f of [
      () => bloomkit.SplitBlockBloomFilter.create({ capacity: 10, fpp: 0.1, shared: true }),
      () => new bloomkit.SharedCounterArray(8),
      () => plain.share(),
    ]) {
      expect(f).toThrow(bloomkit.SharedMemoryUnavailableError);
      expect(f).toThrow(NEEDS_ISOLATION);
    }
  });
});

describe.skipIf(!CHROMIUM)('share() across Web Workers in headless Chromium', () => {
  let server: PageServer;
  let browser: Browser;
  let isolated: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    const core = await bundleCore();
    const { html, worker } = sharedPageSources();
    const isolation = {
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    };
    const js = { 'content-type': 'text/javascript; charset=utf-8' };
    const htmlType = { 'content-type': 'text/html; charset=utf-8' };
    server = await servePages({
      '/isolated/': { body: html, headers: { ...htmlType, ...isolation } },
      '/isolated/bloomkit.js': { body: core, headers: { ...js, ...isolation } },
      '/isolated/worker.js': { body: worker, headers: { ...js, ...isolation } },
      '/isolated/worker-without-coep.js': { body: worker, headers: js },
      '/plain/': { body: html, headers: htmlType },
      '/plain/bloomkit.js': { body: core, headers: js },
      '/plain/worker.js': { body: worker, headers: js },
    });
    browser = await launchChromium();
    isolated = await browser.newPage();
    isolated.on('pageerror', (e) => errors.push(e.message));
    await isolated.goto(`${server.origin}/isolated/`);
    await isolated.waitForFunction(() => 'bloomkitTest' in globalThis);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the page is cross-origin isolated and has SharedArrayBuffer', async () => {
    const facts = await isolated.evaluate(() => ({
      isolated: (globalThis as unknown as BrowserGlobals).crossOriginIsolated,
      sab: typeof SharedArrayBuffer,
    }));
    expect(facts).toEqual({ isolated: true, sab: 'function' });
  });

  it("a worker starts only when its script has the page's Cross-Origin-Embedder-Policy", async () => {
    // A bad handle makes a started worker answer with its error; a refused one fires `error`.
    const start = (url: string) =>
      isolated.evaluate(
        (u) =>
          new Promise<string>((resolve) => {
            const g = globalThis as unknown as BrowserGlobals;
            const w = new g.Worker(u, { type: 'module' });
            const timer = setTimeout(() => resolve('no answer'), 20_000);
            const end = (outcome: string) => {
              clearTimeout(timer);
              w.terminate();
              resolve(outcome);
            };
            w.onmessage = (e) => end(`started: ${(e.data as WorkerReport).error}`);
            w.onerror = () => end('refused');
            w.postMessage({ handle: null });
          }),
        url,
      );
    expect(await start('./worker.js')).toMatch(/^started: TypeError: /);
    expect(await start('./worker-without-coep.js')).toBe('refused');
  });

  for (const type of TYPES) {
    const what =
      type === 'counting'
        ? `${WORKERS} workers adding and removing`
        : `${WORKERS} workers adding disjoint keys`;
    it(`${type}: ${what} on one shared filter lose nothing and equal one thread's filter`, async () => {
      const report = (await isolated.evaluate(
        ([t, shape, w, n]) =>
          (
            globalThis as unknown as {
              bloomkitTest: { runShared: (...a: unknown[]) => Promise<PageReport> };
            }
          ).bloomkitTest.runShared(t, shape, w, n),
        [type, shapeOf(type), WORKERS, KEYS_PER_WORKER] as const,
      )) as PageReport;
      expect(report.isolated).toBe(true);
      expect(report.sharedArrayBuffer).toBe('function');
      expect(report.workers.map((r) => r.error ?? 'ok')).toEqual(Array(WORKERS).fill('ok'));
      expect(report.workers.map((r) => r.isolated)).toEqual(Array(WORKERS).fill(true));
      const opsPerWorker = operations(0, KEYS_PER_WORKER, type === 'counting').length;
      expect(report.workers.map((r) => r.done)).toEqual(Array(WORKERS).fill(opsPerWorker));
      // Every key added (and, for counting, not removed) is found by the page.
      expect(report.checked).toBe(liveKeys(type === 'counting'));
      expect(report.missing).toEqual([]);
      const one = sequential(type);
      if (one instanceof bloomkit.CountingBloomFilter) {
        // Counter changes commute only below saturation.
        expect(peakBound()).toBeLessThan(bloomkit.COUNTER_MAX);
      }
      expectSameHex(report.bytes, hexOf(one.toBytes()), `${type} toBytes()`);
      if (one instanceof bloomkit.BloomFilter) {
        expectSameHex(report.guava!, hexOf(one.toGuava()), 'Guava bytes');
      }
      expect(errors).toEqual([]);
    });
  }

  it('without COOP/COEP, shared filters fail with SharedMemoryUnavailableError naming isolation and the headers', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${server.origin}/plain/`);
      await page.waitForFunction(() => 'bloomkitTest' in globalThis);
      const r = (await page.evaluate(() =>
        (
          globalThis as unknown as { bloomkitTest: { tryShared: () => unknown } }
        ).bloomkitTest.tryShared(),
      )) as ReturnType<typeof tryShared>;
      expect(r.isolated).toBe(false);
      expect(r.sharedArrayBuffer).toBe('undefined');
      expect(r.exported).toBe('function');
      const failures = { ...r.create, share: r.share, fromShared: r.fromShared };
      for (const [where, { name, message }] of Object.entries(failures)) {
        expect(name, `${where}: ${message}`).toBe('SharedMemoryUnavailableError');
        expect(message, where).toBe(NEEDS_ISOLATION);
      }
    } finally {
      await page.close();
    }
  });
});
