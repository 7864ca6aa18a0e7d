/**
 * The core runs in a real browser: the browser-safe entry point is bundled with esbuild, served
 * on loopback and run in headless Chromium (Debian's package). The page computes hashes, Guava
 * bytes, native bytes and answers for a fixed set of keys; they must equal what Node computes and
 * the Guava vectors. Chromium is required in CI (it fails, not skips, when missing there).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as bloomkit from '../src/index.js';
import {
  bundleCore,
  CHROMIUM_ARGS,
  type PageServer,
  requireChromium,
  servePages,
} from './support/chromium.js';

const CHROMIUM = requireChromium('browser test');

/** Runs in the page (and in Node): everything observable about the core for fixed keys. */
function probe(lib: typeof bloomkit) {
  const hex = (b: Uint8Array): string =>
    Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  const strings = [
    '',
    'a',
    'hello',
    '日本語',
    '😀',
    '\ud800',
    'x\udc00y',
    'https://example.com/item/1',
  ];
  const f = lib.BloomFilter.create({ capacity: 1000, fpp: 0.01 });
  for (const s of strings) f.add(s);
  const longs = lib.BloomFilter.create({ capacity: 100, fpp: 0.03, funnel: 'long' });
  for (const v of [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n)]) longs.add(v);
  const probes: boolean[] = [];
  for (let i = 0; i < 2000; i++) probes.push(f.has(`probe-${i}`));
  return {
    murmur: strings.map((s) =>
      lib.murmur3x64_128(lib.keyBytes('string', s)).map((x) => x.toString(16)),
    ),
    indexesA: f.indexesOf('a'),
    guava: hex(f.toGuava()),
    guavaLongs: hex(longs.toGuava()),
    native: hex(f.toBytes()),
    probes: probes.map((p) => (p ? '1' : '0')).join(''),
    roundTrip: (lib.fromBytes(f.toBytes()) as bloomkit.BloomFilter).equals(f),
    estimated: f.estimatedCount(),
  };
}

describe.skipIf(!CHROMIUM)('in headless Chromium', () => {
  let server: PageServer;
  let dir: string;
  let url = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bloomkit-browser-'));
    const js = await bundleCore();
    const page = `<!doctype html><meta charset="utf-8"><pre id="out">pending</pre>
<script type="module">
import * as lib from './bloomkit.js';
const probe = ${probe.toString()};
try { document.getElementById('out').textContent = JSON.stringify(probe(lib)); }
catch (e) { document.getElementById('out').textContent = 'ERROR ' + e; }
</script>`;
    server = await servePages({
      '/': { body: page, headers: { 'content-type': 'text/html; charset=utf-8' } },
      '/bloomkit.js': { body: js, headers: { 'content-type': 'text/javascript' } },
    });
    url = `${server.origin}/`;
  });

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('computes the same hashes, bytes and answers as Node and Guava', async () => {
    const args = [
      ...CHROMIUM_ARGS,
      `--user-data-dir=${join(dir, 'profile')}`,
      '--virtual-time-budget=10000',
      '--dump-dom',
      url,
    ];
    // Asynchronous spawn: the page is served from this process's event loop.
    const result = await new Promise<{ stdout: string; stderr: string; code: number | null }>(
      (resolve) => {
        const p = spawn(CHROMIUM!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d) => {
          stdout += d;
        });
        p.stderr.on('data', (d) => {
          stderr += d;
        });
        const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
        p.on('close', (code) => {
          clearTimeout(timer);
          resolve({ stdout, stderr, code });
        });
      },
    );
    const match = /<pre id="out">([\s\S]*?)<\/pre>/.exec(result.stdout);
    expect(
      match,
      `no result in the page; chromium said: ${result.stderr.slice(-2000)}`,
    ).not.toBeNull();
    const text = match![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    expect(text.startsWith('ERROR'), text).toBe(false);
    const inBrowser = JSON.parse(text);
    expect(inBrowser).toEqual(probe(bloomkit));
    // Guava vectors (shared/REFERENCE.md §1.6).
    expect(inBrowser.murmur[1]).toEqual(['85555565f6597889', 'e6b53a48510e895a']);
    expect(inBrowser.indexesA).toEqual([6793, 6883, 8765, 1047, 2929, 4811, 4901]);
    expect(inBrowser.guava.slice(0, 12)).toBe('010700000096');
  });
});
