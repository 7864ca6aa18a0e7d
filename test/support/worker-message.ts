/**
 * Jobs for long-lived worker threads (test/parallel.test.ts, test/shared-bits.test.ts): a worker
 * takes one job per message, prepares, posts 'ready', waits on a start gate (slot 0 of a shared
 * Int32Array), does the job and posts its result.
 */
import type { Worker } from 'node:worker_threads';

/** The next message of `worker` (rejects on an error or an exit first); leaves no listener. */
function nextMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const off = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (m: unknown) => {
      off();
      resolve(m);
    };
    const onError = (e: Error) => {
      off();
      reject(e);
    };
    const onExit = (code: number) => {
      off();
      reject(new Error(`worker exited with code ${code}`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/**
 * Sends `jobs[i]` to `workers[i]`, waits until every worker is ready, opens `gate` (the jobs'
 * start gate) so that they all start at once, and resolves to their results, in order.
 */
export async function releaseTogether(
  workers: readonly Worker[],
  jobs: readonly unknown[],
  gate: SharedArrayBuffer,
): Promise<unknown[]> {
  const ready = Promise.all(workers.map(nextMessage));
  workers.forEach((w, i) => {
    w.postMessage(jobs[i]);
  });
  await ready;
  const done = Promise.all(workers.map(nextMessage));
  const flag = new Int32Array(gate);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  return done;
}
