/**
 * The published build (dist/) for tests that need it whole: built once and reused while it is
 * newer than everything it is built from. A fresh clone gets dist/ from `npm ci` (the `prepare`
 * hook builds it), so the package test does not build a second time; after an edit to src/ the
 * next run rebuilds.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** What `npm run build` reads: a change to any of these makes dist/ stale. */
const INPUTS = [
  'src',
  'web',
  'scripts/build-web.ts',
  'scripts/cli-chunks.ts',
  'scripts/cli-commonjs.ts',
  'tsup.config.ts',
  'package.json',
];
/** What `npm run build` writes that the package ships and the tests use. */
const OUTPUTS = [
  'dist/index.js',
  'dist/index.cjs',
  'dist/index.d.ts',
  'dist/node.d.cts',
  'dist/cli.cjs',
];

/** The newest modification time below `path` (ms), skipping built output and node_modules. */
function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'dist' || entry === 'node_modules') continue;
    max = Math.max(max, newest(join(path, entry)));
  }
  return max;
}

/** Whether dist/ exists and was built after the last change to its inputs. */
export function distIsFresh(): boolean {
  const outputs = OUTPUTS.map((p) => join(ROOT, p));
  if (!outputs.every((p) => existsSync(p))) return false;
  const built = Math.min(...outputs.map((p) => statSync(p).mtimeMs));
  const inputs = INPUTS.map((p) => join(ROOT, p)).filter((p) => existsSync(p));
  return Math.max(...inputs.map(newest)) < built;
}

/** Builds dist/ (`npm run build`) unless it is fresh; resolves to whether it built. */
export async function ensureDist(): Promise<boolean> {
  if (distIsFresh()) return false;
  await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT, maxBuffer: 64 << 20 });
  return true;
}
