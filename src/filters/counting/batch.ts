/**
 * The counting filter's batch paths over packed keys: MurmurHash3 and the k MITZ_64 positions of
 * a whole chunk of keys in one WebAssembly call (`mitz64Batch`), then the counters, key by key in
 * order, with the same rules as `add` / `has` (a position the double hashing repeats counts
 * once). With `SharedCounterArray` storage each counter changes by compare-and-swap, so batches
 * from several threads lose no count.
 */
import type { CounterArray } from '../../bits/counters.js';
import type { Modulus } from '../../hash/strategies.js';
import { mitz64Chunks } from '../batch-chunks.js';
import type { PackedKeys } from '../filter.js';

const positions = new Float64Array(256);

/**
 * A key's distinct counter positions, from its k MITZ_64 probes (word indexes at `words[w]`, masks
 * at `masks[m]`, as `add` and the chunks hold them), into `out`; returns how many. A position the
 * double hashing repeats counts once, so add and remove stay symmetric.
 */
export function distinctPositions(
  words: Int32Array,
  w: number,
  masks: Int32Array,
  m: number,
  k: number,
  out: Float64Array,
): number {
  let n = 0;
  outer: for (let i = 0; i < k; i++) {
    const pos = words[w + i]! * 32 + 31 - Math.clz32(masks[m + i]!);
    for (let j = 0; j < n; j++) if (out[j] === pos) continue outer;
    out[n++] = pos;
  }
  return n;
}

/**
 * Adds keys [0, n) of `batch`, in order; returns how many were new (had a counter at 0). With
 * `out`, `out[i]` is 1 if key i was new, else 0.
 */
export function countingAddBatch(
  counters: CounterArray,
  batch: PackedKeys,
  n: number,
  k: number,
  mod: Modulus,
  out: Uint8Array | null = null,
): number {
  return mitz64Chunks(batch, n, k, mod, (p, w, start, stop) => {
    let added = 0;
    for (let j = start; j < stop; j++, w += 2 * k) {
      const m = distinctPositions(p, w, p, w + k, k, positions);
      let fresh = false;
      for (let i = 0; i < m; i++) if (counters.increment(positions[i]!) === 0) fresh = true;
      if (fresh) added++;
      if (out !== null) out[j] = fresh ? 1 : 0;
    }
    return added;
  });
}

/** Tests keys [0, n) of `batch`; `out[i]` is 1 if all of key i's counters are above 0, else 0. */
export function countingHasBatch(
  counters: CounterArray,
  batch: PackedKeys,
  n: number,
  k: number,
  mod: Modulus,
  out: Uint8Array,
): void {
  mitz64Chunks(batch, n, k, mod, (p, w, start, stop) => {
    for (let j = start; j < stop; j++, w += 2 * k) {
      let all = 1;
      for (let i = 0; i < k; i++) {
        if (counters.get(p[w + i]! * 32 + 31 - Math.clz32(p[w + k + i]!)) === 0) {
          all = 0;
          break;
        }
      }
      out[j] = all;
    }
    return 0;
  });
}
