/** Waiting on a worker thread's reply, for tests that send jobs to long-lived workers. */
import type { Worker } from 'node:worker_threads';

/** The next message of `worker` (rejects on an error or an exit first); leaves no listener. */
export function nextMessage(worker: Worker): Promise<unknown> {
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
