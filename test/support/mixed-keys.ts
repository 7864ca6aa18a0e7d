/**
 * Keys that exercise every encoding path of the funnels: ASCII URLs, non-ASCII text (2-, 3- and
 * 4-byte UTF-8), lone surrogates (Java writes '?'), empty keys, and a few long ones; numbers at
 * the edges of 'int' and 'long'; byte strings of many lengths. Seeded: the same keys every run.
 */
import type { Funnel, Key } from '../../src/hash/keys.js';
import { mulberry32 } from './random.js';

const PIECES = ['a', 'Z', '/', 'é', '日', '😀', '\ud800', '\udc00', '\u07ff', '\uffff', '?'];

/** `n` strings (half plain URLs), then a few edge cases, from `seed`. */
export function mixedStrings(n: number, seed: number, longest = 5000): string[] {
  const rnd = mulberry32(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const kind = rnd() * 10;
    if (kind < 5) {
      out.push(`https://example.com/item/${seed}/${i}`);
      continue;
    }
    const len = kind < 9.5 ? Math.floor(rnd() * 200) : Math.floor(rnd() * longest);
    // Joined once: `+=` per piece made a rope of up to 5,000 pieces to flatten (2.5x the time).
    const parts = new Array<string>(len + 1);
    parts[0] = `${i}:`;
    for (let j = 1; j <= len; j++) parts[j] = PIECES[Math.floor(rnd() * PIECES.length)]!;
    out.push(parts.join(''));
  }
  out.push('', 'x', 'ab\ud800', '\udc00cd', '\ud83d', '\ude00');
  return out;
}

/** `n` distinct keys of the kind `funnel` takes, from `seed`. */
export function mixedKeys(funnel: Funnel, n: number, seed: number): Key[] {
  switch (funnel) {
    case 'string':
    case 'utf16':
      return mixedStrings(n, seed);
    case 'int':
      return Array.from({ length: n }, (_, i) => Math.imul(i + seed * 100_003, 2654435761) | 0);
    case 'long':
      return Array.from({ length: n }, (_, i) =>
        i % 2 === 0 ? BigInt(i + seed * 1_000_003) * -99991234567n : i * 12345 + seed,
      );
    case 'bytes':
      return Array.from({ length: n }, (_, i) => {
        const b = new Uint8Array((i * 7) % 301);
        for (let j = 0; j < b.length; j++) b[j] = (i * 31 + j * 17 + seed) & 255;
        if (b.length >= 4) new DataView(b.buffer).setUint32(0, i);
        return b;
      });
  }
}

/** True if `s` has no lone surrogate (so it round-trips through UTF-8). */
export function isWellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}
