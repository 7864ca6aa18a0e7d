/**
 * The Web Worker that measures false positive rates (see measure.ts) off the page's thread.
 * Messages in: a MeasureRequest. Messages out: { type: 'point', point }, { type: 'progress',
 * done, total }, then { type: 'done' } or { type: 'error', message }.
 */

import { type MeasureRequest, measure } from './measure.js';

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<MeasureRequest>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  try {
    let lastPost = 0;
    measure(
      e.data,
      (point) => scope.postMessage({ type: 'point', point }),
      (done, total) => {
        const now = Date.now();
        if (now - lastPost > 50 || done === total) {
          lastPost = now;
          scope.postMessage({ type: 'progress', done, total });
        }
      },
    );
    scope.postMessage({ type: 'done' });
  } catch (err) {
    scope.postMessage({ type: 'error', message: (err as Error).message });
  }
};
