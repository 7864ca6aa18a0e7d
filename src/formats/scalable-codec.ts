/**
 * The scalable Bloom filter in bloomkit's native format (filter type id 3).
 *
 * Parameters (32 bytes, little-endian):
 *
 * | offset | size | field                                                      |
 * |--------|------|------------------------------------------------------------|
 * | 0      | 8    | initial capacity c0, u64 (a positive safe integer)         |
 * | 8      | 8    | target rate P, f64 in (0, 1)                               |
 * | 16     | 8    | tightening ratio r, f64 in (0, 1)                          |
 * | 24     | 1    | growth factor s, u8: 2 or 4                                |
 * | 25     | 3    | reserved, 0                                                |
 * | 28     | 4    | number of layers L, u32 (1..64)                            |
 *
 * Hash scheme: 1 (MURMUR128_MITZ_64, each layer over its own size). Payload: the L layers, oldest
 * first, each a 24-byte layer header followed by its bits:
 *
 * | offset | size    | field                                                        |
 * |--------|---------|--------------------------------------------------------------|
 * | 0      | 8       | bit size m_i, u64, a multiple of 64 up to 2^36               |
 * | 8      | 8       | keys added to the layer n_i, u64 (≤ c0·s^i; = c0·s^i unless last) |
 * | 16     | 4       | hash functions k_i, u32 (1..255)                             |
 * | 20     | 4       | reserved, 0                                                  |
 * | 24     | m_i / 8 | the layer's 64-bit words, little-endian (the bloom payload)  |
 *
 * A layer's capacity c0·s^i and rate P·(1 − r)·r^i follow from the parameters; its m_i and k_i
 * are read, never recomputed.
 */

import { FormatError } from '../errors.js';
import { ScalableBloomFilter } from '../filters/scalable.js';
import { FUNNEL_IDS } from '../hash/keys.js';
import { MAX_BITS } from '../math.js';
import {
  bytesToWords,
  checkHashScheme,
  checkParamsLength,
  decodeContainer,
  encodeContainer,
  FILTER_TYPES,
  getU64,
  HASH_SCHEMES,
  headerFunnel,
  setU64,
  wordsToBytes,
} from './native.js';

const PARAMS_BYTES = 32;
const LAYER_HEADER_BYTES = 24;
/** More layers than a safe-integer capacity allows at s = 2 (c0·2^53 overflows). */
const MAX_LAYERS = 64;

export function encodeScalable(filter: ScalableBloomFilter): Uint8Array {
  const params = new Uint8Array(PARAMS_BYTES);
  const v = new DataView(params.buffer);
  setU64(v, 0, filter.initialCapacity);
  v.setFloat64(8, filter.fpp, true);
  v.setFloat64(16, filter.ratio, true);
  v.setUint8(24, filter.growth);
  v.setUint32(28, filter.layerCount, true);
  const parts: Uint8Array[] = [];
  for (const [i, info] of filter.layers().entries()) {
    const head = new Uint8Array(LAYER_HEADER_BYTES);
    const hv = new DataView(head.buffer);
    setU64(hv, 0, info.bits);
    setU64(hv, 8, info.count);
    hv.setUint32(16, info.hashes, true);
    parts.push(head, wordsToBytes(filter.layer(i).bits.data));
  }
  return encodeContainer(
    FILTER_TYPES.scalable,
    HASH_SCHEMES.murmur128Mitz64,
    FUNNEL_IDS[filter.funnel],
    params,
    parts,
  );
}

export function decodeScalable(bytes: Uint8Array): ScalableBloomFilter {
  const { header, params, payload } = decodeContainer(bytes, FILTER_TYPES.scalable);
  checkParamsLength(header, PARAMS_BYTES, 'scalable filter');
  checkHashScheme(header, HASH_SCHEMES.murmur128Mitz64, 'scalable filter', 'MURMUR128_MITZ_64');
  const funnel = headerFunnel(header);
  const c0 = getU64(params, 0, 'initial capacity');
  const fpp = params.getFloat64(8, true);
  const ratio = params.getFloat64(16, true);
  const growth = params.getUint8(24);
  const layers = params.getUint32(28, true);
  if (c0 < 1) throw new FormatError(`bad initial capacity ${c0}: must be positive`);
  if (!(fpp > 0 && fpp < 1)) throw new FormatError(`bad target rate ${fpp}: must be in (0, 1)`);
  if (!(ratio > 0 && ratio < 1)) {
    throw new FormatError(`bad tightening ratio ${ratio}: must be in (0, 1)`);
  }
  if (growth !== 2 && growth !== 4)
    throw new FormatError(`bad growth factor ${growth}: must be 2 or 4`);
  if (params.getUint8(25) !== 0 || params.getUint16(26, true) !== 0) {
    throw new FormatError('reserved scalable filter parameter bytes are not zero');
  }
  if (layers < 1 || layers > MAX_LAYERS) {
    throw new FormatError(`bad layer count ${layers}: must be 1..${MAX_LAYERS}`);
  }
  const filter = ScalableBloomFilter.restore(c0, fpp, growth, ratio, funnel);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  let p = 0;
  for (let i = 0; i < layers; i++) {
    if (payload.length - p < LAYER_HEADER_BYTES) {
      throw new FormatError(`payload ends inside the header of layer ${i}`);
    }
    const bits = getU64(view, p, `layer ${i} bit size`);
    const count = getU64(view, p + 8, `layer ${i} key count`);
    const hashes = view.getUint32(p + 16, true);
    if (view.getUint32(p + 20, true) !== 0) {
      throw new FormatError(`reserved bytes of layer ${i} are not zero`);
    }
    if (bits === 0 || bits % 64 !== 0 || bits > MAX_BITS) {
      throw new FormatError(
        `bad bit size ${bits} in layer ${i}: must be a positive multiple of 64 up to ${MAX_BITS}`,
      );
    }
    if (hashes < 1 || hashes > 255) {
      throw new FormatError(`bad number of hash functions ${hashes} in layer ${i}: must be 1..255`);
    }
    const capacity = c0 * growth ** i;
    if (!Number.isSafeInteger(capacity)) {
      throw new FormatError(`layer ${i} would hold ${capacity} keys, past 2^53`);
    }
    if (count > capacity || (i < layers - 1 && count !== capacity)) {
      throw new FormatError(
        `layer ${i} holds ${count} keys: a layer holds at most ${capacity} and only the last may hold fewer`,
      );
    }
    p += LAYER_HEADER_BYTES;
    if (payload.length - p < bits / 8) {
      throw new FormatError(`payload ends inside the bits of layer ${i}`);
    }
    const words = new Uint32Array(bits / 32);
    bytesToWords(payload.subarray(p, p + bits / 8), words);
    p += bits / 8;
    filter.restoreLayer(bits, hashes, words, count);
  }
  if (p !== payload.length) {
    throw new FormatError(`${payload.length - p} bytes follow the last of ${layers} layers`);
  }
  return filter;
}
