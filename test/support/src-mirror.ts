/**
 * The sources under test, compiled to JavaScript once per run (vitest's `globalSetup`), so that
 * test workers load them with Node's own ESM loader and no TypeScript hooks.
 *
 * Vitest's module runner would turn each `import { x }` into a property read through a getter on
 * the exporting module's object, at every use: in the hot paths, where a filter calls the hasher,
 * the key encoder and the table helpers of other modules per key, the same code ran about twice
 * as slow as in Node (measured in a test worker: cuckoo add 1.2-1.4 µs per key against
 * 0.47-0.57 µs, Bloom has 0.31-0.49 µs against 0.17-0.21 µs). vitest.config.ts therefore sends
 * every import that resolves into src/ to the same file of this mirror, left to Node
 * (`server.deps.external`); test files and their support code stay with vitest.
 *
 * The mirror is `.test-src/` in the repository root: at the depth of src/, so that what a module
 * finds beside itself through `import.meta.url` (the worker script beside the parallel pool, the
 * built web page in dist/web) is where it would be from src/. Each file is esbuild's one-to-one
 * compile of its source (no bundling, imports kept), with a linked source map: the workers turn
 * Node's source maps on (test/support/native-src.ts), so a stack through bloomkit names the line
 * of the .ts file. A file is rewritten only when its output changed, by a rename (a run going on
 * at the same time never reads half a file); a file whose source is gone is removed.
 *
 * This replaced Node's module hooks (tsx registered in each worker), which compiled the same
 * sources on a thread of their own in every worker process and passed every import through it
 * (measured, whole runs alternating on 2 cores: vitest 111.5 and 115.4 s from the mirror against
 * 125.6 and 119.5 s through the hooks; the machine's busy CPU 219-225 s against 233-241 s).
 */
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The sources and their mirror (absolute, ending in the path separator's '/'). */
export const SRC_DIR = join(ROOT, 'src/');
export const MIRROR_DIR = join(ROOT, '.test-src/');

/** Every file below `dir` (absolute paths). */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesBelow(path));
    else out.push(path);
  }
  return out;
}

/** The mirror's file for a source file (`src/a/b.ts` -> `.test-src/a/b.js`). */
export function mirrorOf(source: string): string {
  return join(MIRROR_DIR, relative(SRC_DIR, source)).replace(/\.ts$/, '.js');
}

/** Writes `bytes` to `path` unless it already holds them; atomically, by a rename. */
function writeIfChanged(path: string, bytes: Uint8Array): void {
  try {
    if (Buffer.compare(readFileSync(path), bytes) === 0) return;
  } catch {
    // Not there yet.
  }
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, bytes);
  renameSync(temp, path);
}

/** Compiles src/ into the mirror (vitest's `globalSetup`). */
export default async function setup(): Promise<void> {
  const sources = filesBelow(SRC_DIR).filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'));
  const result = await build({
    entryPoints: sources,
    outbase: SRC_DIR,
    outdir: MIRROR_DIR,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    write: false,
    logLevel: 'error',
  });
  const wanted = new Set<string>();
  for (const file of result.outputFiles) {
    wanted.add(file.path);
    writeIfChanged(file.path, file.contents);
  }
  // Files whose source is gone, and temporary files a stopped run left (not another run's, which
  // live for milliseconds).
  for (const path of filesBelow(MIRROR_DIR)) {
    if (wanted.has(path)) continue;
    const st = statSync(path, { throwIfNoEntry: false });
    if (st === undefined || (path.endsWith('.tmp') && Date.now() - st.mtimeMs < 60_000)) continue;
    rmSync(path, { force: true });
  }
}
