/**
 * Headless Chromium for browser tests: where Debian's binary is, the skip policy, the flags, the
 * browser-safe core bundled with esbuild, and a loopback server for a page's files.
 *
 * Skip policy: a test file calls `requireChromium(what)` at load time. Without the binary it
 * returns undefined and prints once why the file is skipped, or throws under CI (CI set to
 * anything but '', '0' or 'false'), so a CI run fails instead of silently skipping. A binary that
 * is present but cannot be launched fails the test everywhere.
 */
import { existsSync } from 'node:fs';
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';

/**
 * The system Chromium, or undefined when it is not installed: Chromium's headless shell first
 * (Debian's chromium-headless-shell, the build Playwright itself runs headless: the same Blink and
 * V8 without the desktop browser; the browser tests take about a quarter less CPU with it), else
 * the full browser (Debian's chromium) in headless mode.
 */
export const CHROMIUM = [
  '/usr/bin/chromium-headless-shell',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
].find((p) => existsSync(p));

/**
 * Headless, no sandbox (containers), and no traffic to anything but the test's own server. V8
 * collects on one thread in each page, as in the test workers (vitest.config.ts): the other
 * cores are busy with other test files (measured on the three browser test files: 29.5 and 29.1
 * s of machine CPU without, 27.4 and 27.9 s with).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--js-flags=--single-threaded-gc',
];

function isCI(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/**
 * The Chromium binary, or undefined (and a visible notice) when it is missing; throws under CI.
 * `what` names the skipped tests in the notice.
 */
export function requireChromium(what: string): string | undefined {
  if (CHROMIUM !== undefined) return CHROMIUM;
  if (isCI()) {
    throw new Error('Chromium is required in CI: apt-get install chromium-headless-shell');
  }
  console.warn(`${what} skipped: install Chromium (apt-get install chromium-headless-shell)`);
  return undefined;
}

/** Launches the system Chromium headless through playwright-core (throws when it is missing). */
export function launchChromium(): Promise<Browser> {
  if (CHROMIUM === undefined) throw new Error('Chromium is not installed');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * The core entry point (src/index.ts) bundled for the browser as one ES module, as an
 * application's bundler would: no `node:` import may survive, or the page fails to load it.
 */
export async function bundleCore(): Promise<string> {
  const bundle = await build({
    entryPoints: [join(import.meta.dirname, '../../src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0]!.text;
}

/** One response of a {@link servePages} server. */
export interface PageFile {
  readonly body: string;
  readonly headers: OutgoingHttpHeaders;
}

export interface PageServer {
  /** `http://127.0.0.1:port` (no trailing slash). */
  readonly origin: string;
  close(): Promise<void>;
}

/**
 * Serves `files` (by request path, query ignored) on 127.0.0.1 and a free port, each with its own
 * headers; anything else is a 404.
 */
export async function servePages(files: Readonly<Record<string, PageFile>>): Promise<PageServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const file = Object.hasOwn(files, path) ? files[path] : undefined;
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'cache-control': 'no-store', ...file.headers });
    res.end(file.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
