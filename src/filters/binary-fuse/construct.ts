/**
 * Sizing and construction of a 3-wise binary fuse filter (Graf and Lemire, "Binary Fuse
 * Filters: Fast and Smaller Than Xor Filters", ACM JEA 27, 2022), following xor_singleheader's
 * binaryfusefilter.h step for step.
 *
 * Sizing for n keys (arity 3):
 *   segment length L = 2^⌊ln n / ln 3.33 + 2.25⌋, at most 2^18 (4 when n = 0)
 *   size factor     = max(1.125, 0.875 + 0.25 · ln 10^6 / ln n)   (n > 1)
 *   capacity        = round(n · size factor)                         (0 when n ≤ 1)
 *   segment count   = max(1, ⌈capacity / L⌉ − 2)
 *   array length    = (segment count + 2) · L fingerprints
 * so about 1.125·n fingerprints for n ≥ 10^6: 9.0 bits per key with 8-bit fingerprints.
 *
 * Construction: hash every key into its three cells (counting keys per cell and XOR-ing their
 * hashes and slot numbers), peel cells holding one key onto a stack, and assign fingerprints in
 * reverse so that the three cells of each key XOR to its fingerprint. A failed peel retries with
 * the next seed. Keys are deduplicated by their 64-bit hash first (sorted), so duplicate keys
 * can never make the peel fail forever: two keys with the same 64-bit hash are one key to the
 * filter, which is why `has` is still true for both.
 */

import { LITTLE_ENDIAN } from '../../hash/murmur3.js';
import { mix, mixed, mulhi64, SEED_STATE, splitmix64 } from './mix.js';

/** The shape of a binary fuse filter (everything but the fingerprints). */
export interface FuseShape {
  readonly segmentLength: number;
  readonly segmentCount: number;
  /** (segmentCount + 2) · segmentLength. */
  readonly arrayLength: number;
}

/** The most keys a binary fuse filter takes (its arrays are indexed by 32-bit numbers). */
export const FUSE_MAX_KEYS = 2 ** 30;
/** Seeds tried before construction gives up (xor_singleheader: XOR_MAX_ITERATIONS). */
const MAX_ATTEMPTS = 100;

/** The sizing above, for `n` distinct keys. */
export function fuseShape(n: number): FuseShape {
  let segmentLength = n === 0 ? 4 : 2 ** Math.floor(Math.log(n) / Math.log(3.33) + 2.25);
  if (segmentLength > 262144) segmentLength = 262144;
  const sizeFactor = n <= 1 ? 0 : Math.max(1.125, 0.875 + (0.25 * Math.log(1e6)) / Math.log(n));
  const capacity = n <= 1 ? 0 : Math.round(n * sizeFactor);
  const segmentCount = Math.max(1, Math.ceil(capacity / segmentLength) - 2);
  return { segmentLength, segmentCount, arrayLength: (segmentCount + 2) * segmentLength };
}

/** The three cells of the hash in `mixed` (after `mix`), written to `out`. */
export function fuseCells(shape: FuseShape, out: Uint32Array): void {
  const L = shape.segmentLength;
  const mask = L - 1;
  const { lo, hi } = mixed;
  const h0 = mulhi64(lo, hi, shape.segmentCount * L);
  out[0] = h0;
  out[1] = (h0 + L) ^ (((lo >>> 18) | (hi << 14)) & mask);
  out[2] = (h0 + 2 * L) ^ (lo & mask);
}

/**
 * Sorts 64-bit key hashes (lo, hi halves in `hashes`, 2 words per key) and removes repeats in
 * place; returns the number of distinct hashes (they fill the front of `hashes`). On
 * little-endian hosts the words are sorted in place as a BigUint64Array view (no BigInt is made
 * per key); elsewhere through a BigInt copy.
 */
export function dedupeHashes(hashes: Uint32Array, n: number): number {
  if (n === 0) return 0;
  if (LITTLE_ENDIAN && hashes.byteOffset % 8 === 0) {
    new BigUint64Array(hashes.buffer, hashes.byteOffset, n).sort();
  } else {
    const pairs = new BigUint64Array(n);
    for (let i = 0; i < n; i++) {
      pairs[i] = (BigInt(hashes[2 * i + 1]!) << 32n) | BigInt(hashes[2 * i]!);
    }
    pairs.sort();
    for (let i = 0; i < n; i++) {
      const v = pairs[i]!;
      hashes[2 * i] = Number(v & 0xffffffffn);
      hashes[2 * i + 1] = Number(v >> 32n);
    }
  }
  let distinct = 1;
  for (let i = 1; i < n; i++) {
    const lo = hashes[2 * i]!;
    const hi = hashes[2 * i + 1]!;
    if (lo === hashes[2 * distinct - 2] && hi === hashes[2 * distinct - 1]) continue;
    hashes[2 * distinct] = lo;
    hashes[2 * distinct + 1] = hi;
    distinct++;
  }
  return distinct;
}

/** The result of a construction: the seed's halves and the filled fingerprints. */
export interface FuseBuild {
  readonly seedLo: number;
  readonly seedHi: number;
}

/**
 * Fills `fingerprints` (length `shape.arrayLength`) for the `n` distinct key hashes in `keys`
 * (lo, hi halves). `mask` is 0xff or 0xffff. Throws an `Error` after {@link MAX_ATTEMPTS}
 * failed seeds (for distinct keys the chance is far below that of a hardware fault).
 */
export function populate(
  keys: Uint32Array,
  n: number,
  shape: FuseShape,
  fingerprints: Uint8Array | Uint16Array,
  mask: number,
): FuseBuild {
  const capacity = shape.arrayLength;
  const t2count = new Uint8Array(capacity);
  const t2lo = new Uint32Array(capacity);
  const t2hi = new Uint32Array(capacity);
  const alone = new Uint32Array(capacity);
  const stackLo = new Uint32Array(n);
  const stackHi = new Uint32Array(n);
  const stackFound = new Uint8Array(n);
  const cells = new Uint32Array(3);
  const h012 = new Uint32Array(5);
  const rng = { value: SEED_STATE };
  const scl = shape.segmentCount * shape.segmentLength;
  const shift = 31 - Math.clz32(shape.segmentLength);
  const mixedLo = new Uint32Array(n);
  const mixedHi = new Uint32Array(n);
  const sortedLo = stackLo; // reused: the stack is filled only after the sort is consumed
  const sortedHi = stackHi;
  const segmentOf = new Uint32Array(n);
  const segmentStart = new Uint32Array(shape.segmentCount + 1);
  for (let attempt = 1; ; attempt++) {
    if (attempt > MAX_ATTEMPTS) {
      throw new Error(`binary fuse construction failed after ${MAX_ATTEMPTS} seeds for ${n} keys`);
    }
    const seed = splitmix64(rng);
    const seedLo = Number(seed & 0xffffffffn);
    const seedHi = Number(seed >> 32n);
    // Mix every key, then counting-sort the mixed hashes by the segment of their first cell
    // (h0 grows with the hash), so that the cell updates below walk memory nearly in order.
    segmentStart.fill(0);
    for (let i = 0; i < n; i++) {
      mix(keys[2 * i]!, keys[2 * i + 1]!, seedLo, seedHi);
      const segment = mulhi64(mixed.lo, mixed.hi, scl) >>> shift;
      mixedLo[i] = mixed.lo;
      mixedHi[i] = mixed.hi;
      segmentOf[i] = segment;
      segmentStart[segment + 1]!++;
    }
    for (let s = 1; s <= shape.segmentCount; s++) segmentStart[s]! += segmentStart[s - 1]!;
    for (let i = 0; i < n; i++) {
      const at = segmentStart[segmentOf[i]!]!++;
      sortedLo[at] = mixedLo[i]!;
      sortedHi[at] = mixedHi[i]!;
    }
    t2count.fill(0);
    t2lo.fill(0);
    t2hi.fill(0);
    let overflow = false;
    for (let i = 0; i < n; i++) {
      const lo = sortedLo[i]!;
      const hi = sortedHi[i]!;
      mixed.lo = lo;
      mixed.hi = hi;
      fuseCells(shape, cells);
      for (let j = 0; j < 3; j++) {
        const c = cells[j]!;
        const count = (t2count[c]! + 4) & 0xff;
        t2count[c] = count ^ j;
        t2lo[c]! ^= lo;
        t2hi[c]! ^= hi;
        if (count < 4) overflow = true; // more than 63 keys in one cell: the count wrapped
      }
    }
    if (overflow) continue;

    // Peel: a cell with one key gives that key (its hash is the cell's XOR) and its slot.
    let queue = 0;
    for (let i = 0; i < capacity; i++) {
      alone[queue] = i;
      queue += t2count[i]! >>> 2 === 1 ? 1 : 0;
    }
    let stack = 0;
    while (queue > 0) {
      const index = alone[--queue]!;
      if (t2count[index]! >>> 2 !== 1) continue;
      const lo = t2lo[index]!;
      const hi = t2hi[index]!;
      mixed.lo = lo;
      mixed.hi = hi;
      fuseCells(shape, cells);
      h012[0] = cells[0]!;
      h012[1] = cells[1]!;
      h012[2] = cells[2]!;
      h012[3] = cells[0]!;
      h012[4] = cells[1]!;
      const found = t2count[index]! & 3;
      stackLo[stack] = lo;
      stackHi[stack] = hi;
      stackFound[stack] = found;
      stack++;
      for (let j = 1; j <= 2; j++) {
        const other = h012[found + j]!;
        alone[queue] = other;
        queue += t2count[other]! >>> 2 === 2 ? 1 : 0;
        t2count[other] = (t2count[other]! - 4) ^ ((found + j) % 3);
        t2lo[other]! ^= lo;
        t2hi[other]! ^= hi;
      }
    }
    if (stack !== n) continue;

    fingerprints.fill(0);
    for (let i = n - 1; i >= 0; i--) {
      const lo = stackLo[i]!;
      const hi = stackHi[i]!;
      mixed.lo = lo;
      mixed.hi = hi;
      fuseCells(shape, cells);
      const found = stackFound[i]!;
      h012[0] = cells[0]!;
      h012[1] = cells[1]!;
      h012[2] = cells[2]!;
      h012[3] = cells[0]!;
      h012[4] = cells[1]!;
      fingerprints[h012[found]!] =
        ((lo ^ hi) & mask) ^ fingerprints[h012[found + 1]!]! ^ fingerprints[h012[found + 2]!]!;
    }
    return { seedLo, seedHi };
  }
}
