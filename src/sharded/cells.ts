/**
 * The cells of a shard as bytes (store.ts, "What a filter is in a store"), laid out as Redis'
 * BITFIELD lays them, and the cell algorithms a store runs on them when it has no server-side
 * script of its own: a store that keeps a shard as bytes (in memory, a SQL blob column, a file)
 * runs these inside its atomic step (a lock, a transaction), and its shards read and export the
 * same bytes as the Redis store's. The Redis store runs the same algorithms as Lua (scripts.ts);
 * `MemoryShardStore` runs these.
 *
 * - bit p: the `0x80 >>> (p & 7)` bit of byte `p >>> 3`;
 * - 4-bit counter j: bits [4j, 4j + 4), the high nibble of byte ⌊j/2⌋ for an even j;
 * - 16-bit slot k (cuckoo; slot s of bucket b is k = 4b + s): bytes 2k, 2k + 1, big-endian.
 *
 * Bytes past the end of `cells.bytes` read 0, and writing there grows it (as a Redis string).
 */

import { REPLY } from './store.js';

/** A shard's cell bytes (replaced when they grow). */
export interface Cells {
  bytes: Uint8Array;
}

/** Makes byte `index` exist (doubling, as a Redis string grows). */
function grow(c: Cells, index: number): void {
  if (index < c.bytes.length) return;
  const bytes = new Uint8Array(Math.max(index + 1, 2 * c.bytes.length));
  bytes.set(c.bytes);
  c.bytes = bytes;
}

export function getBit(c: Cells, p: number): number {
  const i = Math.floor(p / 8);
  return i < c.bytes.length && (c.bytes[i]! & (0x80 >>> (p % 8))) !== 0 ? 1 : 0;
}

/** Sets bits `cells`; 1 if one of them was 0 (the key was new). */
export function setBits(c: Cells, cells: ArrayLike<number>): 0 | 1 {
  let fresh: 0 | 1 = 0;
  for (let i = 0; i < cells.length; i++) {
    const p = cells[i]!;
    if (getBit(c, p) === 0) fresh = 1;
    grow(c, Math.floor(p / 8));
    c.bytes[Math.floor(p / 8)]! |= 0x80 >>> (p % 8);
  }
  return fresh;
}

/** The number of set bits. */
export function countBits(c: Cells): number {
  let n = 0;
  for (const b of c.bytes) for (let v = b; v !== 0; v &= v - 1) n++;
  return n;
}

/** ORs `bytes` into the cells. */
export function orBytes(c: Cells, bytes: Uint8Array): void {
  grow(c, bytes.length - 1);
  for (let i = 0; i < bytes.length; i++) c.bytes[i]! |= bytes[i]!;
}

export function getCounter(c: Cells, j: number): number {
  const i = Math.floor(j / 2);
  if (i >= c.bytes.length) return 0;
  return j % 2 === 0 ? c.bytes[i]! >>> 4 : c.bytes[i]! & 0x0f;
}

function setCounter(c: Cells, j: number, v: number): void {
  const i = Math.floor(j / 2);
  grow(c, i);
  const b = c.bytes[i]!;
  c.bytes[i] = j % 2 === 0 ? (b & 0x0f) | (v << 4) : (b & 0xf0) | v;
}

/** Adds 1 to counters `cells`, saturating at 15; 1 if one went from 0 to 1 (the key was new). */
export function addCounters(c: Cells, cells: ArrayLike<number>): 0 | 1 {
  let fresh: 0 | 1 = 0;
  for (let i = 0; i < cells.length; i++) {
    const v = getCounter(c, cells[i]!);
    if (v === 0) fresh = 1;
    if (v < 15) setCounter(c, cells[i]!, v + 1);
  }
  return fresh;
}

/** The all-or-nothing remove of `ShardStore.removeCounters` (COUNTING_REMOVE): 1 or 0. */
export function removeCounters(c: Cells, cells: ArrayLike<number>): 0 | 1 {
  const need = new Map<number, number>();
  for (let i = 0; i < cells.length; i++) need.set(cells[i]!, (need.get(cells[i]!) ?? 0) + 1);
  for (const [j, n] of need) {
    const v = getCounter(c, j);
    if (v < 15 && v < n) return 0;
  }
  for (const [j, n] of need) {
    const v = getCounter(c, j);
    if (v < 15) setCounter(c, j, v - n);
  }
  return 1;
}

export function getSlot(c: Cells, k: number): number {
  const i = 2 * k;
  return i + 1 < c.bytes.length ? (c.bytes[i]! << 8) | c.bytes[i + 1]! : 0;
}

function setSlot(c: Cells, k: number, v: number): void {
  grow(c, 2 * k + 1);
  c.bytes[2 * k] = v >>> 8;
  c.bytes[2 * k + 1] = v & 0xff;
}

/** A free slot of bucket b (0..3), or -1. */
function free(c: Cells, b: number): number {
  for (let s = 0; s < 4; s++) if (getSlot(c, b * 4 + s) === 0) return s;
  return -1;
}

/**
 * The cuckoo add of `ShardStore.cuckooAdd`, step for step as the CUCKOO_ADD script (so both stores
 * fill alike): a free slot of i1 or i2, else up to `maxKicks` moves, all undone when no slot frees
 * (`REPLY.full`). 1 if `f` was in neither bucket before, else 0.
 */
export function cuckooAdd(
  c: Cells,
  fingerprint: number,
  i1: number,
  i2: number,
  buckets: number,
  maxKicks: number,
): 0 | 1 | typeof REPLY.full {
  let f = fingerprint;
  let fresh: 0 | 1 = 1;
  for (let s = 0; s < 4; s++) {
    if (getSlot(c, i1 * 4 + s) === f || getSlot(c, i2 * 4 + s) === f) fresh = 0;
  }
  for (const b of [i1, i2]) {
    const s = free(c, b);
    if (s >= 0) {
      setSlot(c, b * 4 + s, f);
      return fresh;
    }
  }
  const log: [slot: number, victim: number][] = [];
  let b = f % 2 === 0 ? i1 : i2;
  for (let n = 1; n <= maxKicks; n++) {
    const slot = b * 4 + (n % 4);
    const victim = getSlot(c, slot);
    setSlot(c, slot, f);
    log.push([slot, victim]);
    f = victim;
    b = altBucket(b, f, buckets);
    const s = free(c, b);
    if (s >= 0) {
      setSlot(c, b * 4 + s, f);
      return fresh;
    }
  }
  for (let n = log.length - 1; n >= 0; n--) setSlot(c, log[n]![0], log[n]![1]);
  return REPLY.full;
}

/** Clears one slot of bucket i1 or i2 holding `f`: 1, or 0 (no change). */
export function cuckooRemove(c: Cells, f: number, i1: number, i2: number): 0 | 1 {
  for (const b of [i1, i2]) {
    for (let s = 0; s < 4; s++) {
      if (getSlot(c, b * 4 + s) === f) {
        setSlot(c, b * 4 + s, 0);
        return 1;
      }
    }
  }
  return 0;
}

/**
 * The other bucket of fingerprint `f` in bucket `b` of `nb` (a power of two): partial-key cuckoo
 * hashing, b XOR ((f·1540483477 mod 2^32) mod nb), as the CUCKOO_ADD script computes it.
 */
export function altBucket(b: number, f: number, nb: number): number {
  return (b ^ (((f * 1540483477) % 4294967296) % nb)) >>> 0;
}

/**
 * The 8 slots of buckets i1 then i2 (bucket b: slots 4b to 4b + 3), written at `out[at]` (a new
 * array when `out` is left out).
 */
export function bucketSlots<T extends number[] | Float64Array = number[]>(
  i1: number,
  i2: number,
  out: T = new Array<number>(8) as T,
  at = 0,
): T {
  for (let s = 0; s < 4; s++) {
    out[at + s] = 4 * i1 + s;
    out[at + 4 + s] = 4 * i2 + s;
  }
  return out;
}
