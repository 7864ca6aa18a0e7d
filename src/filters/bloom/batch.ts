/**
 * The classic filter's batch paths over packed keys (`addBatch` / `hasBatch`), with the same
 * bits and answers as `add` / `has` key by key:
 *
 * - bits in a wasm kernel (the usual case, hash/hasher.ts): a chunk of keys is copied into the
 *   kernel, MurmurHash3 runs over all of them, then the MITZ_64 walks: two WebAssembly calls per
 *   chunk and no per-key JavaScript. A key longer than the kernel's key area takes the per-key
 *   path (`one`), which gives the same result.
 * - bits elsewhere (shared memory, small filters, no WebAssembly): MurmurHash3 and the k probe
 *   positions of a whole chunk in one call (`mitz64Batch`), then JavaScript tests or sets the
 *   bits through the storage (atomic for shared storage).
 */
import type { BitArray, BitStorage } from '../../bits/bit-array.js';
import type { BloomKernel } from '../../hash/hasher.js';
import type { Modulus } from '../../hash/strategies.js';
import { mitz64Chunks } from '../batch-chunks.js';
import type { PackedKeys } from '../filter.js';

/**
 * Runs the kernel over keys [0, n) of `batch` (packed keys, or an array of JavaScript strings
 * for the 'string' funnel, packed chunk by chunk into the kernel: `BloomKernel.strings`); `out[i]` gets key i's answer (test: 1/0; add:
 * the bits it set, or for a key taken by `one`, 1 if new). The bits the kernel sets are noted in
 * `plain` chunk by chunk (so a key that throws in `one` leaves the count right).
 */
export function kernelBatch(
  kernel: BloomKernel,
  batch: PackedKeys | readonly unknown[],
  n: number,
  k: number,
  mod: Modulus,
  add: boolean,
  out: Uint8Array,
  one: (i: number) => boolean,
  plain: BitArray,
): void {
  const strings = Array.isArray(batch);
  for (let start = 0; start < n; ) {
    const stop = strings
      ? kernel.strings(batch, start, n, k, mod, add, out)
      : kernel.batch(batch as PackedKeys, start, n, k, mod, add, out);
    if (stop === start) {
      out[start] = one(start) ? 1 : 0;
      start++;
      continue;
    }
    if (add) {
      let set = 0;
      for (let i = start; i < stop; i++) set += out[i]!;
      plain.noteSet(set);
    }
    start = stop;
  }
}

/**
 * {@link kernelBatch} as an add: returns how many keys were new; `out[i]`, when given, gets 1 if
 * key i was new, else 0 (as `add` key by key).
 */
export function kernelAdd(
  kernel: BloomKernel,
  batch: PackedKeys | readonly unknown[],
  n: number,
  k: number,
  mod: Modulus,
  out: Uint8Array | null,
  one: (i: number) => boolean,
  plain: BitArray,
): number {
  // The kernel writes each key's count of bits it set (nonzero: new), made 1/0 here.
  const set = out ?? scratchFlags(n);
  kernelBatch(kernel, batch, n, k, mod, true, set, one, plain);
  let added = 0;
  for (let i = 0; i < n; i++) {
    const fresh = set[i] === 0 ? 0 : 1;
    set[i] = fresh;
    added += fresh;
  }
  return added;
}

let flags = new Uint8Array(1024);

/** A reused byte array of at least `n` bytes (per-key results an add does not hand out). */
export function scratchFlags(n: number): Uint8Array {
  if (flags.length < n) flags = new Uint8Array(Math.max(n, 2 * flags.length));
  return flags;
}

/**
 * Adds keys [0, n) of `batch` through `bits`, in order; returns how many were new. With `out`,
 * `out[i]` is 1 if key i set a bit (was new), else 0.
 */
export function storageAddBatch(
  bits: BitStorage,
  batch: PackedKeys,
  n: number,
  k: number,
  mod: Modulus,
  out: Uint8Array | null = null,
): number {
  const data = bits.data;
  return mitz64Chunks(batch, n, k, mod, (p, w, start, stop) => {
    let added = 0;
    for (let j = start; j < stop; j++, w += 2 * k) {
      let any = false;
      for (let i = 0; i < k; i++) {
        const word = p[w + i]!;
        const mask = p[w + k + i]!;
        if ((data[word]! & mask) === 0 && bits.setMasked(word, mask)) any = true;
      }
      if (any) added++;
      if (out !== null) out[j] = any ? 1 : 0;
    }
    return added;
  });
}

/** Tests keys [0, n) of `batch` against `data`; `out[i]` gets 1 or 0. */
export function storageHasBatch(
  data: Uint32Array,
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
        if ((data[p[w + i]!]! & p[w + k + i]!) === 0) {
          all = 0;
          break;
        }
      }
      out[j] = all;
    }
    return 0;
  });
}
