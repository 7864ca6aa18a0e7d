/**
 * MurmurHash3 x64 128 (Austin Appleby, public domain), seed 0 by default: equal to Guava's
 * `Hashing.murmur3_128()` over the same bytes. The result is h1 then h2; Guava's
 * `HashCode.asLong()` is h1, and the HashCode's bytes are h1 then h2, each little-endian.
 *
 * Two implementations give the same result: WebAssembly with native 64-bit multiplies
 * (wasm/murmur3.wat, used by `hash/hasher.ts` wherever WebAssembly runs), and a JavaScript core
 * on int32 halves (murmur3-core.ts, through the 64-bit helpers of u64.ts) for hosts without it.
 */

import { checkUint8Array, show } from '../errors.js';
import { murmur3Core } from './murmur3-core.js';

/** True when typed arrays are little-endian on this platform (every mainstream engine). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * MurmurHash3 x64 128 of `bytes`, as `[h1, h2]` unsigned 64-bit bigints (JavaScript core).
 * Allocates; for tests and tools, not for hot paths.
 */
export function murmur3x64_128(bytes: Uint8Array, seed = 0): [bigint, bigint] {
  checkUint8Array('bytes', bytes);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`seed must be an integer in [0, 2^32), got ${show(seed)}`);
  }
  const copy = new Uint8Array(Math.ceil(bytes.length / 16) * 16 + 16);
  copy.set(bytes);
  const out = new Int32Array(4);
  murmur3Core(copy, LITTLE_ENDIAN ? new Int32Array(copy.buffer) : null, 0, bytes.length, out, seed);
  const u = (lo: number, hi: number): bigint => (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
  return [u(out[0]!, out[1]!), u(out[2]!, out[3]!)];
}
