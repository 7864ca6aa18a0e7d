/**
 * Builds the static page (web/) into dist/web: index.html, app.js + app.css (the page, uPlot
 * and the browser-safe core in one bundle) and measure-worker.js (the Web Worker). The folder is
 * plain files: serve it with `bloomkit serve` or any static server; it needs no network.
 *
 *   npm run build:web [-- --out DIR]
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_SOURCE = join(ROOT, 'web');
export const WEB_OUT = join(ROOT, 'dist/web');

/** Builds the page into `outDir` (replacing it); returns the files written. */
export async function buildWeb(outDir: string = WEB_OUT): Promise<string[]> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const common: BuildOptions = {
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022'],
    legalComments: 'eof',
    logLevel: 'warning',
  };
  await build({
    ...common,
    entryPoints: { app: join(WEB_SOURCE, 'src/main.ts') },
    outdir: outDir,
  });
  await build({
    ...common,
    entryPoints: { 'measure-worker': join(WEB_SOURCE, 'src/measure-worker.ts') },
    outdir: outDir,
  });
  await copyFile(join(WEB_SOURCE, 'index.html'), join(outDir, 'index.html'));
  return ['index.html', 'app.js', 'app.css', 'measure-worker.js'].map((f) => join(outDir, f));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]!) : WEB_OUT;
  const files = await buildWeb(out);
  console.log(`built ${files.length} files into ${out}`);
}
