/**
 * Measuring a filter's real false positive rate as it fills: insert keys `key:0, key:1, …`
 * into a real filter of the given shape and, at each checkpoint, ask it about `trials` keys that
 * were never inserted (`absent:0, …`). The positives among them are a binomial sample of the
 * filter's rate at that load. Runs in the Web Worker (measure-worker.ts); pure, so that it can be
 * read and tested on its own.
 */

import { FilterFullError } from '../../src/index.js';
import { makeFilter, modelRate, type Shape } from './kinds.js';

export interface MeasureRequest {
  readonly shapes: readonly Shape[];
  /** Keys inserted at each checkpoint (increasing). */
  readonly checkpoints: readonly number[];
  /** Absent keys asked at each checkpoint. */
  readonly trials: number;
}

export interface MeasuredPoint {
  readonly kind: Shape['kind'];
  readonly keys: number;
  readonly trials: number;
  readonly positives: number;
  /** The model rate at `keys` (the line the point is plotted against). */
  readonly model: number;
}

/**
 * Runs `request`, calling `onPoint` for each measured point and `onProgress(done, total)` in
 * units of filter operations. A cuckoo filter that fills up ends its series early.
 */
export function measure(
  request: MeasureRequest,
  onPoint: (point: MeasuredPoint) => void,
  onProgress: (done: number, total: number) => void,
): void {
  const last = request.checkpoints[request.checkpoints.length - 1] ?? 0;
  const total = request.shapes.length * (last + request.checkpoints.length * request.trials);
  let done = 0;
  for (const shape of request.shapes) {
    const filter = makeFilter(shape);
    let inserted = 0;
    let previous = 0;
    series: for (const target of request.checkpoints) {
      for (; inserted < target; inserted++) {
        try {
          filter.add(`key:${inserted}`);
        } catch (e) {
          if (e instanceof FilterFullError) break series;
          throw e;
        }
      }
      let positives = 0;
      for (let i = 0; i < request.trials; i++) if (filter.has(`absent:${i}`)) positives++;
      done += target - previous + request.trials;
      previous = target;
      onPoint({
        kind: shape.kind,
        keys: target,
        trials: request.trials,
        positives,
        model: modelRate(shape, target),
      });
      onProgress(done, total);
    }
  }
  onProgress(total, total);
}
