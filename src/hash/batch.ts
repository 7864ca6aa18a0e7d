/**
 * Hashing a packed batch of keys in chunks, for the filters' `addBatch` / `hasBatch`: each call
 * copies one chunk of keys (at most {@link CHUNK_KEYS} keys and about {@link CHUNK_BYTES} bytes,
 * so that keys, hashes and probe state stay in L2) into the scratch memory (hash/scratch.ts) with
 * two `set` calls, and hashes every key of it in one WebAssembly call. The filter then touches
 * the chunk's blocks (so the cache misses of many keys overlap) and probes them.
 *
 * Results stay in the scratch until the next hash: read them through `sc.i32` at the indexes
 * {@link hashIndex} gives (XXH64: [lo, hi] of key j at `hashIndex + 2j`; MurmurHash3:
 * [h1 lo, h1 hi, h2 lo, h2 hi] at `hashIndex + 4j`; MITZ_64 probes: key j's k word indexes at
 * `probeIndex + 2kj`, its masks at `probeIndex + 2kj + k`).
 */

import { MURMUR3_MODULE } from './hasher.js';
import { murmur3Core } from './murmur3-core.js';
import {
  CHUNK_BYTES,
  CHUNK_KEYS,
  chunkEnd,
  copyChunk,
  HASHES_AT,
  KEY_AT,
  type KeyBatch,
  OFFSETS_AT,
  SCRATCH_KEEP_BYTES,
  type Scratch,
  scratch,
  shrinkScratch,
} from './scratch.js';
import { type Modulus, mitz64Into } from './strategies.js';
import { xxh64Offsets } from './xxhash64.js';

/** Int32 index of the first hash of a chunk in `Scratch.i32`. */
export const hashIndex = HASHES_AT >> 2;

/** Int32 index of the first probe of a chunk after {@link mitz64Batch}. */
export let probeIndex = 0;

/** The scratch of the last chunk: read `sc.i32` right after a batch call. */
export let batchScratch: Scratch | null = null;

/** Where the last chunk's key ends are (see `copyChunk`). */
let endsAt = OFFSETS_AT + 4;

/** Copies keys [start, stop) of `batch` into the scratch (growing it for one huge key). */
function load(batch: KeyBatch, start: number, end: number, maxKeys: number): number {
  const offsets = batch.offsets;
  const sc = scratch();
  let stop = chunkEnd(offsets, start, end, maxKeys, CHUNK_BYTES);
  if (stop === start) {
    stop = start + 1;
    sc.grow(KEY_AT + offsets[stop]! - offsets[start]! + 32, KEY_AT);
  }
  endsAt = copyChunk(batch, start, stop, sc.bytes, sc.u32);
  batchScratch = sc;
  return stop;
}

/** Drops memory a huge key grew, after its chunk is done (see `shrinkScratch`). */
export function releaseBatch(): void {
  if (batchScratch !== null && batchScratch.capacity > SCRATCH_KEEP_BYTES) shrinkScratch();
  batchScratch = null;
}

/**
 * XXH64 (seed 0) of one chunk of keys from `start` (none past `end`); returns the index after
 * the chunk's last key. Key j of the chunk (key start + j) has its hash at
 * `batchScratch.i32[hashIndex + 2j]` (lo) and `[hashIndex + 2j + 1]` (hi).
 */
export function xxh64Batch(batch: KeyBatch, start: number, end: number): number {
  const stop = load(batch, start, end, CHUNK_KEYS);
  xxh64Offsets(batchScratch!, (KEY_AT - batch.offsets[start]!) | 0, endsAt, stop - start);
  return stop;
}

/**
 * MurmurHash3 x64 128 (seed 0) of one chunk of keys from `start`; returns the index after the
 * chunk's last key. Key j's [h1 lo, h1 hi, h2 lo, h2 hi] is at `batchScratch.i32[hashIndex + 4j]`.
 */
export function murmur3Batch(batch: KeyBatch, start: number, end: number): number {
  const stop = load(batch, start, end, CHUNK_KEYS);
  murmurLoaded(batchScratch!, (KEY_AT - batch.offsets[start]!) | 0, stop - start);
  return stop;
}

const hashView = /* @__PURE__ */ new Int32Array(4);

function murmurLoaded(sc: Scratch, keys: number, count: number): void {
  const murmur = sc.instance(MURMUR3_MODULE);
  if (murmur !== null) {
    murmur.murmur3_batch(keys, OFFSETS_AT, endsAt, count, HASHES_AT);
    return;
  }
  const u32 = sc.u32;
  const i32 = sc.i32;
  for (let j = 0; j < count; j++) {
    const a = u32[(OFFSETS_AT >> 2) + j]!;
    const b = u32[(endsAt >> 2) + j]!;
    murmur3Core(sc.bytes, null, (keys + a) | 0, b - a, hashView, 0);
    i32.set(hashView, hashIndex + 4 * j);
  }
}

/**
 * MurmurHash3 and Guava's MITZ_64 probes (k of them, for `mod.m` bits) of one chunk of keys from
 * `start`; returns the index after the chunk's last key. Key j's k word indexes are at
 * `batchScratch.i32[probeIndex + 2kj + i]` and its masks at `[probeIndex + 2kj + k + i]`.
 */
export function mitz64Batch(
  batch: KeyBatch,
  start: number,
  end: number,
  k: number,
  mod: Modulus,
): number {
  const stop = load(batch, start, end, Math.max(1, Math.min(CHUNK_KEYS, (16384 / k) | 0)));
  const count = stop - start;
  let sc = batchScratch!;
  const keys = (KEY_AT - batch.offsets[start]!) | 0;
  murmurLoaded(sc, keys, count);
  const at = (KEY_AT + batch.offsets[stop]! - batch.offsets[start]! + 64) & ~7;
  const need = at + 8 * k * count;
  if (need > sc.capacity) {
    sc.grow(need, at);
    sc = scratch();
    batchScratch = sc;
  }
  probeIndex = at >> 2;
  const murmur = sc.instance(MURMUR3_MODULE);
  if (murmur !== null) {
    murmur.walk_batch(HASHES_AT, count, k, mod.m, mod.p63, mod.inv, 0, 0, at);
    return stop;
  }
  const i32 = sc.i32;
  for (let j = 0, w = probeIndex; j < count; j++, w += 2 * k) {
    mitz64Into(i32, hashIndex + 4 * j, k, mod, i32, w, i32, w + k);
  }
  return stop;
}
