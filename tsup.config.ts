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
import { defineConfig, type Options } from 'tsup';

const entry = { index: 'src/index.ts', node: 'src/node.ts', redis: 'src/redis.ts' };

/** The ESM build (also what test/bundle-size.test.ts builds and measures). */
export const esm: Options = {
  entry: ['src/**/*.ts'],
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

export default defineConfig(() => {
  // tsup builds the two configurations at once, so neither may clean the folder the other
  // writes: dist/ is emptied here, once, before both start (stale files would be packed).
  rmSync('dist', { recursive: true, force: true });
  return [esm, cjs];
});
