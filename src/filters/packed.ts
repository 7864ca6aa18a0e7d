/**
 * Packed keys for the batch paths (`addBatch` / `hasBatch`): many keys in one byte buffer with
 * an offsets array, so that a batch is hashed where its bytes lie, with no JavaScript string or
 * object per key. Key i is `bytes.subarray(offsets[i], offsets[i + 1])`.
 *
 * `packKeys(funnel, keys)` encodes JavaScript keys exactly as the filter's funnel does (so a
 * packed key and the same key given to `add` hash alike); `splitRecords(buffer)` cuts a buffer
 * of lines (or NUL-separated records) into packed keys without copying a byte: for a `'string'`
 * filter a line's raw UTF-8 bytes are its key bytes, so invalid UTF-8 is hashed as it is.
 */

import { checkBytes, mustBe } from '../errors.js';
import type { Funnel, Key } from '../hash/keys.js';
import { type PackTarget, packAll } from '../hash/pack.js';
import type { PackedKeys } from './filter.js';

export type { PackTarget };

/**
 * Encodes every key with `funnel` into one buffer (see {@link PackedKeys}). With `into`, its
 * `bytes` and `offsets` are written and viewed by the result when they are big enough (reuse them
 * from call to call: no allocation, no fresh pages to fault in); otherwise new ones are allocated.
 */
export function packKeys(funnel: Funnel, keys: Iterable<Key>, into?: PackTarget): PackedKeys {
  checkKeys(keys);
  if (into !== undefined && (into === null || typeof into !== 'object')) {
    throw mustBe('into', '{ bytes?, offsets? }', into, TypeError);
  }
  if (into?.bytes !== undefined && !(into.bytes instanceof Uint8Array)) {
    throw mustBe('into.bytes', 'a Uint8Array', into.bytes, TypeError);
  }
  if (into?.offsets !== undefined && !(into.offsets instanceof Uint32Array)) {
    throw mustBe('into.offsets', 'a Uint32Array', into.offsets, TypeError);
  }
  // Any iterable is gathered into an array first: the array packer is the fast one.
  return packAll(funnel, Array.isArray(keys) ? keys : Array.from(keys), into);
}

/**
 * Splits `buffer` at every `separator` byte (default `\n`; `0` for NUL-separated records) into
 * packed keys that view `buffer` (nothing is copied: `offsets` holds each record's start and
 * `ends` its end). A `\r` before a `\n` is dropped, and a final record without a separator
 * counts; an empty line is an empty key. With `{ trailing: false }` the bytes after the last
 * separator are left out, and `rest` says where they begin (for a stream read in chunks: carry
 * them into the next chunk).
 */
export function splitRecords(
  buffer: Uint8Array,
  separator = 0x0a,
  options: { trailing?: boolean } = {},
): Required<PackedKeys> & { rest: number } {
  buffer = checkBytes('buffer', buffer);
  if (!Number.isInteger(separator) || separator < 0 || separator > 255) {
    throw mustBe('separator', 'a byte value (0 to 255)', separator);
  }
  const trailing = options.trailing ?? true;
  let starts: Uint32Array = new Uint32Array(257);
  let ends: Uint32Array = new Uint32Array(256);
  let count = 0;
  let start = 0;
  const n = buffer.length;
  while (start < n) {
    const at = buffer.indexOf(separator, start);
    if (at < 0 && !trailing) break;
    const stop = at < 0 ? n : at;
    let end = stop;
    if (separator === 0x0a && end > start && buffer[end - 1] === 0x0d) end--;
    if (count + 1 >= ends.length) {
      starts = grow(starts);
      ends = grow(ends);
    }
    starts[count] = start;
    ends[count] = end;
    count++;
    start = stop + 1;
  }
  const rest = Math.min(start, n);
  starts[count] = rest;
  return {
    bytes: buffer,
    offsets: starts.subarray(0, count + 1),
    ends: ends.subarray(0, count),
    rest,
  };
}

function grow(a: Uint32Array): Uint32Array {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}

/** The end of key `i` of `batch` (see {@link PackedKeys}). */
export function keyEnd(batch: PackedKeys, i: number): number {
  return batch.ends === undefined ? batch.offsets[i + 1]! : batch.ends[i]!;
}

/** Calls `each(bytes, i)` with a view of every packed key, in order. */
export function forEachPacked(
  batch: PackedKeys,
  each: (key: Uint8Array, index: number) => void,
): void {
  const count = checkPacked(batch);
  const { bytes, offsets } = batch;
  for (let i = 0; i < count; i++) each(bytes.subarray(offsets[i]!, keyEnd(batch, i)), i);
}

/** Throws a `TypeError` unless `batch` is a well-formed {@link PackedKeys}. */
export function checkPacked(batch: PackedKeys): number {
  const count = packedCount(batch);
  const { bytes, offsets, ends } = batch;
  let prev = offsets[0]!;
  for (let i = 1; i <= count; i++) {
    const o = offsets[i]!;
    if (o < prev || o > bytes.length) {
      throw mustBe(`batch.offsets[${i}]`, `in [${prev}, ${bytes.length}]`, o);
    }
    if (ends !== undefined && !(ends[i - 1]! >= prev && ends[i - 1]! <= o)) {
      throw mustBe(`batch.ends[${i - 1}]`, `in [${prev}, ${o}]`, ends[i - 1]);
    }
    prev = o;
  }
  return count;
}

/**
 * The number of keys in `batch`, after checking its shape (the types and lengths of its arrays,
 * O(1)) but not its offsets: for a caller that hands the batch to a method that checks it whole
 * ({@link checkPacked}) before reading any key.
 */
export function packedCount(batch: PackedKeys): number {
  if (batch === null || typeof batch !== 'object') {
    throw mustBe('batch', '{ bytes, offsets }', batch, TypeError);
  }
  const { bytes, offsets } = batch;
  if (!(bytes instanceof Uint8Array)) {
    throw mustBe('batch.bytes', 'a Uint8Array', bytes, TypeError);
  }
  if (!(offsets instanceof Uint32Array) || offsets.length < 1) {
    throw mustBe('batch.offsets', 'a non-empty Uint32Array', offsets, TypeError);
  }
  const count = offsets.length - 1;
  const ends = batch.ends;
  if (ends !== undefined && (!(ends instanceof Uint32Array) || ends.length !== count)) {
    throw mustBe('batch.ends', `a Uint32Array of ${count} entries`, ends, TypeError);
  }
  return count;
}

/** Throws a `TypeError` unless `keys` is an iterable of keys (a lone string is refused). */
export function checkKeys(keys: unknown): void {
  if (
    typeof keys === 'string' ||
    keys === null ||
    typeof keys !== 'object' ||
    typeof (keys as Iterable<unknown>)[Symbol.iterator] !== 'function'
  ) {
    throw mustBe('keys', 'an iterable of keys (not a string)', keys, TypeError);
  }
}
