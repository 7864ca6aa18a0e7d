/**
 * The sources under test run as Node.js runs ESM: vitest.config.ts leaves every file under src/
 * to Node's own loader (`server.deps.external`), and this setup file gives Node the TypeScript
 * hooks (tsx, the same transform as `npm start` and the benchmarks) before the first test file
 * imports them.
 *
 * Vitest's own module runner would instead turn each `import { x }` into a property read through
 * a getter on the exporting module's object, at every use: in the hot paths, where a filter
 * calls the hasher, the key encoder and the table helpers of other modules per key, that made the
 * same code about twice as slow as in Node (measured in a test worker: cuckoo add 1.2-1.4 µs per
 * key against 0.47-0.57 µs, Bloom has 0.31-0.49 µs against 0.17-0.21 µs). The tests then measured
 * the module runner as much as bloomkit, and paid for it: twelve CPU-bound files ran in 54-58 s
 * instead of 64 s on one worker.
 *
 * The price: Node.js runs the hooks on a thread of their own, and every import of the worker
 * passes through it, about 3 s of CPU per worker process in a full run (a minimal hand-written
 * loader cost the same). The whole suite on one worker still took 217 s of CPU instead of 224 s
 * and 203 s of wall time instead of 222 s.
 *
 * Stack traces: vitest formats every stack itself and maps only the modules its runner loaded,
 * so a frame in src/ would show its position in tsx's output (`native.ts:1:1735`). The source map
 * that Node keeps for each module it compiled (tsx turns source maps on) is handed to vitest's
 * mapper for src/ files, so failures point at the line of the source (`native.ts:174:11`). The
 * mapper is vite-node's, vitest's own dependency: the module its workers install.
 *
 * Registered once per worker process (a setup file runs again for each test file); the hooks
 * belong to this thread only, so worker threads and child processes that tests start load what
 * they loaded before (bundles, the built package).
 */
import { findSourceMap } from 'node:module';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';
import { installSourcemapsSupport } from 'vite-node/source-map';

const SRC = new URL('../../src/', import.meta.url).href;

const state = globalThis as { bloomkitNativeSrc?: boolean };
if (state.bloomkitNativeSrc !== true) {
  state.bloomkitNativeSrc = true;
  register();
  installSourcemapsSupport({
    getSourceMap(source) {
      const url = source.startsWith('/') ? pathToFileURL(source).href : source;
      const payload = url.startsWith(SRC) ? findSourceMap(url)?.payload : undefined;
      if (payload === undefined) return null;
      // tsx names the source by its absolute URL; vitest's mapper resolves names against the
      // file's own URL, so it gets the file name.
      const sources = payload.sources.map((s) =>
        s.startsWith('file:') ? s.slice(s.lastIndexOf('/') + 1) : s,
      );
      return { ...payload, sources } as ReturnType<
        Parameters<typeof installSourcemapsSupport>[0]['getSourceMap']
      >;
    },
  });
}
