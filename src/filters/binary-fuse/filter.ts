/**
 * A binary fuse filter (Graf and Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor
 * Filters", ACM JEA 27, 2022): a static set in about 1.125·n fingerprints, built once from all its
 * keys; three memory accesses per lookup.
 *
 * Guarantee: `has` is true for every key the filter was built from (and false for every key when
 * it was built from none). A key outside the set is a
 * false positive when the XOR of its three cells equals its fingerprint: probability 2^−f, so
 * 1/256 with 8-bit fingerprints (about 9.0 bits per key for n ≥ 10^6, against 8 for the lower
 * bound log2(1/ε) and 11.5 for a Bloom filter) and 1/65536 with 16-bit ones (about 18 bits).
 * Smaller sets pay more per key (the size factor grows below 10^6 keys; see construct.ts).
 *
 * Hashing: a key's funnel bytes go through MurmurHash3 x64 128 (seed 0), whose h1 is the key's
 * 64-bit hash; positions and fingerprint come from fmix64(h1 + seed) as in xor_singleheader
 * (see mix.ts). Keys with equal 64-bit hashes count once (they are one key to the filter).
 */

import { checkOptions, mustBe } from '../../errors.js';
import { joinContainer } from '../../formats/native.js';
import { batchScratch, hashIndex, murmur3Batch, releaseBatch } from '../../hash/batch.js';
import { hashKey, views } from '../../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../../hash/keys.js';
import { checkOut, ReadonlyFilterBase } from '../base.js';
import type { KeyOf, PackedKeys, ReadonlyMembershipFilter } from '../filter.js';
import { checkKeys, checkPacked, packKeys } from '../packed.js';
import {
  dedupeHashes,
  FUSE_MAX_KEYS,
  type FuseShape,
  fuseCells,
  fuseShape,
  populate,
} from './construct.js';
import { binaryFuseFormat } from './format.js';
import { mix, mixed } from './mix.js';

/** Options of {@link BinaryFuseFilter.build}. */
export interface BinaryFuseOptions<F extends Funnel = 'string'> {
  /** Fingerprint size: 8 (FPR 1/256, default) or 16 (FPR 1/65536). */
  fingerprintBits?: 8 | 16;
  /** How keys become bytes (default `'string'`, UTF-8). */
  funnel?: F;
}

/** The parts a filter is made of (what `build` and the native decoder pass in). */
export interface BinaryFuseInit {
  readonly funnel: Funnel;
  readonly shape: FuseShape;
  readonly fingerprints: Uint8Array | Uint16Array;
  readonly seedLo: number;
  readonly seedHi: number;
  /** Distinct keys (64-bit hashes) the filter holds. */
  readonly keyCount: number;
}

export class BinaryFuseFilter<K extends Key = string>
  extends ReadonlyFilterBase<K>
  implements ReadonlyMembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'BinaryFuseFilter';
  readonly funnel: Funnel;
  /** 8 or 16. */
  readonly fingerprintBits: 8 | 16;
  readonly segmentLength: number;
  readonly segmentCount: number;
  /** The fingerprint array: (segmentCount + 2) · segmentLength entries. */
  readonly fingerprints: Uint8Array | Uint16Array;
  /** The seed's low and high 32 bits. */
  readonly seedLo: number;
  readonly seedHi: number;
  readonly keyCount: number;
  private readonly shape: FuseShape;
  private readonly mask: number;
  private readonly cells = new Uint32Array(3);

  /** Use {@link BinaryFuseFilter.build} or {@link BinaryFuseFilter.fromBytes}. */
  constructor(init: BinaryFuseInit) {
    super();
    this.funnel = checkFunnel(init.funnel);
    this.shape = init.shape;
    this.segmentLength = init.shape.segmentLength;
    this.segmentCount = init.shape.segmentCount;
    this.fingerprints = init.fingerprints;
    this.fingerprintBits = init.fingerprints instanceof Uint16Array ? 16 : 8;
    this.mask = this.fingerprintBits === 16 ? 0xffff : 0xff;
    this.seedLo = init.seedLo;
    this.seedHi = init.seedHi;
    this.keyCount = init.keyCount;
  }

  /**
   * Builds the filter of `keys` (iterated once; repeats are fine). Throws a `RangeError` for
   * a bad option or more than 2^30 keys.
   */
  static build<F extends Funnel = 'string'>(
    keys: Iterable<KeyOf<F>>,
    options: BinaryFuseOptions<F> = {},
  ): BinaryFuseFilter<KeyOf<F>> {
    checkKeys(keys);
    checkOptions('options', options);
    const bits = options.fingerprintBits ?? 8;
    if (bits !== 8 && bits !== 16) {
      throw mustBe('fingerprintBits', '8 or 16', bits);
    }
    const funnel = checkFunnel(options.funnel ?? 'string');
    // Keys are packed 4096 at a time and each chunk hashed in one WebAssembly call.
    let hashes = new Uint32Array(2 * 4096);
    let n = 0;
    const chunk: Key[] = [];
    const flush = (): void => {
      if (2 * (n + chunk.length) > hashes.length) {
        const grown = new Uint32Array(Math.max(hashes.length * 2, 2 * (n + chunk.length)));
        grown.set(hashes);
        hashes = grown;
      }
      const packed = packKeys(funnel, chunk);
      try {
        for (let start = 0; start < chunk.length; ) {
          const stop = murmur3Batch(packed, start, chunk.length);
          const h = batchScratch!.i32;
          for (let at = hashIndex, j = start; j < stop; j++, at += 4, n++) {
            hashes[2 * n] = h[at]!;
            hashes[2 * n + 1] = h[at + 1]!;
          }
          start = stop;
        }
      } finally {
        releaseBatch();
      }
      chunk.length = 0;
    };
    for (const key of keys as Iterable<Key>) {
      if (n + chunk.length >= FUSE_MAX_KEYS) {
        throw new RangeError('keys must number at most 2^30 for a binary fuse filter, got more');
      }
      chunk.push(key);
      if (chunk.length === 4096) flush();
    }
    flush();
    const distinct = dedupeHashes(hashes, n);
    const shape = fuseShape(distinct);
    const fingerprints =
      bits === 16 ? new Uint16Array(shape.arrayLength) : new Uint8Array(shape.arrayLength);
    const { seedLo, seedHi } = populate(
      hashes,
      distinct,
      shape,
      fingerprints,
      bits === 16 ? 0xffff : 0xff,
    );
    return new BinaryFuseFilter<KeyOf<F>>({
      funnel,
      shape,
      fingerprints,
      seedLo,
      seedHi,
      keyCount: distinct,
    });
  }

  /** Reads the native format written by {@link BinaryFuseFilter.toBytes}. */
  static fromBytes<K extends Key = Key>(bytes: Uint8Array): BinaryFuseFilter<K> {
    return binaryFuseFormat.decode(bytes, undefined, BinaryFuseFilter) as BinaryFuseFilter<K>;
  }

  /** True for every key the filter was built from; else true with probability 2^−f. */
  override has(key: K): boolean {
    hashKey(this.funnel, key);
    return this.test(views.hash[0]! >>> 0, views.hash[1]! >>> 0);
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    hashKey('bytes', bytes);
    return this.test(views.hash[0]! >>> 0, views.hash[1]! >>> 0);
  }

  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const count = checkPacked(batch);
    const result = checkOut(out, count);
    // One WebAssembly call hashes a whole chunk of keys (hash/batch.ts), then each is probed.
    try {
      for (let start = 0; start < count; ) {
        const stop = murmur3Batch(batch, start, count);
        const h = batchScratch!.i32;
        for (let j = 0, at = hashIndex; start + j < stop; j++, at += 4) {
          result[start + j] = this.test(h[at]! >>> 0, h[at + 1]! >>> 0) ? 1 : 0;
        }
        start = stop;
      }
    } finally {
      releaseBatch();
    }
    return result;
  }

  /** The number of distinct keys the filter was built from. */
  override estimatedCount(): number {
    return this.keyCount;
  }

  /** Size of the fingerprint array in bits. */
  get bitSize(): number {
    return this.fingerprints.length * this.fingerprintBits;
  }

  /** Bits per key: array size / distinct keys (Infinity for an empty filter). */
  get bitsPerKey(): number {
    return this.bitSize / this.keyCount;
  }

  /** bloomkit's native binary form (filter type 10, see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(binaryFuseFormat.parts(this as BinaryFuseFilter<never>));
  }

  protected override summary(): string {
    return `${this.keyCount} keys, ${this.fingerprintBits}-bit fingerprints, ${this.segmentCount}+2 segments of ${this.segmentLength}, ${this.bitsPerKey.toFixed(2)} bits/key, funnel=${this.funnel}`;
  }

  private test(keyLo: number, keyHi: number): boolean {
    if (this.keyCount === 0) return false; // all-zero fingerprints would match 1 key in 2^f
    mix(keyLo, keyHi, this.seedLo, this.seedHi);
    const cells = this.cells;
    fuseCells(this.shape, cells);
    const f = this.fingerprints;
    const fp = (mixed.lo ^ mixed.hi) & this.mask;
    return (fp ^ f[cells[0]!]! ^ f[cells[1]!]! ^ f[cells[2]!]!) === 0;
  }
}
