/**
 * Guava's `BloomFilter.writeTo` / `readFrom` serial form (31.1), byte for byte:
 *
 * | offset | size | field                                                             |
 * |--------|------|-------------------------------------------------------------------|
 * | 0      | 1    | strategy ordinal, signed byte: 0 = MURMUR128_MITZ_32, 1 = MITZ_64 |
 * | 1      | 1    | number of hash functions k, unsigned byte (1..255)                |
 * | 2      | 4    | N, the number of 64-bit words, int32 big-endian                   |
 * | 6      | 8·N  | the words, int64 big-endian, word 0 first                         |
 *
 * Bit i is bit (i & 63) of word i >>> 6. Neither the funnel nor the requested (n, p) are
 * stored; the bit size is 64·N. As with Guava's stream-based `readFrom`, bytes after the
 * 6 + 8·N that the header announces are not read.
 */

import { checkBytes, checkOptions, FormatError } from '../../errors.js';
import { bloomkitAdvice } from '../../formats/detect.js';
import { checkFunnel, type Funnel } from '../../hash/keys.js';
import { STRATEGY_ORDINALS, strategyFromOrdinal } from '../../hash/strategies.js';
import { MAX_BITS } from '../../math.js';
import type { BloomFilter } from './filter.js';

/** Writes `filter` as Guava's `writeTo` would. */
export function writeGuava(filter: BloomFilter): Uint8Array {
  const data = filter.bits.data;
  const words = data.length / 2;
  const out = new Uint8Array(6 + 8 * words);
  const view = new DataView(out.buffer);
  view.setInt8(0, STRATEGY_ORDINALS[filter.strategy]);
  view.setUint8(1, filter.hashes);
  view.setInt32(2, words);
  for (let w = 0, p = 6; w < words; w++, p += 8) {
    view.setUint32(p, data[2 * w + 1]!);
    view.setUint32(p + 4, data[2 * w]!);
  }
  return out;
}

/** `Guava BloomFilter<what> (<facts>)<after>`: the form of every message of {@link readGuava}. */
function guavaError(what: string, facts?: string, after = ''): FormatError {
  return new FormatError(
    `Guava BloomFilter${what}${facts === undefined ? '' : ` (${facts})`}${after}`,
  );
}

/** Reads Guava's `writeTo` bytes, rejecting what Guava's `readFrom` rejects, with the same facts. */
export function readGuava(
  bytes: Uint8Array,
  options: { funnel?: Funnel; shared?: boolean },
  Filter: typeof BloomFilter,
): BloomFilter {
  bytes = checkBytes('bytes', bytes);
  checkOptions('options', options);
  const funnel = checkFunnel(options.funnel ?? 'string');
  if (bytes.length < 6) {
    throw guavaError(` bytes truncated: the header needs 6 bytes, got ${bytes.length}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ordinal = view.getInt8(0);
  const hashes = view.getUint8(1);
  const words = view.getInt32(2);
  const facts = `strategyOrdinal: ${ordinal} numHashFunctions: ${hashes} dataLength: ${words}`;
  const strategy = strategyFromOrdinal(ordinal);
  if (strategy === undefined) {
    // bloomkit's own bytes are the confusion worth explaining here (detect.ts holds the rest).
    const advice = bloomkitAdvice(bytes);
    throw guavaError(
      `: unknown strategy ordinal ${ordinal} (0 = MURMUR128_MITZ_32, 1 = MURMUR128_MITZ_64)`,
      facts,
      advice && `; ${advice}`,
    );
  }
  if (hashes === 0) {
    throw guavaError(': numHashFunctions (0) must be > 0', facts);
  }
  if (words <= 0) {
    throw guavaError(`: data length must be positive, got ${words}`, facts);
  }
  if (words * 64 > MAX_BITS) {
    throw guavaError(
      `: data length ${words} means ${words * 64} bits, more than the maximum ${MAX_BITS}`,
      facts,
    );
  }
  const need = 6 + 8 * words;
  if (bytes.length < need) {
    throw guavaError(
      ` bytes truncated: the header announces ${need} bytes, got ${bytes.length}`,
      facts,
    );
  }
  const filter = new Filter({
    bits: words * 64,
    hashes,
    funnel,
    strategy,
    shared: options.shared ?? false,
  });
  const data = filter.bits.data;
  for (let w = 0, p = 6; w < words; w++, p += 8) {
    data[2 * w + 1] = view.getUint32(p);
    data[2 * w] = view.getUint32(p + 4);
  }
  filter.bits.recount();
  return filter;
}
