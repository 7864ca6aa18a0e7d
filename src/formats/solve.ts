/**
 * The one solver of size questions, for every type with a size model: "any two of n, p, m, k
 * give the rest". The library exports it (`solveSize`), `bloomkit calc` prints it and the web
 * page's calculator shows it, so the three give the same numbers for the same inputs.
 *
 *   solveSize('classic', { m: 64 * 8 * 2 ** 20, p: 1e-6 }).n   // 18,670,342 keys fit 64 MiB
 */

import { lowerBoundBitsPerKey } from '../math.js';
import { typeNamed } from './registry.js';
import { choosePair, type SizeInputs, type SizePair, type SizeShape } from './size-model.js';

/** Everything a size question's answer holds. */
export interface SizeAnswer<S extends SizeShape = SizeShape> {
  /** The type's explicit shape (`{ kind: 'classic', bits, hashes }`, ...). */
  readonly shape: S;
  /** Keys: given, or the most the shape holds at rate p. */
  readonly n: number;
  /** The model false positive rate at n keys. */
  readonly p: number;
  /** Memory of the table in bits. */
  readonly bits: number;
  /**
   * Bytes a filter of the shape allocates: ⌈bits/8⌉, or whole words where the type allocates
   * them (a cuckoo table of 40 bits takes 8 bytes); what `filterBytes`, `create` and `info` give.
   */
  readonly bytes: number;
  /** Probes per key, or null (fingerprint types). */
  readonly k: number | null;
  readonly bitsPerKey: number;
  /** log2(1/p): no filter with rate p can use fewer bits per key (NaN when p is 0 or 1). */
  readonly lowerBound: number;
  /** Which inputs were used (`'n and p'`). */
  readonly from: string;
  /** Inputs that were given but not used, and other remarks. */
  readonly notes: readonly string[];
}

const FROM: Readonly<Record<SizePair, string>> = {
  nm: 'n and m',
  np: 'n and p',
  mp: 'm and p',
  nk: 'n and k',
  mk: 'm and k',
};

/**
 * Sizes a `type` filter from any two of n (keys), p (rate), m (bits) and k (probes). Which pair
 * is used when more are given: (n, m), (n, p), (m, p), (n, k), (m, k). Throws a `RangeError`
 * naming the problem when the inputs do not determine a shape (fewer than two of them, a size
 * too small for one key, a k the type does not take) or the type has no size model.
 */
export function solveSize(type: string, input: SizeInputs): SizeAnswer {
  const model = typeNamed(type, 'model').model;
  const pair = choosePair(input);
  if (pair === null) {
    throw new RangeError(
      input.p !== undefined && input.k !== undefined
        ? 'p and k alone do not fix a size: add n or m'
        : 'give two of n, p and m (k is optional)',
    );
  }
  const notes: string[] = [];
  if (pair === 'nm' && input.p !== undefined) notes.push('p is computed from n and m');
  if (pair === 'np' && input.k !== undefined && input.m === undefined) {
    notes.push('m solved for the k given');
  }
  const solution = model.solve(pair, input);
  notes.push(...(solution.notes ?? []));
  const { shape, n } = solution;
  const bits = model.bits(shape);
  const p = model.rate(shape, n);
  return {
    shape,
    n,
    p,
    bits,
    bytes: model.bytes?.(shape) ?? Math.ceil(bits / 8),
    k: model.hashes(shape),
    bitsPerKey: bits / n,
    lowerBound: p > 0 && p < 1 ? lowerBoundBitsPerKey(p) : Number.NaN,
    from: FROM[pair],
    notes,
  };
}
