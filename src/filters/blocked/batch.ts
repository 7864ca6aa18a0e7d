/**
 * The blocked filter's batch passes over hashes already computed for a chunk of keys (by
 * `xxh64Batch` over packed keys, or `xxh64Many` over JavaScript keys): pass 1 computes every
 * key's block and loads both its ends (the two cache lines it may span), so the CPU keeps many
 * cache misses in flight at once (a software prefetch: the loop is short and its loads
 * independent); pass 2 probes, now mostly cache hits. With hashing done for the whole chunk in one WebAssembly call, a key costs no
 * JavaScript string work at all.
 *
 * Positions are those of `BlockedBloomFilter.add` / `has` (see filter.ts): block =
 * ⌊lo32(h)·z / 2^32⌋; x = hi32(h); k times: bit x >>> 23 of the block, x = x·0x9e3779b9.
 * Adds run in key order, so `added` flags equal those of `add` called key by key.
 */
import { BitArray, type BitStorage } from '../../bits/bit-array.js';
import { CHUNK_KEYS } from '../../hash/scratch.js';
import { fastRange32 } from './sizing.js';

const GOLDEN = 0x9e3779b9 | 0;

/** Block starts of the current chunk. */
const bases = new Int32Array(CHUNK_KEYS);
/** Keeps the prefetching loads alive (the compiler drops loads whose value is unused). */
// biome-ignore lint/correctness/noUnusedVariables: written, never read: the write keeps the loads
let sink = 0;

/**
 * Pass 1: every key's block start into `bases`, touching its first and last word. A 64-byte
 * block fills one cache line only when the array starts 64-byte aligned, which JavaScript cannot
 * ask for (a large ArrayBuffer typically starts 16 bytes into a page), so it usually spans two
 * lines, and one load would leave the other line's miss to the probing pass (measured with both
 * loads: about 25% less time per key on 18 MB filters, k = 16).
 */
function touch(
  data: Uint32Array,
  blocks: number,
  hashes: Int32Array,
  at: number,
  count: number,
): void {
  let touched = 0;
  for (let j = 0; j < count; j++) {
    const base = fastRange32(hashes[at + 2 * j]!, blocks) << 4;
    bases[j] = base;
    touched |= data[base]! | data[base + 15]!;
  }
  sink = touched;
}

/**
 * Tests `count` keys whose XXH64 hashes are [lo, hi] pairs at `hashes[at]`; key j's answer (1/0)
 * goes to `out[outAt + j]`. Returns how many were found.
 */
export function hasHashes(
  data: Uint32Array,
  blocks: number,
  k: number,
  hashes: Int32Array,
  at: number,
  count: number,
  out: Uint8Array,
  outAt: number,
): number {
  touch(data, blocks, hashes, at, count);
  let found = 0;
  for (let j = 0; j < count; j++) {
    const base = bases[j]!;
    let x = hashes[at + 2 * j + 1]!;
    // Branch-free: AND the probed bits (x >>> 23 shifts by bits 23..27 of x, the bit in the word).
    let all = 1;
    for (let i = k; i > 0; i--) {
      all &= data[base + (x >>> 28)]! >>> (x >>> 23);
      x = Math.imul(x, GOLDEN);
    }
    out[outAt + j] = all;
    found += all;
  }
  return found;
}

/**
 * Adds `count` keys whose hashes are at `hashes[at]`, in order; returns how many were new (set
 * a bit). With `out`, key j's 1 (new) or 0 goes to `out[outAt + j]`. Only a bit that is still 0
 * goes through the storage (which keeps the count, or is atomic).
 */
export function addHashes(
  bits: BitStorage,
  blocks: number,
  k: number,
  hashes: Int32Array,
  at: number,
  count: number,
  out: Uint8Array | null = null,
  outAt = 0,
): number {
  const data = bits.data;
  touch(data, blocks, hashes, at, count);
  if (bits instanceof BitArray) return addPlain(bits, data, k, hashes, at, count, out, outAt);
  let added = 0;
  for (let j = 0; j < count; j++) {
    const base = bases[j]!;
    let x = hashes[at + 2 * j + 1]!;
    let any = false;
    for (let i = k; i > 0; i--) {
      const word = base + (x >>> 28);
      const mask = 1 << (x >>> 23);
      if ((data[word]! & mask) === 0 && bits.setMasked(word, mask)) any = true;
      x = Math.imul(x, GOLDEN);
    }
    if (any) added++;
    if (out !== null) out[outAt + j] = any ? 1 : 0;
  }
  return added;
}

/**
 * {@link addHashes} for plain memory: branch-free stores (whether a bit was new is a coin flip in
 * a half-full filter, and a mispredicted branch costs more than a store), counting the bits set
 * for the storage's maintained popcount.
 */
function addPlain(
  bits: BitArray,
  data: Uint32Array,
  k: number,
  hashes: Int32Array,
  at: number,
  count: number,
  out: Uint8Array | null,
  outAt: number,
): number {
  let added = 0;
  let set = 0;
  for (let j = 0; j < count; j++) {
    const base = bases[j]!;
    let x = hashes[at + 2 * j + 1]!;
    let fresh = 0;
    for (let i = k; i > 0; i--) {
      const word = base + (x >>> 28);
      const mask = 1 << (x >>> 23);
      const old = data[word]!;
      data[word] = old | mask;
      const bit = ~old & mask;
      set += (bit | -bit) >>> 31;
      fresh |= bit;
      x = Math.imul(x, GOLDEN);
    }
    const isNew = (fresh | -fresh) >>> 31;
    added += isNew;
    if (out !== null) out[outAt + j] = isNew;
  }
  bits.noteSet(set);
  return added;
}
