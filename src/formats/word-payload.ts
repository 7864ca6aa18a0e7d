/**
 * The native format of the filters whose payload is their bit words, little-endian (the classic,
 * blocked and split-block filters), written once from each type's description
 * ({@link WordType}: its header fields, how its parameters are written and checked, its size in
 * bits): parts whose payload views the filter's words, the whole-buffer decoder (viewing the
 * payload in place with `{ copy: false }` when aligned, else copying) and the streaming sink
 * (the new filter's own words are the bytes to fill).
 */

import { BitArray } from '../bits/bit-array.js';
import type { Funnel } from '../hash/keys.js';
import { decodeContainer, type NativeHeader } from './native.js';
import {
  checkTypeHeader,
  type NativeFormat,
  type NativeType,
  nativeFormat,
  withSink,
} from './native-type.js';
import { bytesToWords, payloadWordsView, wordsSink, wordsToBytes } from './words.js';

/** A filter whose payload is its words. */
export interface WordFilter {
  readonly funnel: Funnel;
  readonly bits: { readonly data: Uint32Array; recount(): void };
}

/** The class of a word filter of shape `S`, made empty or over given storage. */
export type WordFilterClass<S, F> = new (shape: S, storage?: BitArray) => F;

/** A word-payload type, as its format module describes it. */
export interface WordType<S, F extends WordFilter> {
  readonly native: NativeType;
  /** The hash scheme id `filter` is written with; by default the type's only one. */
  readonly hashOf?: (filter: F) => number;
  /** Writes `filter`'s fields into its (zeroed) parameters. */
  writeParams(params: DataView, filter: F): void;
  /**
   * Checks the parameters, and that the header's payload length L matches them, once the
   * header's fixed fields passed (`funnel` is the one it names); returns the shape. Nothing is
   * allocated.
   */
  check(header: NativeHeader, params: DataView, funnel: Funnel): S;
  /** Bits of a filter of this shape. */
  bitsOf(shape: S): number;
  /** What a bad magic says about other formats (see `decodeContainer`); by default nothing. */
  readonly advise?: (bytes: Uint8Array, totalLength: number) => string;
}

/**
 * The native format of a word-payload type without its streaming sink (`parts` and `decode`: what
 * the filter class uses); {@link wordFormat} adds the sink.
 */
export function wordFormatCore<S, F extends WordFilter>(
  type: WordType<S, F>,
): NativeFormat<F, WordFilterClass<S, F>> {
  const native = type.native;
  return nativeFormat<F, WordFilterClass<S, F>>({
    native,
    hashOf: type.hashOf,
    writeParams: type.writeParams,
    payload: (filter) => [wordsToBytes(filter.bits.data)],
    decode(bytes, options, Filter) {
      const { header, params, payload } = decodeContainer(bytes, native.typeId, type.advise);
      const shape = type.check(header, params, checkTypeHeader(header, native));
      const view = payloadWordsView(payload, options);
      if (view !== null) return new Filter(shape, new BitArray(type.bitsOf(shape), view));
      const filter = new Filter(shape);
      bytesToWords(payload, filter.bits.data);
      filter.bits.recount();
      return filter;
    },
    sink: null,
  });
}

/** The streaming sink of a word-payload type: the new filter's own words are the bytes to fill. */
export function wordSink<S, F extends WordFilter>(
  type: WordType<S, F>,
): NonNullable<NativeFormat<F, WordFilterClass<S, F>>['sink']> {
  return (header, params, Filter) => {
    const filter = new Filter(type.check(header, params, checkTypeHeader(header, type.native)));
    return wordsSink(filter.bits.data, () => {
      filter.bits.recount();
      return filter;
    });
  };
}

/** The native format of a word-payload type, with its streaming sink. */
export function wordFormat<S, F extends WordFilter>(
  type: WordType<S, F>,
): NativeFormat<F, WordFilterClass<S, F>> {
  return withSink(wordFormatCore(type), wordSink(type));
}
