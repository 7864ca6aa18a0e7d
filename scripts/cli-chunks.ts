/**
 * How the `bloomkit` command's bundle is cut into files (an esbuild plugin, used by
 * tsup.config.ts for dist/cli.js and by test/support/cli-build.ts for the tests' and benchmarks'
 * build of the same command).
 *
 * esbuild's code splitting puts each piece of code in a file by the set of entry points that
 * reach it, and every `import()` target counts as an entry point: the command's lazy table of
 * commands and of filter types thus cut the code a plain `add` or `check` runs into some 34 small
 * files, and Node's ES module loader pays for each (resolve, stat, read, compile, link): about
 * 0.1 s of CPU in all for a run with empty input, 1.9 times Node's own start-up.
 *
 * The HOT PATH is the code a plain `add` or `check` of a classic filter file runs (`main`,
 * `add`, `check`, the classic type's codec and the file lock: {@link HOT_ROOTS} and the code
 * they reach by static imports). This plugin makes every entry point, the command's own and
 * each `import()` target, also reach all of the hot path (through one virtual module that
 * re-exports the roots), so that the hot path's code has one set of entry points and lands in
 * one shared file; the rest is still split as before and loaded only when a run needs it (other
 * commands, other filter types, Redis, Parquet, zlib). Entry points listed in `apart` (the
 * worker threads' entry) are left as they are, so that a worker does not load the command's
 * code; the hot path's part that the worker also uses then forms a second file. A wrapper passes
 * on its module's named exports (`export *`), not a default export: `import()` targets in src/
 * have named exports only.
 */

import { dirname, resolve } from 'node:path';
import type { Plugin } from 'esbuild';

/**
 * Where the code a plain `add` or `check` of a classic filter file runs starts: what `src/cli.ts`
 * imports (`main`), and the `import()` targets such a run loads.
 */
export const HOT_ROOTS = [
  'src/cli/main.ts',
  'src/cli/commands/add.ts',
  'src/cli/commands/check.ts',
  'src/filters/bloom/codec.ts',
  'src/node/file-lock.ts',
];

const HOT_MODULE = 'bloomkit-hot-path';
const WRAPPED = 'bloomkit-entry';

export interface HotPathOptions {
  /** The package's root folder (esbuild's absWorkingDir). */
  root: string;
  /** The command's entry point (`src/cli.ts`): its output file keeps the `#!` line. */
  entry: string;
  /** Entry points left as they are (the worker threads' entry). */
  apart?: readonly string[];
}

/** The esbuild plugin that puts the hot path in one file (see the comment at the top). */
export function hotPathChunk({ root, entry, apart = [] }: HotPathOptions): Plugin {
  const abs = (path: string) => resolve(root, path);
  const apartPaths = new Set(apart.map(abs));
  return {
    name: 'bloomkit-hot-path',
    setup(b) {
      // The roots' exports, and so all code they reach by static imports (esbuild keeps and
      // places code statement by statement: an export of a module on the way that the hot
      // path never uses is not pulled in).
      const hotModule = HOT_ROOTS.map(
        (path, i) => `export * as m${i} from ${JSON.stringify(abs(path))};`,
      ).join('\n');

      // Each entry point and import() target becomes a wrapper: the module itself, plus the hot
      // path (whose exports a namespace that escapes keeps alive).
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'entry-point' && args.kind !== 'dynamic-import') return undefined;
        if (args.pluginData === WRAPPED || args.importer.includes('node_modules')) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: WRAPPED,
        });
        if (resolved.errors.length > 0 || resolved.external) return undefined;
        if (apartPaths.has(resolved.path) || resolved.path.includes('node_modules')) {
          return resolved;
        }
        return { path: resolved.path, namespace: WRAPPED };
      });
      // The module inside its wrapper keeps its own top-level code (the entry's `main()` call),
      // though package.json says "sideEffects": false and the wrapper uses none of its exports.
      b.onResolve({ filter: /.*/ }, (args) =>
        args.namespace === WRAPPED && args.path !== HOT_MODULE
          ? { path: args.path, sideEffects: true }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: WRAPPED }, (args) => {
        const real = JSON.stringify(args.path);
        const hashbang = args.path === abs(entry) ? '#!/usr/bin/env node\n' : '';
        return {
          contents: `${hashbang}export * from ${real};\nexport * as __hotPath from ${JSON.stringify(HOT_MODULE)};\n`,
          resolveDir: dirname(args.path),
          loader: 'ts',
        };
      });
      b.onResolve({ filter: new RegExp(`^${HOT_MODULE}$`) }, () => ({
        path: HOT_MODULE,
        namespace: HOT_MODULE,
      }));
      b.onLoad({ filter: /.*/, namespace: HOT_MODULE }, () => ({
        contents: hotModule,
        resolveDir: root,
        loader: 'ts',
      }));
    },
  };
}
