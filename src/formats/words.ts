/**
 * Payloads of 32-bit words, little-endian (the bit arrays of the classic, blocked, split-block,
 * scalable and sharded filters, and the cuckoo filter's table): words to bytes and back (a view
 * on little-endian hosts, a copy otherwise), a view of a payload in place for `{ copy: false }`,
 * and the streaming sink whose target is the filter's own words.
 */

import { FormatError } from '../errors.js';
import { LITTLE_ENDIAN } from '../hash/murmur3.js';
import type { DecodeOptions, PayloadSink } from './native.js';

/** The bytes of a u32 word array in little-endian order (a view on LE hosts, a copy otherwise). */
export function wordsToBytes(words: Uint32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const out = new Uint8Array(words.byteLength);
  const v = new DataView(out.buffer);
  for (let i = 0; i < words.length; i++) v.setUint32(4 * i, words[i]!, true);
  return out;
}

/** Copies little-endian bytes into a u32 word array. */
export function bytesToWords(bytes: Uint8Array, into: Uint32Array): void {
  if (bytes.length !== into.byteLength) {
    throw new FormatError(`payload has ${bytes.length} bytes, expected ${into.byteLength}`);
  }
  if (LITTLE_ENDIAN) {
    new Uint8Array(into.buffer, into.byteOffset, into.byteLength).set(bytes);
    return;
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < into.length; i++) into[i] = v.getUint32(4 * i, true);
}

/**
 * For `{ copy: false }`: the payload's 32-bit words viewed in place, when it is 4-byte aligned on
 * a little-endian host; otherwise null (the caller copies).
 */
export function payloadWordsView(payload: Uint8Array, options?: DecodeOptions): Uint32Array | null {
  if (options?.copy !== false || !LITTLE_ENDIAN || payload.byteOffset % 4 !== 0) return null;
  return new Uint32Array(payload.buffer, payload.byteOffset, payload.length / 4);
}

/**
 * A streaming sink whose one target is `words` themselves (no intermediate buffer): `finish`
 * byte-swaps them on big-endian hosts, then returns what `done` makes of them (recounted bits, a
 * checked table).
 */
export function wordsSink<F>(words: Uint32Array, done: () => F): PayloadSink<F> {
  const target = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  return {
    targets: [target],
    finish() {
      if (!LITTLE_ENDIAN) bytesToWords(target.slice(), words);
      return done();
    },
  };
}
