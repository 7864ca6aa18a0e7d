/**
 * Starts a TypeScript file as a worker thread through tsx's `tsImport` (a `--import tsx`
 * execArgv does not reach worker entry points on Node 20), for tests whose workers are .ts files.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** tsx's ESM API, located through its package.json exports. */
const TSX_API = (() => {
  const pkgPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
})();

/** A worker running the TypeScript module at `url` with `workerData`. */
export function startTsWorker(url: string, workerData: unknown): Worker {
  const bootstrap = `import(${JSON.stringify(TSX_API)}).then(({ tsImport }) => tsImport(${JSON.stringify(url)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** The first message `worker` posts (rejects on an error or a non-zero exit first). */
export function nextMessage<T>(worker: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`worker exited with code ${code}`));
    worker.once('message', (m: T) => {
      worker.off('exit', onExit);
      resolve(m);
    });
    worker.once('error', reject);
    worker.once('exit', onExit);
  });
}
