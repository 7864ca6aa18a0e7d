/**
 * The scalable filter's batch paths over packed keys (`addBatch` / `hasBatch`), with exactly the
 * answers, bits, layer counts and moments of growth of `add` / `has` called key by key.
 *
 * Each chunk of keys (at most 1024 keys and about 64 KiB, see hash/batch.ts) is hashed once
 * (MurmurHash3 x64 128 in one WebAssembly call); every layer then walks the hashes of the keys
 * still unanswered in one call (`BloomFilter.kernelHashes`, in the layer's wasm kernel; a layer
 * without one, small or viewing bytes or without WebAssembly, takes {@link layerHas}, the
 * JavaScript walk of the per-key paths), so a key found in a layer is not looked up in the older
 * ones.
 *
 * `hasBatch` tests the layers newest first, as `has` does.
 *
 * `addBatch`, per chunk: the keys are tested against the layers older than the newest one (no
 * add of this chunk changes them); a key found there is not new and changes nothing, as in `add`.
 * The others (candidates) are added to the newest layer in order, in slices of at most
 * room = capacity − count keys of that layer: a candidate is new iff it sets a bit there (one that
 * sets none was already in the newest layer, by an earlier add or an earlier copy of itself in the
 * same batch), which is exactly `add`'s test once the older layers said no. A slice adds at most
 * room keys, so a layer never passes its capacity. When the room is used up and candidates remain,
 * the next candidate takes the per-key `add`, which makes the next layer at the same moment `add`
 * would (or throws `FilterFullError`, changing nothing, with every earlier key added and its
 * `out` flag written), and the batch goes on after it with a new chunk.
 */

import { batchScratch, hashIndex, murmur3Batch, releaseBatch } from '../../hash/batch.js';
import { CHUNK_KEYS } from '../../hash/scratch.js';
import { Mitz64Walk, type Modulus } from '../../hash/strategies.js';
import type { BloomFilter } from '../bloom/filter.js';
import type { PackedKeys } from '../filter.js';

/** A layer: the classic filter, its modulus and words, its capacity, rate and count. */
export interface Layer {
  readonly filter: BloomFilter;
  readonly mod: Modulus;
  readonly data: Uint32Array;
  readonly capacity: number;
  readonly fpp: number;
  count: number;
}

const walk = /* @__PURE__ */ new Mitz64Walk();

/**
 * 1 if `layer` holds the hash at `h[at]` (`[h1 lo, h1 hi, h2 lo, h2 hi]`), else 0: the MITZ_64
 * walk in JavaScript, stopped at the first clear bit (an absent key costs about two probes
 * instead of k). The per-key `has`, and the batches' walk in a layer without a kernel.
 */
export function layerHas(layer: Layer, h: Int32Array, at: number): number {
  const data = layer.data;
  walk.start(h, layer.mod, at);
  for (let i = layer.filter.hashes; i > 0; i--) {
    const idx = walk.next();
    if ((data[(idx / 32) | 0]! & (1 << (idx & 31))) === 0) return 0;
  }
  return 1;
}

/** Sets the MITZ_64 bits of the hash at `h[at]` in `layer`; 1 if one was clear (new), else 0. */
export function layerAdd(layer: Layer, h: Int32Array, at: number): number {
  const bits = layer.filter.bits;
  walk.start(h, layer.mod, at);
  let fresh = 0;
  for (let i = layer.filter.hashes; i > 0; i--) if (bits.set(walk.next())) fresh = 1;
  return fresh;
}

/** The chunk's MurmurHash3 rows [h1 lo, h1 hi, h2 lo, h2 hi], compacted as keys are answered. */
const rows = /* @__PURE__ */ new Int32Array(4 * CHUNK_KEYS);
/** `place[j]`: the index within the chunk of the key whose hash is row j. */
const place = /* @__PURE__ */ new Uint16Array(CHUNK_KEYS);
/** A layer's answer per row. */
const answers = /* @__PURE__ */ new Uint8Array(CHUNK_KEYS);
/** The chunk's new keys (an add's `out` flags before they are handed out). */
const fresh = /* @__PURE__ */ new Uint8Array(CHUNK_KEYS);

/**
 * Rows [at, at + count) against `layer` (at most 1024): `answers[j]` gets 1/0 for a test, nonzero
 * for a new key in an add. Returns 0 if every answer is 0.
 */
function pass(layer: Layer, at: number, count: number, add: boolean): number {
  const sum = layer.filter.kernelHashes(rows, at, count, add, answers);
  if (sum >= 0) return sum;
  let ones = 0;
  for (let j = 0; j < count; j++) {
    ones += answers[j] = add
      ? layerAdd(layer, rows, 4 * (at + j))
      : layerHas(layer, rows, 4 * (at + j));
  }
  return ones;
}

/** Hashes the chunk of keys from `start` (none past `n`) into `rows`; returns its end. */
function hashChunk(batch: PackedKeys, start: number, n: number): number {
  try {
    const stop = murmur3Batch(batch, start, n);
    const count = stop - start;
    rows.set(batchScratch!.i32.subarray(hashIndex, hashIndex + 4 * count));
    for (let j = 0; j < count; j++) place[j] = j;
    return stop;
  } finally {
    releaseBatch();
  }
}

/**
 * Tests the first `live` rows against `layer` and keeps the rows it does not hold, in order, at
 * the front; with `hit`, the keys it holds get `hit[start + place] = 1`. Returns the rows kept.
 */
function sieve(layer: Layer, live: number, hit: Uint8Array | null, start: number): number {
  if (pass(layer, 0, live, false) === 0) return live;
  let w = 0;
  for (let j = 0; j < live; j++) {
    if (answers[j] !== 0) {
      if (hit !== null) hit[start + place[j]!] = 1;
      continue;
    }
    if (w !== j) {
      // Four element moves: a copyWithin call per row took about a tenth of a scalable dedup.
      const a = 4 * w;
      const b = 4 * j;
      rows[a] = rows[b]!;
      rows[a + 1] = rows[b + 1]!;
      rows[a + 2] = rows[b + 2]!;
      rows[a + 3] = rows[b + 3]!;
      place[w] = place[j]!;
    }
    w++;
  }
  return w;
}

/** `has` of keys [0, n) of `batch` against the layers of `chain`: `out[i]` is 1 or 0. */
export function scalableHasBatch(
  chain: readonly Layer[],
  batch: PackedKeys,
  n: number,
  out: Uint8Array,
): void {
  for (let start = 0; start < n; ) {
    const stop = hashChunk(batch, start, n);
    out.fill(0, start, stop);
    let live = stop - start;
    for (let l = chain.length - 1; l >= 0 && live > 0; l--) {
      live = sieve(chain[l]!, live, out, start);
    }
    start = stop;
  }
}

/**
 * Adds keys [0, n) of `batch` in order, as `add` key by key (see the file's comment); returns how
 * many were new, and with `out`, `out[i]` is 1 if key i was new, else 0. `one(i)` adds key i by
 * the per-key path (growing the chain when needed) and says if it was new.
 */
export function scalableAddBatch(
  chain: readonly Layer[],
  batch: PackedKeys,
  n: number,
  out: Uint8Array | null,
  one: (i: number) => boolean,
): number {
  let added = 0;
  for (let start = 0; start < n; ) {
    const stop = hashChunk(batch, start, n);
    const newest = chain[chain.length - 1]!;
    let live = stop - start;
    for (let l = chain.length - 2; l >= 0 && live > 0; l--) {
      live = sieve(chain[l]!, live, null, start);
    }
    fresh.fill(0, 0, stop - start);
    let c = 0;
    for (let room = newest.capacity - newest.count; c < live && room > 0; ) {
      const take = Math.min(room, live - c);
      pass(newest, c, take, true);
      let got = 0;
      for (let j = 0; j < take; j++) {
        if (answers[j] !== 0) {
          fresh[place[c + j]!] = 1;
          got++;
        }
      }
      newest.count += got;
      added += got;
      room -= got;
      c += take;
    }
    // Keys before `end` are done; key `end` (when the room ran out) needs the next layer.
    const end = c < live ? start + place[c]! : stop;
    if (out !== null) out.set(fresh.subarray(0, end - start), start);
    if (end === stop) {
      start = stop;
      continue;
    }
    const isNew = one(end);
    if (isNew) added++;
    if (out !== null) out[end] = isNew ? 1 : 0;
    start = end + 1;
  }
  return added;
}
