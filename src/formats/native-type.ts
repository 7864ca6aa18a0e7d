/**
 * One filter type in bloomkit's native format, declared once by its format module
 * (filters/<type>/format.ts): the header's fixed fields ({@link NativeType}: type id, parameter
 * size, hash schemes, the name its messages use) and the type's ways in and out
 * ({@link NativeFormat}: parts for the streaming writer, a whole-buffer decoder, a streaming
 * sink). The header checks every type makes and the writing of the container around a type's
 * parameters are written here once, so each format module holds only what is its own: the
 * parameter fields and the payload.
 *
 * A format module knows its filter class by type only: the decoder and the sink take the class
 * as a parameter, and the codec descriptor (filters/<type>/codec.ts) passes it.
 */

import { FormatError } from '../errors.js';
import { FUNNEL_IDS, type Funnel } from '../hash/keys.js';
import {
  type ContainerParts,
  checkHashScheme,
  checkParamsLength,
  checkTypeId,
  containerParts,
  type DecodeOptions,
  headerFunnel,
  type NativeHeader,
  type PayloadSink,
} from './native.js';

/** The fixed header fields of one type. */
export interface NativeType {
  /** The type id (`FILTER_TYPES`). */
  readonly typeId: number;
  /** The type in messages: `'blocked filter'`. */
  readonly what: string;
  /** Length of the parameters in bytes (P). */
  readonly paramsBytes: number;
  /**
   * The hash scheme ids the type writes, by name. With one, {@link checkTypeHeader} accepts only
   * it; with several (the classic filter's Guava strategies) any of them.
   */
  readonly schemes: Readonly<Record<string, number>>;
}

/** A type's ways in and out of the native format (the class `C` comes as a parameter). */
export interface NativeFormat<F, C> {
  readonly native: NativeType;
  /** The container of `filter` as parts; the payload views the filter's memory where it can. */
  parts(filter: F): ContainerParts;
  /** Decodes a whole container (checksum checked). */
  decode(bytes: Uint8Array, options: DecodeOptions | undefined, Filter: C): F;
  /** A streaming reader's sink after the header and parameters were read; null: read whole. */
  readonly sink: ((header: NativeHeader, params: DataView, Filter: C) => PayloadSink<F>) | null;
}

/**
 * Checks a header's type id, parameter length and hash scheme against `type` and returns its
 * funnel: a `FormatError` naming the field otherwise. Nothing is allocated.
 */
export function checkTypeHeader(header: NativeHeader, type: NativeType): Funnel {
  checkTypeId(header, type.typeId);
  checkParamsLength(header, type.paramsBytes, type.what);
  const schemes = Object.entries(type.schemes);
  if (schemes.length === 1) {
    checkHashScheme(header, schemes[0]![1], type.what, schemes[0]![0]);
  } else if (!schemes.some(([, id]) => id === header.hash)) {
    const known = schemes.map(([name, id]) => `${id} ${name}`).join(', ');
    throw new FormatError(
      `unknown hash scheme id ${header.hash} for a ${type.what} (defined: ${known})`,
    );
  }
  return headerFunnel(header);
}

/** What a format module states of its type; {@link nativeFormat} makes its {@link NativeFormat}. */
export interface FormatSpec<F, C> {
  readonly native: NativeType;
  /** The hash scheme id `filter` is written with; by default the type's only one. */
  readonly hashOf?: (filter: F) => number;
  /** Writes `filter`'s fields into its (zeroed) parameters. */
  writeParams(params: DataView, filter: F): void;
  /** The payload in order: views of the filter's own memory where it can. */
  payload(filter: F): readonly Uint8Array[];
  decode: NativeFormat<F, C>['decode'];
  readonly sink: NativeFormat<F, C>['sink'];
}

/**
 * A type's native format: its parts are the header, the parameters (zeroed, then filled by
 * `writeParams`) and the payload; decoding and the sink are the spec's.
 */
export function nativeFormat<F extends { readonly funnel: Funnel }, C>(
  spec: FormatSpec<F, C>,
): NativeFormat<F, C> {
  const { native, hashOf } = spec;
  const scheme = Object.values(native.schemes)[0]!;
  return {
    native,
    parts(filter) {
      const params = new Uint8Array(native.paramsBytes);
      spec.writeParams(new DataView(params.buffer), filter);
      const hash = hashOf === undefined ? scheme : hashOf(filter);
      const payload = spec.payload(filter);
      return containerParts(native.typeId, hash, FUNNEL_IDS[filter.funnel], params, payload);
    },
    decode: spec.decode,
    sink: spec.sink,
  };
}

/**
 * `format` with the streaming `sink` (what the codec table needs). A filter class uses the format
 * without it (`parts` and `decode`), so that importing the class does not carry the streaming
 * reader: a format module exports both, the one with the sink made by this pure call.
 */
export function withSink<F, C>(
  format: NativeFormat<F, C>,
  sink: NonNullable<NativeFormat<F, C>['sink']>,
): NativeFormat<F, C> {
  return { ...format, sink };
}
