/**
 * The published build (`npm run build`, run by `prepack` and `prepare`).
 *
 * - ESM: one output file per source module (`bundle: false`), so that a bundler, told by
 *   `"sideEffects": false`, drops every module an application does not import: importing only
 *   `BloomFilter` pulls in the classic filter, its hashing and its format, and nothing else
 *   (test/bundle-size.test.ts measures it). One bundled chunk could only be pruned statement by
 *   statement, and any top-level call in it (a frozen table, a compiled module) would keep
 *   everything. The three entry points import the same module files, so `instanceof` holds across
 *   'bloomkit', 'bloomkit/node' and 'bloomkit/redis'.
 * - CommonJS: bundled per entry with the shared code split into one chunk (same `instanceof`
 *   guarantee), for `require()` users who do not tree-shake.
 * - `keepNames` only where the build itself bundles (CommonJS): the ESM files are transpiled one
 *   by one, which renames nothing, and `keepNames` there would add a `__name` call per function
 *   (about 7 kB to a one-filter browser bundle). An application's own bundler may still rename
 *   or minify classes, so no message or serialized field may depend on `constructor.name`.
 * - Declarations: bundled per entry (`index.d.ts` / `index.d.cts`, ...), from the same three
 *   entries.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { hotPathChunk } from './scripts/cli-chunks.js';
import { commandAsCommonJs } from './scripts/cli-commonjs.js';

const CLI_ENTRY = 'src/cli.ts';
/** Where the command's split ES build goes before it becomes CommonJS in dist/ (removed then). */
const CLI_ESM_DIR = 'dist/.cli-esm';
const WORKER_ENTRY = 'src/node/parallel-worker.ts';

const entry = { index: 'src/index.ts', node: 'src/node.ts', redis: 'src/redis.ts' };

/** The ESM build (also what test/bundle-size.test.ts builds and measures). */
export const esm: Options = {
  // The command is bundled on its own (below); its modules are no part of the library.
  entry: ['src/**/*.ts', '!src/cli.ts', '!src/cli/**'],
  format: ['esm'],
  bundle: false,
  // The node and redis entries need Node's types; the core is checked without them by tsc.
  dts: { entry, compilerOptions: { types: ['node'] } },
  sourcemap: true,
  target: 'es2022',
};

const cjs: Options = {
  entry,
  format: ['cjs'],
  dts: { entry, compilerOptions: { types: ['node'] } },
  sourcemap: true,
  target: 'es2022',
  splitting: true,
  keepNames: true,
  // `import.meta.url` (how an ES module finds its own files) becomes the CommonJS file's URL.
  shims: true,
};

/**
 * The `bloomkit` command (package.json "bin": dist/cli.cjs), bundled: start-up then reads a few
 * files instead of every module of the library (measured: 0.26 s of CPU for `--version` from
 * the one-file-per-module build, 0.12 s bundled, 0.07 s for Node itself). Parts few runs need
 * (other commands and filter types, Redis, Parquet, serve) stay in chunks loaded on demand;
 * the code a plain `add` or `check` runs is one shared file (scripts/cli-chunks.ts: 0.89 times
 * the CPU of the 34 files esbuild cut it into before); dist/cli-worker.cjs is what the command's
 * worker threads (`--threads`) load. esbuild splits ES modules only: the split build is written
 * to a folder of its own, then each of its files becomes a CommonJS file in dist/
 * (scripts/cli-commonjs.ts: a CommonJS entry starts for less than an ES module one).
 */
const cli: Options = {
  entry: { cli: CLI_ENTRY, 'cli-worker': WORKER_ENTRY },
  outDir: CLI_ESM_DIR,
  esbuildPlugins: [
    hotPathChunk({
      root: fileURLToPath(new URL('.', import.meta.url)),
      entry: CLI_ENTRY,
      apart: [WORKER_ENTRY],
    }),
  ],
  format: ['esm'],
  platform: 'node',
  // Inline, so that the CommonJS conversion chains the maps back to src/.
  sourcemap: 'inline',
  target: 'es2022',
  splitting: true,
  // Bundled too: as external packages their many module files would be loaded at each start.
  noExternal: ['hyparquet', '@noble/hashes', 'csv-parse'],
  // Every command file gets the prefix `cli-` (the library's CommonJS chunks are `chunk-*.cjs`).
  esbuildOptions(options) {
    options.chunkNames = 'cli-[name]-[hash]';
  },
  async onSuccess() {
    await commandAsCommonJs(CLI_ESM_DIR, 'dist', { sourcemap: true, removeFrom: true });
  },
};

export default defineConfig(() => {
  // tsup builds the configurations at once, so none may clean the folder another writes:
  // dist/ is emptied here, once, before they start (stale files would be packed).
  rmSync('dist', { recursive: true, force: true });
  return [esm, cjs, cli];
});
