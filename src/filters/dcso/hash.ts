/**
 * The bit positions of DCSO's Go Bloom filter (github.com/DCSO/bloom 0.2.4, `Fingerprint`), bit
 * for bit, in 32-bit halves (no BigInt, no allocation per key):
 *
 *     h  = FNV-1 64 of the key's bytes               (offset 0xcbf29ce484222325, prime 2^40 + 0x1b3)
 *     h  = h mod P                                   P = 2^64 − 59, the largest prime below 2^64
 *     for i in 0..k−1:
 *       h = ((h · G) mod 2^64) mod P                 G = 2^64 − 1469 (Go's uint64 product wraps)
 *       position i = h mod m
 *
 * Go's source comments speak of "multiplying by g modulo m"; its `uint64` product wraps at 2^64
 * first, and that wrapped product is what the files hold, so that is what is computed here.
 * Since G ≡ −1469 (mod 2^64), h·G mod 2^64 is the two's complement negation of 1469·h mod 2^64.
 * Position i is bit (i & 63) of little-endian word i >>> 6, which is bit (i & 31) of 32-bit word
 * i >>> 5 on the little-endian bytes, as bloomkit's `BitArray` stores them.
 */

const TWO32 = 4294967296;
/** P = 2^64 − 59 as halves. */
const P_HI = 0xffffffff;
const P_LO = 0xffffffc5;

/**
 * Writes the k positions of `bytes` in a filter of `m` bits into `out` (k = out.length).
 * `m` is at most 2^37 (bloomkit's filters are at most 2^36 bits), so that `hi mod m` shifted
 * by 16 bits stays below 2^53.
 */
export function dcsoPositions(bytes: Uint8Array, m: number, out: Float64Array): void {
  // FNV-1 64: h = h · prime (mod 2^64), then h ^= byte. h · (2^40 + 0x1b3) = (h << 40) + h·0x1b3.
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < bytes.length; i++) {
    const a = lo * 0x1b3; // < 2^41
    const carry = Math.floor(a / TWO32);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = ((a >>> 0) ^ bytes[i]!) >>> 0;
  }
  // h mod P: h < 2^64 < 2P, so one subtraction (subtracting P adds 59 mod 2^64).
  if (hi === P_HI && lo >= P_LO) {
    lo -= P_LO;
    hi = 0;
  }
  for (let i = 0; i < out.length; i++) {
    // 1469 · h mod 2^64.
    const a = lo * 1469; // < 2^43
    let plo = a >>> 0;
    let phi = (hi * 1469 + Math.floor(a / TWO32)) >>> 0;
    // Negate mod 2^64 (two's complement): h · G mod 2^64.
    if (plo !== 0 || phi !== 0) {
      plo = (~plo + 1) >>> 0;
      phi = (~phi + (plo === 0 ? 1 : 0)) >>> 0;
    }
    // mod P.
    if (phi === P_HI && plo >= P_LO) {
      plo -= P_LO;
      phi = 0;
    }
    hi = phi;
    lo = plo;
    // h mod m, 16 bits at a time below the high half.
    let r = hi % m;
    r = (r * 65536 + (lo >>> 16)) % m;
    out[i] = (r * 65536 + (lo & 0xffff)) % m;
  }
}
