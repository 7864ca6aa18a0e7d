/**
 * Deterministic key sets packed straight into bytes for the batch paths (`addBatch` /
 * `hasBatch`), without making a JavaScript string per key: the statistical tests probe millions
 * of keys, and allocating the strings cost more than the filters' own work.
 */
import type { PackedKeys } from '../../src/index.js';

const utf8 = new TextEncoder();

/**
 * The keys `${prefix}${from}`, `${prefix}${from + 1}`, … (n keys, `from` ≥ 0, decimal), packed
 * as the 'string' and 'bytes' funnels hash them (UTF-8): the same bytes as
 * `packKeys('string', keys)` of those strings. `keys(p, n, from)` of random.ts is
 * `packedSequence(`${p}:`, n, from)`.
 */
export function packedSequence(prefix: string, n: number, from = 0): PackedKeys {
  if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(n) || n < 0) {
    throw new RangeError(`from and n must be non-negative safe integers, got ${from} and ${n}`);
  }
  const head = utf8.encode(prefix);
  const widest = String(Math.max(from, from + n - 1)).length;
  const bytes = new Uint8Array(n * (head.length + widest));
  const offsets = new Uint32Array(n + 1);
  // The current number's ASCII digits, right-aligned in `digits` from `first` on, counted up
  // by one per key like an odometer (a carry past the leftmost digit adds a digit).
  const digits = new Uint8Array(widest);
  const start = String(from);
  let first = widest - start.length;
  for (let j = 0; j < start.length; j++) digits[first + j] = start.charCodeAt(j);
  let p = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < head.length; j++) bytes[p++] = head[j]!;
    for (let j = first; j < widest; j++) bytes[p++] = digits[j]!;
    offsets[i + 1] = p;
    let j = widest - 1;
    while (j >= first && digits[j] === 57) digits[j--] = 48;
    if (j >= first) digits[j]!++;
    else if (first > 0) digits[--first] = 49;
  }
  return { bytes: bytes.subarray(0, p), offsets };
}

/** How many of the packed keys `hasBatch` answers true for. */
export function countFound(found: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < found.length; i++) n += found[i]!;
  return n;
}
