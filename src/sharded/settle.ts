/** Many store calls at once, settled together with one promise (the windows' fan-out). */

/**
 * Calls `send(i)` for every i in [0, count) in one turn and waits until all have settled, with
 * one promise for the whole (no `Promise.allSettled` record per call): `out[i]` gets call i's
 * value, or stays `undefined` if it failed. Resolves to the first failure (`undefined` if none);
 * never rejects.
 */
export function settleAll<T>(
  count: number,
  send: (i: number) => Promise<T>,
  out: (T | undefined)[],
): Promise<unknown> {
  return new Promise((resolve) => {
    let left = count;
    let failure: unknown;
    if (left === 0) resolve(undefined);
    const fail = (err: unknown) => {
      failure ??= err;
      if (--left === 0) resolve(failure);
    };
    for (let i = 0; i < count; i++) {
      let sent: Promise<T>;
      try {
        sent = send(i);
      } catch (err) {
        fail(err);
        continue;
      }
      sent.then((value) => {
        out[i] = value;
        if (--left === 0) resolve(failure);
      }, fail);
    }
  });
}
