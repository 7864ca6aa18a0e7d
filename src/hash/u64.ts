/**
 * 64-bit arithmetic on (hi, lo) int32 halves, for XXH64's JavaScript core (hosts without
 * WebAssembly): no BigInt, nothing allocated. Each helper returns its result through {@link rh} /
 * {@link rl} (two results without an allocation): read them right after. MurmurHash3's core
 * (murmur3-core.ts) inlines its multiplies by constants instead: through these helpers it was
 * 0.75 kB smaller minified, but a classic filter's add and has without WebAssembly were 1.2 to 1.4
 * times slower.
 */

const TWO_32 = 4294967296;

/** The high half of the last result. */
export let rh = 0;
/** The low half of the last result. */
export let rl = 0;

/**
 * (ah:al) · (bh:bl) mod 2^64 into rh:rl. The high half of al·bl is exact in doubles: with bl split
 * in 16-bit halves each partial product is below 2^48 and their sum below 2^49.
 */
export function mul(ah: number, al: number, bh: number, bl: number): void {
  const t = al >>> 0;
  rh =
    (Math.floor((t * (bl >>> 16) + Math.floor((t * (bl & 0xffff)) / 65536)) / 65536) +
      Math.imul(al, bh) +
      Math.imul(ah, bl)) |
    0;
  rl = Math.imul(al, bl);
}

/** (ah:al) + (bh:bl) mod 2^64 into rh:rl. */
export function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = (al >>> 0) + (bl >>> 0);
  rl = lo | 0;
  rh = (ah + bh + (lo >= TWO_32 ? 1 : 0)) | 0;
}

/** rotl((h:l), r) for 0 < r < 32 into rh:rl (swap the halves first for 32 < r < 64). */
export function rotl(h: number, l: number, r: number): void {
  rh = (h << r) | (l >>> (32 - r));
  rl = (l << r) | (h >>> (32 - r));
}
