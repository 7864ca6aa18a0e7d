/**
 * How a key becomes bit positions in each layer of a Mozilla filter cascade (MLBF), exactly as
 * rust-cascade 1.5 (`CascadeIndexGenerator`) and Python's `filtercascade` compute them. Layer `d`
 * counts from 1; `i` counts the layer's hash functions from 0; m is the layer's size in bits.
 *
 * | id | name          | i-th position of `key` in layer d                                         |
 * |----|---------------|----------------------------------------------------------------------------|
 * | 1  | `murmur3`     | murmur3_x86_32(key, seed = (i << 16) + d) mod m  (a salt is ignored)      |
 * | 2  | `sha256l32`   | u32le(SHA-256(salt ‖ u32le(i) ‖ u8(d) ‖ key)[0..4]) mod m                   |
 * | 3  | `sha256ctr`   | the next b bytes, little-endian, of the stream SHA-256(u32le(c) ‖ salt ‖ key) |
 * |    |               | for c = 0, 1, 2, ..., mod m, with b = ⌈log2(next power of two ≥ m) / 8⌉    |
 *
 * The `sha256ctr` stream is one per key across all layers (never reset): a lookup that reaches
 * layer d has consumed exactly Σ_{j<d} k_j·b_j bytes, so the offset of layer d is a property of
 * the cascade's shape, not of the key ({@link streamOffsets}), and no per-key state is kept.
 */

import { sha256 } from '@noble/hashes/sha2.js';
import { murmur3x86_32Range } from '../../hash/murmur3-x86-32.js';

/** The MLBF hash algorithm ids (u8 in each layer header). */
export const MLBF_HASHES = { murmur3: 1, sha256l32: 2, sha256ctr: 3 } as const;

/** An MLBF hash algorithm by name. */
export type CascadeHash = keyof typeof MLBF_HASHES;

/** The name of MLBF hash algorithm `id`, or undefined for an unknown id. */
export function cascadeHashFromId(id: number): CascadeHash | undefined {
  return id === 1 ? 'murmur3' : id === 2 ? 'sha256l32' : id === 3 ? 'sha256ctr' : undefined;
}

/** One Bloom filter layer of a cascade: m bits, k hash functions, bit i = byte i/8, 1 << (i%8). */
export interface CascadeLayer {
  /** Size in bits, 1..2^32 − 1. */
  readonly bits: number;
  /** Number of hash functions. */
  readonly hashes: number;
  /** ⌈bits / 8⌉ bytes. */
  readonly data: Uint8Array;
}

/** Bytes each `sha256ctr` index takes for a layer of `m` bits (rust: next_power_of_two, wrapped). */
export function ctrBytesPerIndex(m: number): number {
  const bits = m <= 1 ? 0 : 32 - Math.clz32(m - 1);
  return (bits + 7) >>> 3;
}

/** For `sha256ctr`: the stream offset at which each layer's indexes start. */
export function streamOffsets(layers: readonly { bits: number; hashes: number }[]): number[] {
  const out: number[] = [];
  let offset = 0;
  for (const layer of layers) {
    out.push(offset);
    offset += layer.hashes * ctrBytesPerIndex(layer.bits);
  }
  return out;
}

/**
 * Computes the positions of one key, layer by layer. One instance serves many keys: `reset`
 * with the key's bytes, then `index(layer, i, m)`; it caches the SHA-256 stream blocks it made.
 */
export class IndexGenerator {
  private key: Uint8Array = new Uint8Array(0);
  private blocks: Uint8Array[] = [];
  private readonly ctrPrefix: Uint8Array;
  private l32: Uint8Array;

  constructor(
    readonly hash: CascadeHash,
    private readonly salt: Uint8Array,
    private readonly offsets: readonly number[],
  ) {
    this.ctrPrefix = new Uint8Array(4 + salt.length);
    this.ctrPrefix.set(salt, 4);
    this.l32 = new Uint8Array(salt.length + 5 + 64);
    this.l32.set(salt, 0);
  }

  /** Starts a new key (the bytes are used in place until the next `reset`). */
  reset(key: Uint8Array): void {
    this.key = key;
    if (this.blocks.length > 0) this.blocks = [];
  }

  /** The i-th position (0-based) of the current key in layer `layer` (1-based) of `m` bits. */
  index(layer: number, i: number, m: number): number {
    switch (this.hash) {
      case 'murmur3':
        return murmur3x86_32Range(this.key, 0, this.key.length, ((i << 16) + layer) >>> 0) % m;
      case 'sha256l32':
        return this.sha256l32(layer, i) % m;
      default:
        return this.sha256ctr(layer, i, m);
    }
  }

  private sha256l32(layer: number, i: number): number {
    const s = this.salt.length;
    const need = s + 5 + this.key.length;
    let buf = this.l32;
    if (buf.length < need) {
      buf = new Uint8Array(need * 2);
      buf.set(this.salt, 0);
      this.l32 = buf;
    }
    buf[s] = i & 0xff;
    buf[s + 1] = (i >>> 8) & 0xff;
    buf[s + 2] = (i >>> 16) & 0xff;
    buf[s + 3] = i >>> 24;
    buf[s + 4] = layer & 0xff;
    buf.set(this.key, s + 5);
    const d = sha256(buf.subarray(0, need));
    return (d[0]! | (d[1]! << 8) | (d[2]! << 16) | (d[3]! << 24)) >>> 0;
  }

  private sha256ctr(layer: number, i: number, m: number): number {
    const b = ctrBytesPerIndex(m);
    let pos = this.offsets[layer - 1]! + i * b;
    let value = 0;
    for (let j = 0; j < b; j++, pos++) {
      const block = this.block(pos >>> 5);
      value += block[pos & 31]! * 2 ** (8 * j);
    }
    return value % m;
  }

  /** Stream block c = SHA-256(u32le(c) ‖ salt ‖ key), made on first use. */
  private block(c: number): Uint8Array {
    let block = this.blocks[c];
    if (block === undefined) {
      for (let n = this.blocks.length; n <= c; n++) {
        const prefix = this.ctrPrefix;
        prefix[0] = n & 0xff;
        prefix[1] = (n >>> 8) & 0xff;
        prefix[2] = (n >>> 16) & 0xff;
        prefix[3] = n >>> 24;
        this.blocks.push(sha256.create().update(prefix).update(this.key).digest());
      }
      block = this.blocks[c]!;
    }
    return block;
  }
}

/** True when every one of the layer's k positions of the generator's key is set. */
export function layerHas(gen: IndexGenerator, layer: CascadeLayer, depth: number): boolean {
  const { bits: m, hashes: k, data } = layer;
  for (let i = 0; i < k; i++) {
    const bit = gen.index(depth, i, m);
    if ((data[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

/** Sets the layer's k positions of the generator's key. */
export function layerInsert(gen: IndexGenerator, layer: CascadeLayer, depth: number): void {
  const { bits: m, hashes: k, data } = layer;
  for (let i = 0; i < k; i++) {
    const bit = gen.index(depth, i, m);
    data[bit >>> 3]! |= 1 << (bit & 7);
  }
}
