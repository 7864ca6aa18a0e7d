/**
 * An independent MLBF reader for the tests, transcribed from mozilla/rust-cascade's src/lib.rs
 * (version 1.5: `Bloom::read`, `Cascade::from_bytes`, `Cascade::has`, `CascadeIndexGenerator`).
 * It shares no code with src/filters/cascade: SHA-256 is node:crypto's, MurmurHash3 x86 32 is
 * written out again here, and the SHA-256 counter-mode stream is stateful per key as in Rust
 * (one generator per lookup, `next_layer` after each layer that matched) rather than computed
 * from layer offsets. Errors are plain `Error`s carrying rust-cascade's messages.
 */

import { createHash } from 'node:crypto';

type HashAlg = 1 | 2 | 3;

interface RustBloom {
  nHashFuncs: number;
  size: number;
  data: Uint8Array;
}

export interface RustCascade {
  filters: RustBloom[];
  salt: Uint8Array;
  hashAlgorithm: HashAlg;
  inverted: boolean;
}

class Reader {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}
  left(): number {
    return this.bytes.length - this.pos;
  }
  u8(what: string): number {
    if (this.left() < 1) throw new Error(`Cannot parse cascade: ${what}`);
    return this.bytes[this.pos++]!;
  }
  u16(what: string): number {
    if (this.left() < 2) throw new Error(`Cannot parse cascade: ${what}`);
    const v = this.bytes[this.pos]! | (this.bytes[this.pos + 1]! << 8);
    this.pos += 2;
    return v;
  }
  u32(what: string): number {
    if (this.left() < 4) throw new Error(`Cannot parse cascade: ${what}`);
    const b = this.bytes;
    const p = this.pos;
    this.pos += 4;
    return (b[p]! + b[p + 1]! * 256 + b[p + 2]! * 65536 + b[p + 3]! * 16777216) >>> 0;
  }
  exact(n: number, what: string): Uint8Array {
    if (this.left() < n) throw new Error(`Cannot parse cascade: ${what}`);
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** `Bloom::read`: null at a clean end of input. */
function readBloom(r: Reader): [RustBloom, number, HashAlg] | null {
  if (r.left() === 0) return null;
  const alg = r.u8('read error');
  if (alg !== 1 && alg !== 2 && alg !== 3) throw new Error('Unknown hash function.');
  const size = r.u32('truncated at layer size');
  const nHashFuncs = r.u32('truncated at layer hash count');
  const layer = r.u8('truncated at layer number');
  const byteCount = Math.floor((size + 7) / 8);
  const data = r.exact(byteCount, 'truncated at layer data');
  return [{ nHashFuncs, size, data }, layer, alg];
}

/** `Cascade::from_bytes`: null for empty input. */
export function rustCascadeFromBytes(bytes: Uint8Array): RustCascade | null {
  if (bytes.length === 0) return null;
  const r = new Reader(bytes);
  const version = r.u16('truncated at version');
  const filters: RustBloom[] = [];
  let salt: Uint8Array = new Uint8Array(0);
  let topHashAlg: HashAlg | null = null;
  let inverted = false;
  if (version > 2) throw new Error('Cannot parse cascade: unknown version');
  if (version === 2) {
    const invertedVal = r.u8('truncated at inverted');
    if (invertedVal > 1) throw new Error('Cannot parse cascade: invalid value for inverted');
    inverted = invertedVal !== 0;
    const saltLen = r.u8('truncated at salt length');
    if (saltLen > 0) salt = r.exact(saltLen, 'truncated at salt');
  }
  for (;;) {
    const next = readBloom(r);
    if (next === null) break;
    const [filter, layerNumber, layerHashAlg] = next;
    filters.push(filter);
    if (layerNumber !== filters.length) {
      throw new Error('Cannot parse cascade: irregular layer numbering');
    }
    if (topHashAlg === null) topHashAlg = layerHashAlg;
    if (topHashAlg !== layerHashAlg)
      throw new Error('Cannot parse cascade: Inconsistent hash algorithms');
  }
  if (filters.length === 0) throw new Error('Cannot parse cascade: missing filters');
  return { filters, salt, hashAlgorithm: topHashAlg!, inverted };
}

function mul32(a: number, b: number): number {
  // Exact low 32 bits of a 32x32 product, by 16-bit halves (no Math.imul, unlike bloomkit).
  const lo = (a & 0xffff) * b;
  const hi = (((a >>> 16) * b) & 0xffff) * 65536;
  return (lo + hi) % 4294967296;
}

function rotl32(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}

/** MurmurHash3 x86 32, as the `murmurhash3` crate's `murmurhash3_x86_32`. */
export function murmurhash3X86_32(key: Uint8Array, seed: number): number {
  let h1 = seed >>> 0;
  const nblocks = Math.floor(key.length / 4);
  for (let i = 0; i < nblocks; i++) {
    const j = i * 4;
    let k1 = (key[j]! | (key[j + 1]! << 8) | (key[j + 2]! << 16) | (key[j + 3]! << 24)) >>> 0;
    k1 = mul32(k1, 0xcc9e2d51);
    k1 = rotl32(k1, 15);
    k1 = mul32(k1, 0x1b873593);
    h1 = (h1 ^ k1) >>> 0;
    h1 = rotl32(h1, 13);
    h1 = (mul32(h1, 5) + 0xe6546b64) % 4294967296;
  }
  const tail = key.subarray(nblocks * 4);
  if (tail.length > 0) {
    let k1 = 0;
    if (tail.length === 3) k1 ^= tail[2]! << 16;
    if (tail.length >= 2) k1 ^= tail[1]! << 8;
    k1 ^= tail[0]!;
    k1 = mul32(k1 >>> 0, 0xcc9e2d51);
    k1 = rotl32(k1, 15);
    k1 = mul32(k1, 0x1b873593);
    h1 = (h1 ^ k1) >>> 0;
  }
  h1 = (h1 ^ key.length) >>> 0;
  h1 = (h1 ^ (h1 >>> 16)) >>> 0;
  h1 = mul32(h1, 0x85ebca6b);
  h1 = (h1 ^ (h1 >>> 13)) >>> 0;
  h1 = mul32(h1, 0xc2b2ae35);
  return (h1 ^ (h1 >>> 16)) >>> 0;
}

function u32le(x: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(x >>> 0);
  return b;
}

function nextPowerOfTwoTrailingZeros(range: number): number {
  // u32::next_power_of_two().trailing_zeros(); wraps to 0 (tz = 32) above 2^31, as release Rust.
  let p = 1;
  while (p < range) p *= 2;
  if (p > 2 ** 31) return 32;
  return Math.log2(p);
}

/** `CascadeIndexGenerator`: state carried across layers for one key. */
class IndexGen {
  counter = 0;
  depth = 1;
  state = new Uint8Array(32);
  stateAvailable = 0;
  constructor(
    readonly alg: HashAlg,
    readonly key: Uint8Array,
  ) {}

  nextLayer(): void {
    if (this.alg === 3) return;
    this.counter = 0;
    this.depth += 1;
  }

  nextIndex(salt: Uint8Array, range: number): number {
    let index: number;
    if (this.alg === 1) {
      const seed = ((this.counter << 16) + this.depth) >>> 0;
      this.counter += 1;
      index = murmurhash3X86_32(this.key, seed);
    } else if (this.alg === 2) {
      const h = createHash('sha256');
      h.update(salt);
      h.update(u32le(this.counter));
      h.update(Buffer.from([this.depth & 0xff]));
      h.update(this.key);
      this.counter += 1;
      index = h.digest().readUInt32LE(0);
    } else {
      const bytesNeeded = Math.floor((nextPowerOfTwoTrailingZeros(range) + 7) / 8);
      const arr = [0, 0, 0, 0];
      for (let b = 0; b < bytesNeeded; b++) {
        if (this.stateAvailable === 0) {
          const h = createHash('sha256');
          h.update(u32le(this.counter));
          h.update(salt);
          h.update(this.key);
          this.state = new Uint8Array(h.digest());
          this.stateAvailable = 32;
          this.counter += 1;
        }
        arr[b] = this.state[32 - this.stateAvailable]!;
        this.stateAvailable -= 1;
      }
      index = (arr[0]! + arr[1]! * 256 + arr[2]! * 65536 + arr[3]! * 16777216) >>> 0;
    }
    return index % range;
  }
}

function bloomHas(f: RustBloom, gen: IndexGen, salt: Uint8Array): boolean {
  for (let i = 0; i < f.nHashFuncs; i++) {
    const bit = gen.nextIndex(salt, f.size);
    if (!(bit < f.size)) throw new Error('assertion failed: bit_index < self.size');
    if ((f.data[Math.floor(bit / 8)]! & (1 << (bit % 8))) === 0) return false;
  }
  return true;
}

/** `Cascade::has`. */
export function rustCascadeHas(c: RustCascade, entry: Uint8Array): boolean {
  const gen = new IndexGen(c.hashAlgorithm, entry);
  let rv = false;
  for (const filter of c.filters) {
    if (bloomHas(filter, gen, c.salt)) {
      rv = !rv;
      gen.nextLayer();
    } else {
      break;
    }
  }
  return c.inverted ? !rv : rv;
}
