/**
 * Record bounds from a separator search's positions: the one loop that turns the positions
 * hash/wasm/separators.wat found into where each record starts and ends, shared by the command's
 * record reader (cli/records.ts) and the worker threads' splitter (node/parallel-text.ts).
 *
 * The loop lives in a function of its own, not inline in its callers' outer loops: V8 compiles a
 * long-running loop while it runs (on-stack replacement), and compiled so inside a caller, the
 * code after the loop had no type feedback and fell back to the interpreter there on every batch,
 * now and then for a whole run (seen in about one run of four of `add --threads 2`, where the
 * worker's split took 4x its time, and in one run of three of a one-thread `add`: about 200
 * deoptimizations of the reader's batch).
 */

/**
 * Records `count` to `count + k - 1`: `found[j] - base` is the position of record j's separator,
 * the first record starts at `s`. Writes each record's start to `starts`, its key's end to
 * `keyEnds` (a `\r` before the separator dropped when `cr`), and, when given, the record's own end
 * (its separator's position, `\r` kept) to `ends`. Returns where the next record starts.
 */
export function recordBounds(
  found: Uint32Array,
  k: number,
  base: number,
  text: Uint8Array,
  s: number,
  count: number,
  starts: Uint32Array,
  keyEnds: Uint32Array,
  cr: boolean,
  ends?: Uint32Array,
): number {
  let start = s;
  for (let j = 0; j < k; j++) {
    const e = found[j]! - base;
    starts[count + j] = start;
    keyEnds[count + j] = cr && e > start && text[e - 1] === 0x0d ? e - 1 : e;
    if (ends !== undefined) ends[count + j] = e;
    start = e + 1;
  }
  return start;
}
