/**
 * Building a filter cascade with CRLite's sizing (Larisch et al., IEEE S&P 2017; rust-cascade's
 * `CascadeBuilder`), so that the result is what Mozilla's own builder would make from the same
 * sets, hash and salt.
 *
 *   r = keys the layer encodes, s = keys it must keep out
 *   layer 1:   log2 p = log2(r / s) − 0.5     (p = r / (√2·s))
 *   layer ≥ 2: log2 p = −1                    (p = 1/2)
 *   k = round(−log2 p),  m = max(256, round(r · (−log2 p) / ln 2))
 *
 * Layer 1 holds the include set R; layer 2 the keys of S that layer 1 lets through; layer 3 the
 * keys of R that layer 2 lets through; and so on until a layer lets nothing through. A lookup of
 * any key of R ∪ S is then exact. Expected size (each later layer holds about 1/√2 as many keys
 * as the one two before it): 1.44·|R|·(log2(|S|/|R|) + 0.5 + (1/√2)/(1 − 1/√2)) bits,
 * about 1.44·|R|·(log2(|S|/|R|) + 2.91), plus the 256-bit minimum per layer.
 *
 * The exclude set is streamed once through layer 1; only its false positives are kept, so a
 * cascade over 10^7 excluded keys needs memory for the included keys and about |R|/√2 others.
 * A key in both sets can never be separated: the build throws a `RangeError` naming it (as
 * rust-cascade's `CascadeError::Collision`).
 */

import {
  type CascadeHash,
  type CascadeLayer,
  ctrBytesPerIndex,
  IndexGenerator,
  layerHas,
  layerInsert,
} from './hashing.js';

/** The most layers an MLBF file may hold (rust-cascade refuses to write 255 or more). */
export const MAX_CASCADE_LAYERS = 254;

/** The layer sizing of CRLite: `top` for layer 1 (r encoded keys against s kept out). */
export function crliteLayerShape(
  r: number,
  s: number,
  top: boolean,
): { bits: number; hashes: number } {
  const log2p = top ? Math.log2(r / s) - 0.5 : -1;
  // rust: (-log2p).round() as u32 saturates negatives to 0; f64::round rounds half away from 0.
  const hashes = Math.max(0, Math.round(-log2p));
  const raw = Math.round((r * -log2p) / Math.LN2);
  const bits = Number.isFinite(raw) && raw >= 256 ? Math.min(raw, 0xffffffff) : 256;
  return { bits, hashes };
}

/** What the builder needs: keys as bytes, the exclude set as a one-pass stream with its size. */
export interface CascadeBuildInput {
  readonly include: readonly Uint8Array[];
  readonly exclude: Iterable<Uint8Array>;
  readonly excludeSize: number;
  readonly hash: CascadeHash;
  readonly salt: Uint8Array;
}

function newLayer(shape: { bits: number; hashes: number }): CascadeLayer {
  return { ...shape, data: new Uint8Array(Math.ceil(shape.bits / 8)) };
}

function hex(key: Uint8Array): string {
  let s = '';
  for (const b of key) s += b.toString(16).padStart(2, '0');
  return s;
}

function latin1(key: Uint8Array): string {
  let s = '';
  for (const b of key) s += String.fromCharCode(b);
  return s;
}

/** Builds the layers; see the module comment. */
export function buildLayers(input: CascadeBuildInput): CascadeLayer[] {
  const { include, hash, salt } = input;
  const layers: CascadeLayer[] = [];
  const offsets: number[] = [];
  const gen = new IndexGenerator(hash, salt, offsets);
  const add = (shape: { bits: number; hashes: number }): CascadeLayer => {
    const layer = newLayer(shape);
    const last = layers[layers.length - 1];
    offsets.push(
      last === undefined
        ? 0
        : offsets[offsets.length - 1]! + last.hashes * ctrBytesPerIndex(last.bits),
    );
    layers.push(layer);
    return layer;
  };

  // Layer 1: R against S (S streamed; keep its false positives).
  const s = input.excludeSize;
  const top = add(
    include.length === 0
      ? { bits: 256, hashes: 1 }
      : s === 0
        ? crliteLayerShape(include.length, 1, false)
        : crliteLayerShape(include.length, s, true),
  );
  for (const key of include) {
    gen.reset(key);
    layerInsert(gen, top, 1);
  }
  let toFilter: Uint8Array[] = [];
  let seen = 0;
  for (const key of input.exclude) {
    seen++;
    gen.reset(key);
    if (layerHas(gen, top, 1)) toFilter.push(key);
  }
  if (seen !== s) {
    throw new RangeError(`excludeSize must be the number of excluded keys (${seen}), got ${s}`);
  }
  let toEncode: Uint8Array[] = include as Uint8Array[];

  // Later layers alternate: encode what slipped through, test the other side against it.
  while (toFilter.length > 0) {
    if (layers.length >= MAX_CASCADE_LAYERS) {
      throw new RangeError(
        `the cascade needs more than ${MAX_CASCADE_LAYERS} layers, the most an MLBF file holds`,
      );
    }
    const encode = toFilter;
    const against = toEncode;
    const depth = layers.length + 1;
    const layer = add(crliteLayerShape(encode.length, against.length, false));
    for (const key of encode) {
      gen.reset(key);
      layerInsert(gen, layer, depth);
    }
    const through: Uint8Array[] = [];
    for (const key of against) {
      gen.reset(key);
      if (layerHas(gen, layer, depth)) through.push(key);
    }
    if (through.length === against.length) checkCollision(encode, through);
    toEncode = encode;
    toFilter = through;
  }
  return layers;
}

/** When a layer separated nothing, a key in both sets is the usual reason: name it. */
function checkCollision(encode: readonly Uint8Array[], through: readonly Uint8Array[]): void {
  const other = new Set(through.map(latin1));
  for (const key of encode) {
    if (other.has(latin1(key))) {
      throw new RangeError(
        `a key is in both include and exclude (hex ${hex(key).slice(0, 64)}): a cascade cannot separate it`,
      );
    }
  }
}
