/**
 * Long application work that an abort settles at once: a step (the next page of a database scan,
 * a batch of writes) is raced against the signal, so a source stuck on a lock or a slow query
 * cannot hold the caller; the abandoned source is asked to close and never waited for.
 */

import type { AbortSignalLike } from '../filters/filter.js';

export interface AbortRace {
  /** `work`, or a rejection with the abort reason as soon as the signal aborts. */
  race<T>(work: Promise<T>): Promise<T>;
  /** Stops listening to the signal. */
  dispose(): void;
}

/**
 * Races work against `signal`: rejects with `reason()` at the abort event itself when the signal
 * has `addEventListener` (an `AbortSignal`); a signal without it (`{ aborted }` only) is seen
 * by the caller's checks between steps.
 */
export function abortRace(signal: AbortSignalLike | undefined, reason: () => unknown): AbortRace {
  const target = signal as
    | (AbortSignalLike & {
        addEventListener?(type: 'abort', listener: () => void, options?: object): void;
        removeEventListener?(type: 'abort', listener: () => void): void;
      })
    | undefined;
  if (typeof target?.addEventListener !== 'function') {
    return { race: (work) => work, dispose: () => {} };
  }
  let listener = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    listener = () => reject(reason());
  });
  aborted.catch(() => undefined); // rejected only when raced, or never looked at
  target.addEventListener('abort', listener, { once: true });
  return {
    race: (work) => Promise.race([work, aborted]),
    dispose: () => target.removeEventListener?.('abort', listener),
  };
}

export type Source<K> = Iterator<K | readonly K[]> | AsyncIterator<K | readonly K[]>;

/** The iterator of a sync or async iterable (a sync one's steps are awaited alike). */
export function iteratorOf<K>(keys: Iterable<K | readonly K[]> | AsyncIterable<K | readonly K[]>): {
  next(): Promise<IteratorResult<K | readonly K[]>>;
  source: Source<K>;
} {
  const source: Source<K> =
    Symbol.asyncIterator in keys
      ? (keys as AsyncIterable<K | readonly K[]>)[Symbol.asyncIterator]()
      : (keys as Iterable<K | readonly K[]>)[Symbol.iterator]();
  return { next: async () => source.next(), source };
}

/** Asks an abandoned source to close (`return()`), ignoring how and whether it answers. */
export function closeQuietly<K>(iterator: { source: Source<K> }): void {
  try {
    const closing = iterator.source.return?.();
    if (closing instanceof Promise) closing.catch(() => undefined);
  } catch {
    // The source failed to close: nothing more to do for it.
  }
}
