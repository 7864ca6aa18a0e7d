/**
 * Worker code and programs for tests, bundled with esbuild (tsup's engine, and tsx's). A worker
 * started from a bundle loads plain JavaScript (~0.05 s of CPU); one started through tsx
 * (test/support/ts-worker.ts) compiles bloomkit's sources again in every thread (~0.8 s of CPU
 * each), which made the worker tests cost more than everything they check. The same holds for a
 * child process run with `node --import tsx`.
 *
 *   const path = await bundleWorker(new URL('./support/worker-race.ts', import.meta.url));
 *   const worker = new Worker(path, { workerData });
 *
 *   const node = await importNodeBundle(); // bloomkit/node built from src, as dist/node.js is
 *   await node.buildParallel(keys, { workers: 4, ... }); // its workers load the built files
 *
 * The workers and programs the test files run are built together, once for all test files, and
 * cached on disk while the sources are unchanged (test/support/program-build.ts); any other entry
 * is bundled from the current sources into a temporary folder that `removeBundles()` (in
 * `afterAll`) deletes. `bloomkit/node` is the command build's (cached on disk the same way).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { cliBuild } from './cli-build.js';
import { programBuild, programName } from './program-build.js';

type NodeApi = typeof import('../../src/node.js');

let folder: string | undefined;
const built = new Map<string, Promise<string>>();

let root: string | undefined;

function outDir(): string {
  if (folder === undefined) {
    root = mkdtempSync(join(tmpdir(), 'bloomkit-workers-'));
    // Under a node_modules folder, vitest leaves the bundles to Node's own loader: it would
    // otherwise transform the 0.5 MB bundle as a source module (seconds) before running it.
    folder = join(root, 'node_modules', 'bloomkit-test-bundles');
    mkdirSync(folder, { recursive: true });
  }
  return folder;
}

/**
 * Removes the bundles' folder: call it from `afterAll` in each test file that bundles (vitest
 * ends its worker processes without an 'exit' event, so nothing else would).
 */
export function removeBundles(): void {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
  folder = undefined;
  built.clear();
}

/**
 * Bundles `entry` (a .ts file URL or path) with everything it imports, npm packages included
 * (but `external`), into `<name>`.
 */
function bundle(entry: URL | string, name: string, external: string[] = []): Promise<string> {
  const source = entry instanceof URL ? fileURLToPath(entry) : entry;
  const key = `${source} -> ${name}`;
  let out = built.get(key);
  const shared = programName(source);
  if (out === undefined && shared !== undefined) {
    // One of the programs built together for all test files (program-build.ts).
    out = programBuild().then((dir) => join(dir, `${shared}.mjs`));
    built.set(key, out);
  } else if (out === undefined) {
    const outfile = join(outDir(), name);
    out = build({
      entryPoints: [source],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outfile,
      external,
      logLevel: 'error',
      // ESM output that still lets bundled CommonJS call require().
      banner: {
        js: "import { createRequire as __bkRequire } from 'node:module'; const require = __bkRequire(import.meta.url);",
      },
    }).then(() => outfile);
    built.set(key, out);
  }
  return out;
}

/** The path of a one-file ESM bundle of the worker module `entry`, for `new Worker(path)`. */
export function bundleWorker(entry: URL | string): Promise<string> {
  const source = entry instanceof URL ? fileURLToPath(entry) : entry;
  return bundle(entry, `${basename(source).replace(/\.ts$/, '')}.mjs`);
}

/**
 * The path of a one-file ESM bundle of the program `entry` (its npm packages inside, so it runs
 * from the temporary folder), for `node <path>`: what `node --import tsx <entry>` runs, without
 * compiling the sources at every start.
 */
export function bundleProgram(entry: URL | string): Promise<string> {
  const source = entry instanceof URL ? fileURLToPath(entry) : entry;
  const name = `${basename(dirname(source))}-${basename(source).replace(/\.ts$/, '')}.mjs`;
  // pg's optional native binding is loaded only if installed (a require in a try).
  return bundle(entry, name, ['pg-native']);
}

/**
 * `bloomkit/node` bundled from src/node.ts into one `node.js`, imported. Its worker pools
 * (`buildParallel`, `FilterWorkerPool`) start their threads on this same file, as they do from
 * the published dist/node.js, instead of compiling the sources through tsx in each thread.
 * Objects it makes are instances of the bundle's classes, not of src's: compare them with
 * objects made by the same bundle, or through bytes.
 */
export async function importNodeBundle(): Promise<NodeApi> {
  return (await import(/* @vite-ignore */ pathToFileURL(await bundleNode()).href)) as NodeApi;
}

/**
 * The path of that `bloomkit/node` bundle (see {@link importNodeBundle}): the `node.js` of the
 * command's build (test/support/cli-build.ts), built once for all test files and kept while the
 * sources are unchanged. Its worker pools start their threads on the `cli-worker.js` beside it.
 */
export async function bundleNode(): Promise<string> {
  return join(await cliBuild(), 'node.js');
}
