/**
 * Error classes and argument checks shared by every bloomkit module.
 *
 * Bad input is rejected at the boundary with an error that names the parameter and the value,
 * as Guava does (`fpp must be in (0, 1), got 1.5`). Plain argument mistakes use the built-in
 * `RangeError` and `TypeError`; the classes below cover the cases a caller may want to catch.
 */

/** Two filters cannot be combined or compared (different k, size, strategy or key encoding). */
export class IncompatibleFiltersError extends TypeError {
  override readonly name = 'IncompatibleFiltersError';
}

/** Bytes that do not hold a valid filter: wrong magic, unknown version, bad checksum, truncation. */
export class FormatError extends Error {
  override readonly name = 'FormatError';
}

/** A filter with a fixed capacity (the cuckoo filter) could not store another key. */
export class FilterFullError extends Error {
  override readonly name = 'FilterFullError';
}

/** Formats a value for an error message: strings quoted, bigints with their `n`. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (value instanceof Uint8Array) return `Uint8Array(${value.length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (typeof value !== 'object') return String(value);
  // A filter by its class (`a ScalableBloomFilter`), not `[object Object]`.
  const ctor = (value as { constructor?: { typeName?: unknown } }).constructor;
  if (typeof ctor?.typeName === 'string') return `a ${ctor.typeName}`;
  return Object.prototype.toString.call(value);
}

/**
 * The one form of an argument error, `<name> must be <expected>, got <value>` (the value as
 * {@link show} writes it): a `RangeError`, or `Ctor` (`TypeError` for a value of the wrong kind).
 */
export function mustBe(
  name: string,
  expected: string,
  value: unknown,
  Ctor: new (message: string) => Error = RangeError,
): Error {
  return new Ctor(`${name} must be ${expected}, got ${show(value)}`);
}

/** Throws a `RangeError` unless `value` is a positive safe integer; returns it. */
export function checkPositiveInteger(
  name: string,
  value: unknown,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw mustBe(name, 'a positive safe integer', value);
  }
  if (value > max) {
    throw mustBe(name, `at most ${max}`, value);
  }
  return value;
}

/** Throws a `TypeError` unless `value` is a `Uint8Array` (keys and hash inputs: no other view). */
export function checkUint8Array(name: string, value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw mustBe(name, 'a Uint8Array', value, TypeError);
  }
  return value;
}

/**
 * Serialized bytes as a Uint8Array: a `Uint8Array` as it is, an `ArrayBuffer` (what
 * `fetch().arrayBuffer()` returns) or any other `ArrayBufferView` (Buffer, DataView) viewed, not
 * copied; anything else is a `TypeError`.
 */
export function checkBytes(name: string, value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  // What fetch().arrayBuffer(), Buffer, DataView and other views hold: viewed, not copied.
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  }
  throw mustBe(name, 'a Uint8Array, an ArrayBuffer or an ArrayBufferView', value, TypeError);
}

/** Throws a `TypeError` unless `value` is a non-null object (an options bag); returns it. */
export function checkOptions<T extends object>(name: string, value: unknown): T {
  if (value === null || typeof value !== 'object') {
    throw mustBe(name, 'an object', value, TypeError);
  }
  return value as T;
}

/** Throws a `RangeError` unless `value` is a number strictly inside (0, 1); returns it. */
export function checkProbability(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value < 1)) {
    throw mustBe(name, 'in (0, 1)', value);
  }
  return value;
}

/**
 * A class's public name for messages, JSON and summaries: its static `typeName` (a string
 * literal, so it survives an application's bundler and minifier, which rename classes), else
 * the class's own name.
 */
export function typeNameOf(type: unknown): string {
  const t = type as { typeName?: unknown; name?: unknown } | null;
  if (t !== null && typeof t.typeName === 'string') return t.typeName;
  return typeof t?.name === 'string' ? t.name : 'filter';
}
