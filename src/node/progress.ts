/**
 * Checks shared by the long operations of bloomkit/node (chunked builds, sidecar builds) that take
 * {@link ProgressOptions}: the options are checked before any I/O, and `throwIfAborted` is called
 * between steps, throwing `signal.reason` as `AbortSignal.throwIfAborted` does. `save` and `load`
 * call `checkAborted`, which throws the same reason but a `DOMException` named `AbortError` when
 * the signal has none.
 */

import { show } from '../errors.js';
import type { AbortSignalLike, ProgressOptions } from '../filters/filter.js';

/** Throws `signal.reason` (or an `Error` when it has none) if `signal` is aborted. */
export function throwIfAborted(signal: AbortSignalLike | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new Error('the operation was aborted');
}

/** Throws a `TypeError` for a `signal` or `onProgress` of the wrong kind; then `throwIfAborted`. */
export function checkProgress(options: ProgressOptions): void {
  const { signal, onProgress } = options;
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) {
    throw new TypeError(`signal must be an AbortSignal, got ${show(signal)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new TypeError(`onProgress must be a function, got ${show(onProgress)}`);
  }
  throwIfAborted(signal);
}

/** Throws the signal's reason (an `AbortError` by default) when it is aborted. */
export function checkAborted(options: ProgressOptions | undefined): void {
  const signal = options?.signal;
  if (signal?.aborted) {
    throw signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
  }
}
