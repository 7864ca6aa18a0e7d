/**
 * A straightforward BigInt MurmurHash3 x64 128, transcribed from Appleby's reference C++.
 * Slow and obviously correct; the fast 32-bit-halves version in src/hash/murmur3.ts is checked
 * against it for every tail length, and both against Guava's vectors.
 */
const M = (1n << 64n) - 1n;
const C1 = 0x87c37b91114253d5n;
const C2 = 0x4cf5ad432745937fn;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M;
const fmix = (k: bigint): bigint => {
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & M;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & M;
  return k ^ (k >> 33n);
};
const le64 = (b: Uint8Array, o: number, n: number): bigint => {
  let x = 0n;
  for (let i = n - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[o + i]!);
  return x;
};

export function murmur3BigInt(data: Uint8Array, seed = 0n): [bigint, bigint] {
  let h1 = seed;
  let h2 = seed;
  const nblocks = Math.floor(data.length / 16);
  for (let i = 0; i < nblocks; i++) {
    let k1 = le64(data, i * 16, 8);
    let k2 = le64(data, i * 16 + 8, 8);
    k1 = (k1 * C1) & M;
    k1 = rotl(k1, 31n);
    k1 = (k1 * C2) & M;
    h1 ^= k1;
    h1 = rotl(h1, 27n);
    h1 = (h1 + h2) & M;
    h1 = (h1 * 5n + 0x52dce729n) & M;
    k2 = (k2 * C2) & M;
    k2 = rotl(k2, 33n);
    k2 = (k2 * C1) & M;
    h2 ^= k2;
    h2 = rotl(h2, 31n);
    h2 = (h2 + h1) & M;
    h2 = (h2 * 5n + 0x38495ab5n) & M;
  }
  const tail = nblocks * 16;
  const rem = data.length & 15;
  if (rem > 8) {
    let k2 = le64(data, tail + 8, rem - 8);
    k2 = (k2 * C2) & M;
    k2 = rotl(k2, 33n);
    k2 = (k2 * C1) & M;
    h2 ^= k2;
  }
  if (rem > 0) {
    let k1 = le64(data, tail, Math.min(rem, 8));
    k1 = (k1 * C1) & M;
    k1 = rotl(k1, 31n);
    k1 = (k1 * C2) & M;
    h1 ^= k1;
  }
  const len = BigInt(data.length);
  h1 ^= len;
  h2 ^= len;
  h1 = (h1 + h2) & M;
  h2 = (h2 + h1) & M;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = (h1 + h2) & M;
  h2 = (h2 + h1) & M;
  return [h1, h2];
}
