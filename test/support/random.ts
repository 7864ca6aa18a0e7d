/**
 * Seeded randomness and deterministic keys for the tests, so every run draws the same data: the
 * same seed gives the same sequence on every machine. Two generators, both kept because tests pin
 * data drawn from each (changing one would change which keys a test uses).
 */

/** mulberry32 (Tommy Ettinger): a small, fast, seeded PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One step of {@link lcg}. */
const lcgStep = (s: number): number => (Math.imul(s, 1664525) + 1013904223) >>> 0;

/**
 * The Numerical Recipes LCG, s ← 1664525·s + 1013904223 mod 2^32; returns the new state, a u32
 * (divide by 2^32 for a float in [0, 1)). The first value is the state after one step.
 */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = lcgStep(s);
    return s;
  };
}

/**
 * Fills `words` with the first words of `lcg(seed)`, in a loop of its own: a call of the closure
 * per word makes filling megabytes twice as costly.
 */
export function lcgFill(words: Uint32Array, seed: number): void {
  let s = seed >>> 0;
  for (let i = 0; i < words.length; i++) {
    s = lcgStep(s);
    words[i] = s;
  }
}

/** A deterministic key set: `prefix:from`, `prefix:from+1`, … (n keys). */
export function keys(prefix: string, n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}:${from + i}`);
}

/** The 4-sigma upper edge of a binomial rate p measured over `n` trials. */
export const upper = (p: number, n: number): number => p + 4 * Math.sqrt((p * (1 - p)) / n);

/**
 * Random keys of lengths 0..`maxLength`, each length `copies` times, in a seeded random order
 * (the batch kernels' tests: every length next to every other in one chunk).
 */
export function shuffledKeys(seed: number, copies: number, maxLength = 300): Uint8Array[] {
  const next = mulberry32(seed);
  const keys: Uint8Array[] = [];
  for (let c = 0; c < copies; c++) {
    for (let len = 0; len <= maxLength; len++) {
      keys.push(Uint8Array.from({ length: len }, () => Math.floor(next() * 256)));
    }
  }
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return keys;
}
