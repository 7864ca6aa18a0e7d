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
 *
 * Every layer's bits start 8-byte aligned (the payload starts at offset 56, a layer header is 24
 * bytes and m_i/8 a multiple of 8), so with `{ copy: false }` the decoder of
 * {@link scalableFormat} lets each layer's words view `bytes` on a little-endian host when the
 * container starts 4-byte aligned. For the streaming reader and writer of `bloomkit/node`: its
 * parts (each layer's header, freshly built, then a view of its words) and its sink, whose
 * targets are lazy: it yields a 24-byte
 * buffer for a layer header, checks what arrived against the parameters and the bytes left of L,
 * and only then allocates the layer and yields its words, so the reader fills each layer in place
 * as its bytes arrive and a forged layer size never allocates past L.
 */

import { FormatError } from '../../errors.js';
import {
  checkHashCount,
  checkStoredBits,
  type DecodeOptions,
  decodeContainer,
  FILTER_TYPES,
  getU64,
  type HASH_SCHEMES,
  type NativeHeader,
  type PayloadSink,
  setU64,
} from '../../formats/native.js';
import { checkTypeHeader, nativeFormat, withSink } from '../../formats/native-type.js';
import { bytesToWords, wordsToBytes } from '../../formats/words.js';
import type { Funnel } from '../../hash/keys.js';
import { LITTLE_ENDIAN } from '../../hash/murmur3.js';
import { scalableLayerTarget } from '../../math.js';
import type { ScalableBloomFilter } from './filter.js';

const SCALABLE = {
  typeId: FILTER_TYPES.scalable,
  what: 'scalable filter',
  paramsBytes: 32,
  schemes: { MURMUR128_MITZ_64: 1 satisfies typeof HASH_SCHEMES.murmur128Mitz64 },
};
const LAYER_HEADER_BYTES = 24;
/** More layers than a safe-integer capacity allows at s = 2 (c0·2^53 overflows). */
const MAX_LAYERS = 64;

/** The payload as parts: each layer's header (fresh) and a view of its words (on LE hosts). */
function scalablePayload(filter: ScalableBloomFilter): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (const [i, info] of filter.layers().entries()) {
    const head = new Uint8Array(LAYER_HEADER_BYTES);
    const hv = new DataView(head.buffer);
    setU64(hv, 0, info.bits);
    setU64(hv, 8, info.count);
    hv.setUint32(16, info.hashes, true);
    parts.push(head, wordsToBytes(filter.layer(i).bits.data));
  }
  return parts;
}

interface ScalableShape {
  c0: number;
  fpp: number;
  ratio: number;
  growth: 2 | 4;
  layers: number;
  funnel: Funnel;
}

interface LayerShape {
  bits: number;
  count: number;
  hashes: number;
}

/** Checks a scalable header and parameters (the layers are checked as they are read). */
function checkScalable(header: NativeHeader, params: DataView): ScalableShape {
  const funnel = checkTypeHeader(header, SCALABLE);
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
  return { c0, fpp, ratio, growth, layers, funnel };
}

/**
 * Checks the header of layer `i` at `view[p]`, given that `left` payload bytes follow it (its
 * bits must fit in them).
 */
function checkLayer(
  view: DataView,
  p: number,
  i: number,
  shape: ScalableShape,
  left: number,
): LayerShape {
  const bits = getU64(view, p, `layer ${i} bit size`);
  const count = getU64(view, p + 8, `layer ${i} key count`);
  const hashes = view.getUint32(p + 16, true);
  if (view.getUint32(p + 20, true) !== 0) {
    throw new FormatError(`reserved bytes of layer ${i} are not zero`);
  }
  checkStoredBits(bits, ` in layer ${i}`);
  checkHashCount(hashes, ` in layer ${i}`);
  const { capacity } = scalableLayerTarget(i, shape.c0, shape.fpp, shape.growth, shape.ratio);
  if (!Number.isSafeInteger(capacity)) {
    throw new FormatError(`layer ${i} would hold ${capacity} keys, past 2^53`);
  }
  if (count > capacity || (i < shape.layers - 1 && count !== capacity)) {
    throw new FormatError(
      `layer ${i} holds ${count} keys: a layer holds at most ${capacity} and only the last may hold fewer`,
    );
  }
  if (left < bits / 8) {
    throw new FormatError(`payload ends inside the bits of layer ${i}`);
  }
  return { bits, count, hashes };
}

function restoreScalable(
  shape: ScalableShape,
  Filter: typeof ScalableBloomFilter,
): ScalableBloomFilter {
  return Filter.restore(shape.c0, shape.fpp, shape.growth, shape.ratio, shape.funnel);
}

/**
 * Reads a native scalable container. With `{ copy: false }` each layer's words view its bits
 * inside `bytes` when they start 4-byte aligned on a little-endian host (always so for a container
 * at offset 0 of its buffer); `bytes` must then stay untouched for the filter's life (and changes
 * to the filter change `bytes`). Otherwise each layer is copied.
 */
function decodeScalable(
  bytes: Uint8Array,
  options: DecodeOptions | undefined,
  Filter: typeof ScalableBloomFilter,
): ScalableBloomFilter {
  const { header, params, payload } = decodeContainer(bytes, SCALABLE.typeId);
  const shape = checkScalable(header, params);
  const filter = restoreScalable(shape, Filter);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const inPlace = options?.copy === false && LITTLE_ENDIAN && payload.byteOffset % 4 === 0;
  let p = 0;
  for (let i = 0; i < shape.layers; i++) {
    if (payload.length - p < LAYER_HEADER_BYTES) {
      throw new FormatError(`payload ends inside the header of layer ${i}`);
    }
    const layer = checkLayer(view, p, i, shape, payload.length - p - LAYER_HEADER_BYTES);
    p += LAYER_HEADER_BYTES;
    if (inPlace) {
      const words = new Uint32Array(payload.buffer, payload.byteOffset + p, layer.bits / 32);
      filter.restoreLayer(layer.bits, layer.hashes, words, layer.count);
    } else {
      // Copied straight into the layer's own storage (a wasm kernel when large enough).
      bytesToWords(
        payload.subarray(p, p + layer.bits / 8),
        filter.restoreLayer(layer.bits, layer.hashes, undefined, layer.count),
      );
      filter.layer(i).bits.recount();
    }
    p += layer.bits / 8;
  }
  if (p !== payload.length) {
    throw new FormatError(`${payload.length - p} bytes follow the last of ${shape.layers} layers`);
  }
  return filter;
}

/**
 * A streaming sink for a scalable container whose header and parameters were read. Its targets
 * are lazy: a 24-byte buffer for layer i's header, then (once the reader filled it, and its
 * fields passed every check, its bits within the bytes left of L) the new layer's words; after the
 * last layer, a `FormatError` if bytes of L are left over. `finish` recounts each layer's bits.
 */
function scalableSink(
  header: NativeHeader,
  params: DataView,
  Filter: typeof ScalableBloomFilter,
): PayloadSink<ScalableBloomFilter> {
  const shape = checkScalable(header, params);
  const filter = restoreScalable(shape, Filter);
  const filled: Uint8Array[] = [];
  function* targets(): Generator<Uint8Array, void, undefined> {
    let left = header.payloadLength;
    for (let i = 0; i < shape.layers; i++) {
      if (left < LAYER_HEADER_BYTES) {
        throw new FormatError(`payload ends inside the header of layer ${i}`);
      }
      const head = new Uint8Array(LAYER_HEADER_BYTES);
      yield head;
      left -= LAYER_HEADER_BYTES;
      const layer = checkLayer(new DataView(head.buffer), 0, i, shape, left);
      // The stream fills the layer's own storage (a wasm kernel when large enough) directly.
      const words = filter.restoreLayer(layer.bits, layer.hashes, undefined, layer.count);
      const target = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
      filled.push(target);
      yield target;
      left -= layer.bits / 8;
    }
    if (left !== 0) {
      throw new FormatError(`${left} bytes follow the last of ${shape.layers} layers`);
    }
  }
  return {
    targets: targets(),
    finish() {
      for (const [i, target] of filled.entries()) {
        const bits = filter.layer(i).bits;
        if (!LITTLE_ENDIAN) bytesToWords(target.slice(), bits.data);
        bits.recount();
      }
      return filter;
    },
  };
}

/** The scalable filter in the native format, without the streaming sink (what the class uses). */
export const scalableFormatCore = /* @__PURE__ */ nativeFormat<
  ScalableBloomFilter,
  typeof ScalableBloomFilter
>({
  native: SCALABLE,
  writeParams(v, filter) {
    setU64(v, 0, filter.initialCapacity);
    v.setFloat64(8, filter.fpp, true);
    v.setFloat64(16, filter.ratio, true);
    v.setUint8(24, filter.growth);
    v.setUint32(28, filter.layerCount, true);
  },
  payload: scalablePayload,
  decode: decodeScalable,
  sink: null,
});

/** The scalable filter in the native format. */
export const scalableFormat = /* @__PURE__ */ withSink(scalableFormatCore, scalableSink);
