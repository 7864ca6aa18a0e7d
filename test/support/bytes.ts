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
