/**
 * The checks every codec makes of a decoded native header and parameters (formats/native.ts):
 * one function, and so one message, for each, everywhere. Each throws a `FormatError` that names
 * the field and the value.
 */

import { FormatError } from '../errors.js';
import { type Funnel, funnelFromId } from '../hash/keys.js';
import { MAX_BITS } from '../math.js';
import type { NativeHeader } from './native.js';

/** Throws a `FormatError` unless the header's type id is `typeId`. */
export function checkTypeId(header: NativeHeader, typeId: number): void {
  if (header.type !== typeId) {
    throw new FormatError(
      `expected filter type id ${typeId}, the bytes hold type id ${header.type}`,
    );
  }
}

/** Throws a `FormatError` unless the parameters are `bytes` long, the size `what` defines. */
export function checkParamsLength(header: NativeHeader, bytes: number, what: string): void {
  if (header.paramsLength !== bytes) {
    throw new FormatError(`${what} params must be ${bytes} bytes, got ${header.paramsLength}`);
  }
}

/** Throws a `FormatError` unless the hash scheme is `scheme`, the only one `what` defines. */
export function checkHashScheme(
  header: NativeHeader,
  scheme: number,
  what: string,
  schemeName: string,
): void {
  if (header.hash !== scheme) {
    throw new FormatError(
      `hash scheme id ${header.hash} is not defined for a ${what} (only ${scheme}, ${schemeName})`,
    );
  }
}

/** The funnel the header names; a `FormatError` for an unknown funnel id. */
export function headerFunnel(header: NativeHeader): Funnel {
  const funnel = funnelFromId(header.funnel);
  if (funnel === undefined) throw new FormatError(`unknown funnel id ${header.funnel}`);
  return funnel;
}

/**
 * Throws a `FormatError` unless `hashes`, a stored number of hash functions, is in 1..255; `where`
 * (`' in layer 2'`) places the field in the message.
 */
export function checkHashCount(hashes: number, where = ''): void {
  if (hashes < 1 || hashes > 255) {
    throw new FormatError(`bad number of hash functions ${hashes}${where}: must be 1..255`);
  }
}

/**
 * Throws a `FormatError` unless `bits`, a stored bit array size, is a positive multiple of 64 up
 * to `MAX_BITS`; `where` places the field in the message.
 */
export function checkStoredBits(bits: number, where = ''): void {
  if (bits === 0 || bits % 64 !== 0 || bits > MAX_BITS) {
    throw new FormatError(
      `bad bit size ${bits}${where}: must be a positive multiple of 64 up to ${MAX_BITS}`,
    );
  }
}
