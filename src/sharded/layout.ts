/**
 * The sharded layout shared by the Redis filters and their in-memory twin (`ShardedBloomFilter`):
 * how big the shards are and where a key's k positions fall. Pure code, no Redis.
 *
 * Why shards: Redis' own docs advise splitting a large bitmap into keys of M bits (a 512 MB string
 * blocks the server for ~300 ms when first allocated, and a single key cannot be spread over a
 * cluster). For a Bloom filter the split must not cost a round trip per probe, so the key's shard
 * is picked from its hash first and all k positions are taken inside that one shard: one
 * `BITFIELD` on one key (one cluster slot) per operation. This is a blocked Bloom filter (Putze,
 * Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", WEA 2007) with blocks
 * of up to 2^23 bits instead of a cache line.
 *
 * Sizing, for `capacity` n, `fpp` p and a shard limit of L cells (bits, or counters for the counting
 * filter; L a multiple of 64 in [64, 2^32]):
 *
 *     m = Guava's bit size for (n, p)  (⌊−n·ln p / ln²2⌋ rounded up to a multiple of 64)
 *     k = Guava's hash count for (n, p)
 *     S = ⌈m / L⌉ shards of b = 64·⌈m / (64·S)⌉ cells each (b ≤ L; S·b − m < 64·S)
 *
 * Positions, from MurmurHash3 x64 128 (seed 0) of the key's funnel bytes, h = (h1, h2):
 *
 *     shard  = ⌊(h1 >>> 32) · S / 2^32⌋                         Lemire's multiply-shift, exact
 *     offset_i = ((h1 + i·h2) mod 2^63) mod b,  i = 0..k−1       Guava's MURMUR128_MITZ_64 over b
 *
 * With one shard (S = 1, so b = m) the offsets are exactly Guava's positions for the same (n, p):
 * a one-shard filter is a Guava filter with its bytes in Redis' bit order. With a power-of-two b
 * (the default shards are 2^23 bits), the offsets use only the low bits of h1 and h2, disjoint from
 * the 32 bits that picked the shard; for any other b, the first offset mixes in h1's high bits, but
 * within a shard those bits still range over 2^63/S consecutive values, so it stays uniform to
 * within b·S/2^63.
 *
 * The price of blocking: shard loads vary (binomially) around n/S, and a key's rate is that of its
 * own shard. For large shards the loss is tiny: at 10 bits per key an 8 KiB block gives 0.820%
 * against 0.819% unblocked (REFERENCE.md §4); test/redis-sharded.test.ts measures it.
 */

import { checkPositiveInteger, show } from '../errors.js';
import { mitz64Chunks } from '../filters/batch-chunks.js';
import type { PackedKeys } from '../filters/filter.js';
import { hashIndex } from '../hash/batch.js';
import { hashKey, views } from '../hash/hasher.js';
import type { Funnel, Key } from '../hash/keys.js';
import { packAll, packStringsInto } from '../hash/pack.js';
import { Modulus, mitz64Indexes } from '../hash/strategies.js';
import { bloomSize, MAX_BITS } from '../math.js';

/** The most cells one shard may have: a Redis string holds at most 2^32 bits (512 MiB). */
export const MAX_SHARD_BITS = 2 ** 32;

/** Default shard size of the bloom and scalable filters: 2^23 bits = 1 MiB per Redis string. */
export const DEFAULT_SHARD_BITS = 2 ** 23;

/** The shape of a sharded filter. */
export interface ShardLayout {
  /** Number of shards (S). */
  readonly shards: number;
  /** Cells per shard (b): bits for a bloom filter, counters for a counting filter. */
  readonly shardBits: number;
  /** Positions per key (k), all in the key's shard. */
  readonly hashes: number;
}

/** Throws a `RangeError` unless `value` is a multiple of 64 in [64, 2^32] (a shard size limit). */
export function checkShardBits(name: string, value: unknown, max = MAX_SHARD_BITS): number {
  checkPositiveInteger(name, value, max);
  if ((value as number) % 64 !== 0) {
    throw new RangeError(`${name} must be a multiple of 64, got ${show(value)}`);
  }
  return value as number;
}

/**
 * Sizes a sharded filter for `capacity` keys at `fpp` with shards of at most `maxShardBits` cells
 * (see the module comment). Throws `RangeError` for bad input.
 */
export function shardLayout(capacity: number, fpp: number, maxShardBits: number): ShardLayout {
  const size = bloomSize(capacity, fpp);
  checkShardBits('shardBits', maxShardBits);
  if (size.hashes > 255) {
    throw new RangeError(
      `fpp ${show(fpp)} needs ${size.hashes} hashes per key, at most 255 are supported (fpp must be at least about 1e-76)`,
    );
  }
  const shards = Math.ceil(size.bits / maxShardBits);
  const shardBits = 64 * Math.ceil(size.bits / (64 * shards));
  return checkLayout({ shards, shardBits, hashes: size.hashes });
}

/**
 * Throws a `RangeError` unless `layout` is a shape bloomkit can use: S ≥ 1, b a multiple of 64 up
 * to 2^32, 1 ≤ k ≤ 255 and S·b ≤ 2^36.
 */
export function checkLayout(layout: ShardLayout): ShardLayout {
  checkPositiveInteger('shards', layout.shards);
  checkShardBits('shard bits', layout.shardBits);
  checkPositiveInteger('hashes', layout.hashes, 255);
  if (layout.shards * layout.shardBits > MAX_BITS) {
    throw new RangeError(
      `${layout.shards} shards of ${layout.shardBits} bits exceed the maximum of ${MAX_BITS} bits`,
    );
  }
  return layout;
}

/** ⌊x · n / 2^32⌋ for a 32-bit `x` and a positive integer n < 2^37, exactly. */
export function multiplyShift(x: number, n: number): number {
  const u = x >>> 0;
  return Math.floor(((u >>> 16) * n + Math.floor(((u & 0xffff) * n) / 65536)) / 65536);
}

/**
 * Finds keys' positions in a layout. `locate` hashes a key, writes its k offsets into `offsets`
 * (reused: read them before the next call) and returns its shard. Nothing is allocated per key.
 */
export class Locator {
  readonly offsets: Float64Array;
  /** b as a {@link Modulus}, for the MITZ_64 walks. */
  readonly mod: Modulus;

  constructor(
    readonly layout: ShardLayout,
    readonly funnel: Funnel,
  ) {
    this.mod = new Modulus(layout.shardBits);
    this.offsets = new Float64Array(layout.hashes);
  }

  /** Hashes `key` (a `TypeError`/`RangeError` for a key of the wrong kind) and places it. */
  locate(key: Key): number {
    hashKey(this.funnel, key);
    return this.place(views.hash);
  }

  /** Places a key given as its funnel bytes (every funnel hashes exactly its key's bytes). */
  locateBytes(bytes: Uint8Array): number {
    hashKey('bytes', bytes);
    return this.place(views.hash);
  }

  /** Places a key whose hash is `h` = [h1 lo, h1 hi, h2 lo, h2 hi] (layers share one hash). */
  place(h: Int32Array): number {
    mitz64Indexes(h, this.layout.hashes, this.mod, this.offsets);
    return multiplyShift(h[1]!, this.layout.shards);
  }

  /** Reused packing buffers of {@link pack} (a window is packed and hashed in one call). */
  private packed = new Uint8Array(0);
  private packedOffsets = new Uint32Array(0);

  /**
   * `keys` packed with the funnel, as `packAll` packs them. A window of strings goes into buffers
   * this locator keeps (grown to the worst case, 3 bytes per UTF-16 unit, and reused: what it
   * returns is valid until the next call), with one `packStringsInto` call and no size guess;
   * anything else (another funnel, a key that is not a string, a window over 1 MiB of text) goes
   * through `packAll`, which also throws the key's error.
   */
  pack(keys: readonly Key[]): PackedKeys {
    const n = keys.length;
    if (this.funnel === 'string') {
      let chars = 0;
      for (let i = 0; i < n; i++) {
        const key = keys[i];
        if (typeof key !== 'string') return packAll(this.funnel, keys);
        chars += key.length;
      }
      const need = 3 * chars + 64;
      if (need <= REUSED_PACK_BYTES) {
        if (this.packed.length < need) this.packed = new Uint8Array(Math.max(need, 4096));
        if (this.packedOffsets.length < n + 1) this.packedOffsets = new Uint32Array(n + 1);
        const offsets = this.packedOffsets.subarray(0, n + 1);
        if (packStringsInto(keys, 0, n, this.packed, offsets) === n) {
          return { bytes: this.packed, offsets };
        }
      }
    }
    return packAll(this.funnel, keys);
  }
}

/** The most bytes {@link Locator.pack} keeps for reuse (3 MiB: 1 MiB of text). */
const REUSED_PACK_BYTES = 3 << 20;

/** The positions of many keys, computed (and every key checked) before any command is sent. */
export interface PlacedKeys {
  readonly count: number;
  /** Shard of key i. */
  readonly shards: Uint32Array;
  /** Offsets of key i at [i·k, (i+1)·k). */
  readonly offsets: Float64Array;
}

/** Below this many keys a window is placed key by key (a batch's setup costs more). */
const BATCH_MIN = 8;

/**
 * Places every key of `keys` (throws on the first bad key, before anything is sent). Many keys
 * are packed into one buffer and hashed a chunk at a time, MurmurHash3 and the MITZ_64 walks in
 * one WebAssembly call per chunk (hash/batch.ts, as the in-memory filters' batches): the same
 * shards and offsets as `locate` key by key.
 */
export function placeAll(locator: Locator, keys: readonly Key[]): PlacedKeys {
  const k = locator.layout.hashes;
  const n = keys.length;
  const shards = new Uint32Array(n);
  const offsets = new Float64Array(n * k);
  if (n < BATCH_MIN) {
    const out = locator.offsets;
    for (let i = 0; i < n; i++) {
      shards[i] = locator.locate(keys[i]!);
      offsets.set(out, i * k);
    }
    return { count: n, shards, offsets };
  }
  const S = locator.layout.shards;
  mitz64Chunks(locator.pack(keys), n, k, locator.mod, (p, w, start, stop) => {
    // Probe i of key j is bit (mask i) of word (word i): its index is 32·word + log2(mask).
    for (let j = start, h = hashIndex + 1, o = start * k; j < stop; j++, h += 4, w += 2 * k) {
      shards[j] = multiplyShift(p[h]!, S);
      for (let i = 0; i < k; i++, o++) {
        offsets[o] = (p[w + i]! >>> 0) * 32 + 31 - Math.clz32(p[w + k + i]!);
      }
    }
    return 0;
  });
  return { count: n, shards, offsets };
}
