/**
 * The split-block filter's probes in JavaScript (the specification's `filter_insert` and
 * `filter_check`, for storage outside a kernel): the block is ⌊hi32(h)·z / 2^32⌋, and word i of
 * it gets bit (lo32(h)·salt[i]) >>> 27 (see sizing.ts for the salts).
 */
import type { BitStorage } from '../../bits/bit-array.js';
import { fastRange32 } from '../blocked/sizing.js';
import { SALT } from './sizing.js';

const SALTS = Int32Array.from(SALT);
const S0 = SALT[0]! | 0;
const S1 = SALT[1]! | 0;
const S2 = SALT[2]! | 0;
const S3 = SALT[3]! | 0;
const S4 = SALT[4]! | 0;
const S5 = SALT[5]! | 0;
const S6 = SALT[6]! | 0;
const S7 = SALT[7]! | 0;

/** Sets the 8 bits of the hash [lo, hi] in `bits` (`blocks` blocks); true iff one was 0. */
export function insertSplitHash(bits: BitStorage, blocks: number, lo: number, hi: number): boolean {
  const base = fastRange32(hi, blocks) << 3;
  const d = bits.data;
  let changed = false;
  for (let i = 0; i < 8; i++) {
    const mask = 1 << (Math.imul(lo, SALTS[i]!) >>> 27);
    // Only a bit that is still 0 goes through the storage (which keeps the count, or is atomic).
    if ((d[base + i]! & mask) === 0 && bits.setMasked(base + i, mask)) changed = true;
  }
  return changed;
}

/** True iff the 8 bits of the hash [lo, hi] are all set in `d` (`blocks` blocks). */
export function findSplitHash(d: Uint32Array, blocks: number, lo: number, hi: number): boolean {
  const base = fastRange32(hi, blocks) << 3;
  // Branch-free: AND bit (lo·salt[i]) >>> 27 of each word (a shift count is taken mod 32).
  return (
    ((d[base]! >>> (Math.imul(lo, S0) >>> 27)) &
      (d[base + 1]! >>> (Math.imul(lo, S1) >>> 27)) &
      (d[base + 2]! >>> (Math.imul(lo, S2) >>> 27)) &
      (d[base + 3]! >>> (Math.imul(lo, S3) >>> 27)) &
      (d[base + 4]! >>> (Math.imul(lo, S4) >>> 27)) &
      (d[base + 5]! >>> (Math.imul(lo, S5) >>> 27)) &
      (d[base + 6]! >>> (Math.imul(lo, S6) >>> 27)) &
      (d[base + 7]! >>> (Math.imul(lo, S7) >>> 27)) &
      1) !==
    0
  );
}
