/**
 * Decoding for the filters whose native payload is their bit words, little-endian (the classic,
 * blocked and split-block filters): the whole-buffer decoder (viewing the payload in place with
 * `{ copy: false }` when aligned, else copying) and the streaming sink, written once. Each type
 * supplies its parameter check and how to make the filter (over given storage, or empty).
 */

import { BitArray } from '../bits/bit-array.js';
import {
  type DecodeOptions,
  decodeContainer,
  fillWords,
  type NativeHeader,
  type PayloadSink,
  payloadWordsView,
  wordsSink,
} from './native.js';

/** A type of word-payload filter, as its format module describes it. */
export interface WordFilterType<
  S,
  F extends { readonly bits: BitArray | { readonly data: Uint32Array; recount(): void } },
> {
  readonly typeId: number;
  /** Checks the header and parameters (nothing allocated) and returns the shape. */
  check(header: NativeHeader, params: DataView): S;
  /** Bits of a filter of this shape. */
  bitsOf(shape: S): number;
  /** The filter, empty or over `storage`. */
  make(shape: S, storage?: BitArray): F;
}

/** Decodes a whole container of `type` (checksum checked). */
export function decodeWordFilter<
  S,
  F extends { readonly bits: { readonly data: Uint32Array; recount(): void } },
>(bytes: Uint8Array, options: DecodeOptions | undefined, type: WordFilterType<S, F>): F {
  const { header, params, payload } = decodeContainer(bytes, type.typeId);
  const shape = type.check(header, params);
  const view = payloadWordsView(payload, options);
  if (view !== null) return type.make(shape, new BitArray(type.bitsOf(shape), view));
  const filter = type.make(shape);
  fillWords(filter.bits, payload);
  return filter;
}

/** A streaming sink: the new filter's own words are the bytes to fill. */
export function wordFilterSink<
  S,
  F extends { readonly bits: { readonly data: Uint32Array; recount(): void } },
>(header: NativeHeader, params: DataView, type: WordFilterType<S, F>): PayloadSink<F> {
  const filter = type.make(type.check(header, params));
  return wordsSink(filter.bits, filter);
}
