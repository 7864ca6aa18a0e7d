/**
 * The scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison, "Scalable Bloom Filters",
 * Information Processing Letters 101(6), 2007): a chain of classic Bloom filters (layers) that
 * grows when the number of keys is not known in advance.
 *
 * Layer i holds c_i = c0·s^i keys at rate P_i = P0·r^i, with P0 = P·(1 − r): c0 is the initial
 * capacity, s the growth factor (2 or 4), r the tightening ratio in (0, 1) (default 0.9; the paper
 * advises 0.8 to 0.9) and P the target rate. `add` of a key that `has` already answers true for
 * adds nothing and returns false; otherwise the key goes into the newest layer, which counts its
 * keys, and a new layer is made when the newest one holds c_i keys. `has` checks the layers
 * newest first. Each key is hashed once (MurmurHash3 x64 128); every layer derives its own
 * positions from that hash with Guava's MURMUR128_MITZ_64 over its own size, so a layer is a
 * plain {@link BloomFilter}.
 *
 * The bound, stated exactly: a key never added is a false positive if any layer says yes, so the
 * rate is 1 − Π(1 − f_i) ≤ Σ f_i, where f_i is layer i's rate. A layer never holds more than c_i
 * keys, and each layer is sized with Guava's formulas and then, where Guava's rounding of k and m
 * would leave its rate (1 − e^(−k·c_i/m_i))^k above P_i (by up to 2.3%), widened by 64-bit words
 * until it is not. So f_i ≤ P0·r^i and the rate stays below Σ P0·r^i = P·(1 − r^L) < P for any
 * number of keys and L layers. This is a bound on the expected rate (over the hash), within the
 * standard approximation of a Bloom filter's rate; a given set of absent keys scatters around it.
 * With r = 0.9 and 1000× the initial capacity (10 layers at s = 2) the rate is about 0.64·P.
 *
 * Memory: each layer is k_i ≈ log2(1/P_i) bits per key, growing by log2(1/r) per layer; at
 * P = 0.01, s = 2, r = 0.9, 1000× growth it is about 16.5 bits (2.06 bytes) per key when the newest
 * layer is full and up to twice that just after a layer is added. A classic filter sized for the
 * final count needs 9.6. The price of not knowing n.
 *
 * Limits: no removal (see `CountingBloomFilter`); a layer is at most 2^36 bits, so the chain
 * stops growing when the next layer would be larger (or its capacity passes 2^53): `add` then
 * throws a `FilterFullError` and changes nothing.
 */

import { BitArray } from '../../bits/bit-array.js';
import {
  checkOptions,
  checkPositiveInteger,
  checkProbability,
  FilterFullError,
  mustBe,
} from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { hashKeyInto } from '../../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../../hash/keys.js';
import { Modulus } from '../../hash/strategies.js';
import { expectedFpp, scalableLayerTarget } from '../../math.js';
import { checkOut, FilterBase } from '../base.js';
import { BloomFilter } from '../bloom/filter.js';
import type { KeyOf, MembershipFilter, PackedKeys } from '../filter.js';
import { checkPacked, keyEnd } from '../packed.js';
import { type Layer, layerAdd, layerHas, scalableAddBatch, scalableHasBatch } from './batch.js';
import { scalableFormatCore } from './format.js';
import type { ScalableBloomFilterCreateOptions, ScalableLayerInfo } from './options.js';
import { SCALABLE_DEFAULT_GROWTH, SCALABLE_DEFAULT_RATIO, scalableLayerSize } from './sizing.js';

export type { ScalableBloomFilterCreateOptions, ScalableLayerInfo } from './options.js';
export { SCALABLE_DEFAULT_GROWTH, SCALABLE_DEFAULT_RATIO, scalableLayerSize } from './sizing.js';

export class ScalableBloomFilter<K extends Key = Key>
  extends FilterBase<K>
  implements MembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'ScalableBloomFilter';
  /** Keys the first layer holds (c0). */
  declare readonly initialCapacity: number;
  /** Target rate P. */
  declare readonly fpp: number;
  /** Growth factor s. */
  declare readonly growth: 2 | 4;
  /** Tightening ratio r. */
  declare readonly ratio: number;
  declare readonly funnel: Funnel;
  private readonly chain: Layer[] = [];
  private readonly h = new Int32Array(4);

  private constructor(
    capacity: number,
    fpp: number,
    growth: 2 | 4,
    ratio: number,
    funnel: Funnel,
    empty: boolean,
  ) {
    super();
    this.initialCapacity = capacity;
    this.fpp = fpp;
    this.growth = growth;
    this.ratio = ratio;
    this.funnel = funnel;
    if (!empty) this.chain.push(this.makeLayer(0));
  }

  /**
   * An empty filter whose first layer holds `capacity` keys; it grows by `growth` (2 or 4) and
   * tightens by `ratio` (default 0.9) so the rate stays below `fpp` for any number of keys.
   */
  static create<F extends Funnel = 'string'>(
    options: ScalableBloomFilterCreateOptions<F>,
  ): ScalableBloomFilter<KeyOf<F>> {
    checkOptions('options', options);
    const capacity = checkPositiveInteger('capacity', options.capacity);
    const fpp = checkProbability('fpp', options.fpp);
    const growth = options.growth ?? SCALABLE_DEFAULT_GROWTH;
    if (growth !== 2 && growth !== 4) {
      throw mustBe('growth', '2 or 4', growth);
    }
    const ratio = checkProbability('ratio', options.ratio ?? SCALABLE_DEFAULT_RATIO);
    const funnel = checkFunnel(options.funnel ?? 'string');
    return new ScalableBloomFilter(capacity, fpp, growth, ratio, funnel, false);
  }

  /** The capacity of layer i: c0·s^i. */
  private layerCapacity(i: number): number {
    return scalableLayerTarget(i, this.initialCapacity, this.fpp, this.growth, this.ratio).capacity;
  }

  /** The rate of layer i: P·(1 − r)·r^i. */
  private layerFpp(i: number): number {
    return scalableLayerTarget(i, this.initialCapacity, this.fpp, this.growth, this.ratio).fpp;
  }

  /**
   * Makes layer i, sized as {@link scalableLayerSize} or given `shape`: empty in storage of its own
   * (a wasm kernel when large enough, see BloomFilter), or viewing `data` (words read in place).
   */
  private makeLayer(
    i: number,
    shape?: { bits: number; hashes: number },
    data?: Uint32Array,
  ): Layer {
    const capacity = this.layerCapacity(i);
    const fpp = this.layerFpp(i);
    const size = shape ?? scalableLayerSize(capacity, fpp);
    const storage = data === undefined ? undefined : new BitArray(size.bits, data);
    const filter = new BloomFilter(
      { bits: size.bits, hashes: size.hashes, funnel: this.funnel },
      storage,
    );
    return {
      filter,
      mod: new Modulus(filter.bitSize),
      data: filter.bits.data,
      capacity,
      fpp,
      count: 0,
    };
  }

  /** True if any layer holds the hash in `h`, newest layer first. */
  private hasHash(): boolean {
    for (let l = this.chain.length - 1; l >= 0; l--)
      if (layerHas(this.chain[l]!, this.h, 0)) return true;
    return false;
  }

  /**
   * Adds `key` unless `has(key)` is already true. Returns true iff it was added (the key was
   * certainly new). Throws `FilterFullError`, changing nothing, when a new layer is needed and
   * would pass the size limits.
   */
  override add(key: K): boolean {
    return this.addAs(this.funnel, key);
  }

  protected override addEncoded(bytes: Uint8Array): boolean {
    return this.addAs('bytes', bytes);
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    hashKeyInto('bytes', bytes, this.h);
    return this.hasHash();
  }

  private addAs(funnel: Funnel, key: Key): boolean {
    hashKeyInto(funnel, key, this.h);
    if (this.hasHash()) return false;
    let layer = this.chain[this.chain.length - 1]!;
    if (layer.count >= layer.capacity) {
      const i = this.chain.length;
      const capacity = this.layerCapacity(i);
      let next: Layer;
      try {
        if (!Number.isSafeInteger(capacity)) throw new RangeError(`capacity ${capacity}`);
        next = this.makeLayer(i);
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        throw new FilterFullError(
          `scalable filter cannot grow past ${this.chain.length} layers (${this.size} keys): ${e.message}`,
        );
      }
      this.chain.push(next);
      layer = next;
    }
    layerAdd(layer, this.h, 0);
    layer.count++;
    return true;
  }

  /** False if `key` was certainly never added; true if it probably was. */
  override has(key: K): boolean {
    hashKeyInto(this.funnel, key, this.h);
    return this.hasHash();
  }

  /**
   * `add` of every packed key, in order (see batch.ts): the same return, `out` flags, bits, layer
   * counts and growth as key by key; hashed once per key, one pass per layer.
   */
  override addBatch(batch: PackedKeys, out?: Uint8Array): number {
    const n = checkPacked(batch);
    const flags = out === undefined ? null : checkOut(out, n);
    return scalableAddBatch(this.chain, batch, n, flags, (i) =>
      this.addAs('bytes', batch.bytes.subarray(batch.offsets[i]!, keyEnd(batch, i))),
    );
  }

  /** `has` of every packed key (`out[i]` 1 or 0): one pass per layer, newest first. */
  override hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const n = checkPacked(batch);
    const result = checkOut(out, n);
    scalableHasBatch(this.chain, batch, n, result);
    return result;
  }

  /** Keys added (each counted once: a key `has` already knew is not added again). */
  get size(): number {
    let n = 0;
    for (const layer of this.chain) n += layer.count;
    return n;
  }

  /** Keys added (the filter counts them exactly; a false positive at add time is not counted). */
  override estimatedCount(): number {
    return this.size;
  }

  /** Keys the current layers hold before the next one is made: Σ c0·s^i. */
  get capacity(): number {
    let n = 0;
    for (const layer of this.chain) n += layer.capacity;
    return n;
  }

  /** Number of layers. */
  get layerCount(): number {
    return this.chain.length;
  }

  /** Total bits of all layers. */
  get bitSize(): number {
    let n = 0;
    for (const layer of this.chain) n += layer.filter.bitSize;
    return n;
  }

  /** Bytes held by the layers' bits. */
  get byteLength(): number {
    return this.bitSize / 8;
  }

  /** Each layer's capacity, count, rate and shape, oldest first. */
  layers(): ScalableLayerInfo[] {
    return this.chain.map((l) => ({
      capacity: l.capacity,
      count: l.count,
      fpp: l.fpp,
      bits: l.filter.bitSize,
      hashes: l.filter.hashes,
    }));
  }

  /** The layer's classic filter (read it, do not add to it: its count would go stale). */
  layer(i: number): BloomFilter {
    const l = this.chain[i];
    if (l === undefined) {
      throw mustBe('layer', `an index below ${this.chain.length}`, i);
    }
    return l.filter;
  }

  /** No design capacity (it grows) and its target rate P, which its rate stays below. */
  override designPoint(): { capacity: number; fpp: number } {
    return { capacity: Number.POSITIVE_INFINITY, fpp: this.fpp };
  }

  /** The rate the bits set now imply: 1 − Π(1 − (bitCount_i/m_i)^k_i). */
  expectedFpp(): number {
    // 1 − Π(1 − p_i) through logarithms: written directly, a layer rate below 1e-16 would
    // vanish (1 − p_i rounds to 1) and a fresh filter would report a rate of exactly 0.
    let logMiss = 0;
    for (const l of this.chain) {
      logMiss += Math.log1p(-expectedFpp(l.filter.bitCount, l.filter.bitSize, l.filter.hashes));
    }
    return 0 - Math.expm1(logMiss); // 0 − (−0) is 0, where −expm1(0) is −0 (info showed "-0")
  }

  /** Forgets every key: back to one empty first layer. */
  override clear(): void {
    this.chain.length = 1;
    const first = this.chain[0]!;
    first.filter.clear();
    first.count = 0;
  }

  /** An independent copy. */
  clone(): ScalableBloomFilter<K> {
    const c = ScalableBloomFilter.restore(
      this.initialCapacity,
      this.fpp,
      this.growth,
      this.ratio,
      this.funnel,
    ) as ScalableBloomFilter<K>;
    for (const [i, l] of this.chain.entries()) {
      const layer = c.makeLayer(i, l.filter.shape());
      layer.data.set(l.data);
      layer.filter.bits.recount();
      layer.count = l.count;
      c.chain.push(layer);
    }
    return c;
  }

  /**
   * For the codec: a filter with the given parameters and no layers; layers are then appended
   * with {@link ScalableBloomFilter.restoreLayer}. The parameters must be checked by the caller.
   * @internal
   */
  static restore(
    capacity: number,
    fpp: number,
    growth: 2 | 4,
    ratio: number,
    funnel: Funnel,
  ): ScalableBloomFilter {
    return new ScalableBloomFilter(capacity, fpp, growth, ratio, funnel, true);
  }

  /**
   * For the codec: appends the next layer with its shape and count, over `data` (viewed, not
   * copied), or without `data` in storage of its own (a wasm kernel when large enough, so that
   * a filter read from bytes runs the batch kernels), which the caller fills and then recounts
   * (`layer(i).bits.recount()`). Returns the layer's words.
   * @internal
   */
  restoreLayer(
    bits: number,
    hashes: number,
    data: Uint32Array | undefined,
    count: number,
  ): Uint32Array {
    const layer = this.makeLayer(this.chain.length, { bits, hashes }, data);
    layer.count = count;
    this.chain.push(layer);
    return layer.data;
  }

  /** bloomkit's native format (filter type 3, see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(scalableFormatCore.parts(this));
  }

  protected override summary(): string {
    return `${this.layerCount} layers, ${this.bitSize} bits, fpp=${this.fpp} growth=${this.growth} funnel=${this.funnel} ${this.size} keys`;
  }

  /**
   * Reads the native format written by {@link ScalableBloomFilter.toBytes}. With
   * `{ copy: false }` each layer's words view a 4-byte-aligned payload inside `bytes` on a
   * little-endian host (see `DecodeOptions`).
   */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): ScalableBloomFilter<K> {
    return scalableFormatCore.decode(bytes, options, ScalableBloomFilter) as ScalableBloomFilter<K>;
  }
}
