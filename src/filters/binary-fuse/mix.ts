/**
 * The 64-bit arithmetic of xor_singleheader's binaryfusefilter.h on 32-bit halves, so that the
 * hot path needs no BigInt: a key's 64-bit hash is mixed with the filter's seed
 * (`murmur64(key + seed)`, MurmurHash3's fmix64), and the mixed hash gives the three positions
 * and the fingerprint:
 *
 *   h0 = ⌊hash · segmentCountLength / 2^64⌋
 *   h1 = (h0 + L) XOR ((hash >> 18) & (L − 1))
 *   h2 = (h0 + 2L) XOR (hash & (L − 1))
 *   fingerprint = (hash XOR (hash >> 32)) mod 2^f
 *
 * Results go to {@link mixed} (two numbers, no allocation per key).
 */

/** The last mixed hash: `lo` and `hi` unsigned 32-bit halves. */
export const mixed = { lo: 0, hi: 0 };

/** High 32 bits of the 64-bit product of two unsigned 32-bit integers (exact, in doubles). */
export function mulhi32(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const low = a0 * b0;
  const mid = a1 * b0 + a0 * b1 + (low >>> 16);
  return (a1 * b1 + Math.floor(mid / 65536)) >>> 0;
}

/** ⌊(hi·2^32 + lo) · n / 2^64⌋ for n < 2^32: the first position, h0. */
export function mulhi64(lo: number, hi: number, n: number): number {
  const aLo = Math.imul(hi, n) >>> 0; // low word of hi·n
  const aHi = mulhi32(hi, n);
  const bHi = mulhi32(lo, n);
  return aHi + (aLo + bHi > 0xffffffff ? 1 : 0);
}

/** `mixed` = fmix64(key + seed), each a 64-bit value as (lo, hi) halves. */
export function mix(keyLo: number, keyHi: number, seedLo: number, seedHi: number): void {
  let lo = keyLo + seedLo;
  let hi = (keyHi + seedHi + (lo > 0xffffffff ? 1 : 0)) >>> 0;
  lo >>>= 0;
  // h ^= h >>> 33; h *= 0xff51afd7ed558ccd
  lo = (lo ^ (hi >>> 1)) >>> 0;
  let nlo = Math.imul(lo, 0xed558ccd) >>> 0;
  let nhi = (mulhi32(lo, 0xed558ccd) + Math.imul(lo, 0xff51afd7) + Math.imul(hi, 0xed558ccd)) >>> 0;
  lo = nlo;
  hi = nhi;
  // h ^= h >>> 33; h *= 0xc4ceb9fe1a85ec53
  lo = (lo ^ (hi >>> 1)) >>> 0;
  nlo = Math.imul(lo, 0x1a85ec53) >>> 0;
  nhi = (mulhi32(lo, 0x1a85ec53) + Math.imul(lo, 0xc4ceb9fe) + Math.imul(hi, 0x1a85ec53)) >>> 0;
  // h ^= h >>> 33
  mixed.lo = (nlo ^ (nhi >>> 1)) >>> 0;
  mixed.hi = nhi;
}

const MASK64 = (1n << 64n) - 1n;

/**
 * xor_singleheader's `binary_fuse_rng_splitmix64`: advances `state` and returns the next seed.
 * Once per construction attempt (BigInt is fine here, off the hot path).
 */
export function splitmix64(state: { value: bigint }): bigint {
  state.value = (state.value + 0x9e3779b97f4a7c15n) & MASK64;
  let z = state.value;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

/** xor_singleheader's initial RNG state for seeds. */
export const SEED_STATE = 0x726b2b9d438b9d4dn;
