/**
 * Mozilla's MLBF files (filter cascades, as Firefox's CRLite and add-on blocklist ship them), read
 * and written bit for bit as rust-cascade 1.5 (`Cascade::from_bytes`, `to_bytes`) and Python's
 * `filtercascade` do. All integers little-endian. Byte by byte:
 *
 * | version 2 (what `encodeMlbf` writes by default)   | version 1 (and 0, read as 1)         |
 * |---------------------------------------------------|--------------------------------------|
 * | u16 version = 2                                    | u16 version = 1                      |
 * | u8 inverted (0 or 1)                               | (no inverted flag, no salt)          |
 * | u8 salt length L, then L salt bytes                |                                      |
 * | layers, until the bytes end                        | layers, until the bytes end          |
 *
 * Each layer: u8 hash algorithm (1 murmur3, 2 sha256l32, 3 sha256ctr; see hashing.ts) | u32 size
 * in bits m | u32 hash count k | u8 layer number (1-based) | ⌈m/8⌉ bytes of bits (bit i is byte
 * i/8, mask 1 << (i%8)).
 *
 * What the reader rejects, each with a `FormatError` naming the field and value: every rule of
 * rust-cascade's reader (a truncated version, inverted flag, salt length, salt, layer size, hash
 * count, layer number or layer data; a version above 2; an inverted flag above 1; an unknown hash
 * algorithm; a layer number that is not the layer's position; two hash algorithms in one file; a
 * file with a header but no layer) and two more that keep a lookup sane where rust-cascade would
 * panic or spin: a layer of 0 bits with hash functions (rust-cascade divides by zero on lookup)
 * and more than {@link MLBF_MAX_HASHES} hash functions in one layer. An empty input is "no
 * cascade" (rust-cascade's `Ok(None)`): `decodeMlbf` returns null.
 */

import { FormatError } from '../../errors.js';
import { type CascadeHash, type CascadeLayer, cascadeHashFromId, MLBF_HASHES } from './hashing.js';

/** The most hash functions a layer may have (a forged count would make every lookup spin). */
export const MLBF_MAX_HASHES = 1024;

/** A cascade as an MLBF file holds it. */
export interface MlbfCascade {
  readonly hash: CascadeHash;
  readonly salt: Uint8Array;
  readonly inverted: boolean;
  readonly layers: readonly CascadeLayer[];
}

const LAYER_HEADER = 10;

/** Parses an MLBF file (views into `bytes`, nothing copied); null for an empty input. */
export function decodeMlbf(bytes: Uint8Array, source = 'MLBF'): MlbfCascade | null {
  if (bytes.length === 0) return null;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const truncated = (field: string, at: number, need: number): FormatError =>
    new FormatError(
      `${source}: truncated at ${field} (offset ${at}, needs ${need} bytes, ${bytes.length - at} left)`,
    );
  if (bytes.length < 2) throw truncated('version', 0, 2);
  const version = v.getUint16(0, true);
  if (version > 2) {
    throw new FormatError(`${source}: unknown version ${version} (versions 1 and 2 are defined)`);
  }
  let p = 2;
  let inverted = false;
  let salt: Uint8Array = new Uint8Array(0);
  if (version === 2) {
    if (p + 1 > bytes.length) throw truncated('inverted flag', p, 1);
    const flag = bytes[p]!;
    if (flag > 1) throw new FormatError(`${source}: inverted flag is ${flag}, must be 0 or 1`);
    inverted = flag === 1;
    p++;
    if (p + 1 > bytes.length) throw truncated('salt length', p, 1);
    const saltLength = bytes[p]!;
    p++;
    if (p + saltLength > bytes.length) throw truncated('salt', p, saltLength);
    salt = bytes.subarray(p, p + saltLength);
    p += saltLength;
  }
  const layers: CascadeLayer[] = [];
  let hash: CascadeHash | undefined;
  while (p < bytes.length) {
    const at = p;
    const id = bytes[p]!;
    const layerHash = cascadeHashFromId(id);
    if (layerHash === undefined) {
      throw new FormatError(
        `${source}: layer ${layers.length + 1} at offset ${at}: unknown hash algorithm ${id} (1 murmur3, 2 sha256l32, 3 sha256ctr)`,
      );
    }
    if (p + 5 > bytes.length) throw truncated('layer size', p + 1, 4);
    const bits = v.getUint32(p + 1, true);
    if (p + 9 > bytes.length) throw truncated('layer hash count', p + 5, 4);
    const hashes = v.getUint32(p + 5, true);
    if (p + LAYER_HEADER > bytes.length) throw truncated('layer number', p + 9, 1);
    const number = bytes[p + 9]!;
    const dataBytes = Math.ceil(bits / 8);
    p += LAYER_HEADER;
    if (p + dataBytes > bytes.length) throw truncated('layer data', p, dataBytes);
    if (number !== layers.length + 1) {
      throw new FormatError(
        `${source}: irregular layer numbering: layer number ${number} at position ${layers.length + 1} (offset ${at})`,
      );
    }
    if (hash !== undefined && layerHash !== hash) {
      throw new FormatError(
        `${source}: inconsistent hash algorithms: layer ${number} uses ${layerHash} (${id}), layer 1 uses ${hash} (${MLBF_HASHES[hash]})`,
      );
    }
    hash = layerHash;
    if (bits === 0 && hashes > 0) {
      throw new FormatError(`${source}: layer ${number} has 0 bits but ${hashes} hash functions`);
    }
    if (hashes > MLBF_MAX_HASHES) {
      throw new FormatError(
        `${source}: layer ${number} has ${hashes} hash functions, more than the ${MLBF_MAX_HASHES} bloomkit accepts`,
      );
    }
    layers.push({ bits, hashes, data: bytes.subarray(p, p + dataBytes) });
    p += dataBytes;
  }
  if (hash === undefined)
    throw new FormatError(`${source}: missing filters (no layer after the header)`);
  return { hash, salt, inverted, layers };
}

/** Options of `encodeMlbf`. */
export interface MlbfWriteOptions {
  /** 2 (default) or 1; version 1 has no salt and no inverted flag. */
  version?: 1 | 2;
}

/**
 * The MLBF bytes of `cascade`. Throws a `RangeError` for what the format cannot hold: a salt of
 * 256 bytes or more, 255 layers or more (rust-cascade's limits), or, in version 1, a salt or the
 * inverted flag.
 */
export function encodeMlbf(cascade: MlbfCascade, options: MlbfWriteOptions = {}): Uint8Array {
  const version = options.version ?? 2;
  if (version !== 1 && version !== 2) {
    throw new RangeError(`version must be 1 or 2, got ${String(version)}`);
  }
  const { salt, inverted, layers } = cascade;
  if (salt.length >= 256) throw new RangeError(`salt must be under 256 bytes, got ${salt.length}`);
  if (layers.length >= 255 || layers.length === 0) {
    throw new RangeError(`an MLBF file holds 1 to 254 layers, the cascade has ${layers.length}`);
  }
  if (version === 1 && (salt.length > 0 || inverted)) {
    throw new RangeError(
      `MLBF version 1 has no ${salt.length > 0 ? 'salt' : 'inverted flag'}; write version 2`,
    );
  }
  let size = version === 2 ? 4 + salt.length : 2;
  for (const layer of layers) size += LAYER_HEADER + layer.data.length;
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  v.setUint16(0, version, true);
  let p = 2;
  if (version === 2) {
    out[p++] = inverted ? 1 : 0;
    out[p++] = salt.length;
    out.set(salt, p);
    p += salt.length;
  }
  const id = MLBF_HASHES[cascade.hash];
  layers.forEach((layer, i) => {
    out[p] = id;
    v.setUint32(p + 1, layer.bits, true);
    v.setUint32(p + 5, layer.hashes, true);
    out[p + 9] = i + 1;
    out.set(layer.data, p + LAYER_HEADER);
    p += LAYER_HEADER + layer.data.length;
  });
  return out;
}
