/** Comparing byte arrays in tests. */
import { expect } from 'vitest';

/**
 * The same bytes, compared with Buffer.compare (toEqual walks a byte array element by element,
 * slowly for large arrays); a difference is reported with `what`, both lengths and the first
 * index where the two differ.
 */
export function expectBytes(actual: Uint8Array, expected: Uint8Array, what = 'bytes'): void {
  if (actual.length === expected.length && Buffer.compare(actual, expected) === 0) return;
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  expect.fail(
    `${what}: ${actual.length} vs ${expected.length} bytes, first difference at ${i} (${actual[i]} vs ${expected[i]})`,
  );
}

/**
 * `expect(actual).toEqual(expected)` for arrays of numbers or booleans (plain or typed), with a
 * fast path: element by element with `===` first, and `toEqual` (for its diff) only when they
 * differ. toEqual alone walks every index as an object key: about a microsecond per element.
 */
export function expectSameArray<T extends number | boolean>(
  actual: ArrayLike<T>,
  expected: ArrayLike<T>,
): void {
  let same = actual.length === expected.length;
  for (let i = 0; same && i < actual.length; i++) same = actual[i] === expected[i];
  if (!same) expect(Array.from(actual)).toEqual(Array.from(expected));
}
