/**
 * The calculator: from any two of n (keys), p (false positive rate), m (memory in bits) and,
 * optionally, k (hashes), the shape of each filter type and the rest of the numbers. It is the
 * library's one solver (`solveSize`, over each type's size model in the codec table), the same
 * that `bloomkit calc` prints, so the page, the command and `create()` always agree.
 *
 * Which inputs win when more than two are given: (n, m), then (n, p), then (m, p), then (n, k),
 * then (m, k). With (n, p) and no k, every type is sized exactly as its `create({ capacity, fpp })`
 * sizes it.
 */

import { type SizeAnswer, type SizeInputs, solveSize } from '../../src/index.js';
import type { KindId } from './kinds.js';

export type CalcInputs = { n?: number; p?: number; m?: number; k?: number } & SizeInputs;

export type CalcResult = SizeAnswer;

/**
 * Solves for `kind`. Throws a `RangeError` naming the problem when the inputs do not determine
 * a shape (fewer than two of n, p, m; a size too small for one key; a k the type does not take).
 */
export function solve(kind: KindId, input: CalcInputs): CalcResult {
  return solveSize(kind, input);
}
