/**
 * The chunk loop of every batch path over packed keys, written once (the blocked, split-block,
 * classic and counting filters' `addBatch` / `hasBatch`): hash one chunk of keys in one call
 * (hash/batch.ts: XXH64, or MurmurHash3 and Guava's MITZ_64 probes), hand the chunk's results to
 * `visit`, go on until the batch is done, and give back the scratch memory a huge key grew
 * (`releaseBatch`), also when `visit` throws.
 *
 * `visit` runs once per chunk (up to 1020 keys), never per key: the loop over a chunk's keys stays
 * in the caller's callback, one closure per batch and no call per key.
 */

import {
  batchScratch,
  hashIndex,
  mitz64Batch,
  probeIndex,
  releaseBatch,
  xxh64Batch,
} from '../hash/batch.js';
import type { Modulus } from '../hash/strategies.js';
import type { PackedKeys } from './filter.js';

/**
 * One chunk: keys [start, stop) of the batch, whose results are in `h` from index `at` (XXH64:
 * [lo, hi] of key start + j at `at + 2j`; MITZ_64: its k word indexes at `at + 2kj`, its masks
 * at `at + 2kj + k`). Returns a number the loop adds up (new keys for an add, anything for a test).
 */
export type ChunkVisitor = (h: Int32Array, at: number, start: number, stop: number) => number;

/** XXH64 (seed 0) of keys [0, n) of `batch`, chunk by chunk; returns the sum of `visit`'s results. */
export function xxh64Chunks(batch: PackedKeys, n: number, visit: ChunkVisitor): number {
  return chunks(
    n,
    (start) => xxh64Batch(batch, start, n),
    () => hashIndex,
    visit,
  );
}

/**
 * MurmurHash3 and the k MITZ_64 probes (over `mod.m` bits) of keys [0, n) of `batch`, chunk by
 * chunk; returns the sum of `visit`'s results.
 */
export function mitz64Chunks(
  batch: PackedKeys,
  n: number,
  k: number,
  mod: Modulus,
  visit: ChunkVisitor,
): number {
  return chunks(
    n,
    (start) => mitz64Batch(batch, start, n, k, mod),
    () => probeIndex,
    visit,
  );
}

/**
 * The loop: `hash` hashes the chunk from `start` and returns its end, `at` says where its results
 * start. The hash is passed in (not chosen here) so that a bundle using one hash never carries
 * the other one's module.
 */
function chunks(
  n: number,
  hash: (start: number) => number,
  at: () => number,
  visit: ChunkVisitor,
): number {
  let sum = 0;
  try {
    for (let start = 0; start < n; ) {
      const stop = hash(start);
      sum += visit(batchScratch!.i32, at(), start, stop);
      start = stop;
    }
  } finally {
    releaseBatch();
  }
  return sum;
}
