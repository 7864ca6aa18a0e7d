/**
 * The Bloom filter of DCSO's Go library and its `bloom` command (github.com/DCSO/bloom 0.2.4),
 * bit for bit: a filter made by `bloom create` and filled by `bloom insert` answers here as
 * `bloom check` does, and a filter filled here is read by `bloom check` with the same answers
 * (`toDcso()` / `fromDcso()` read and write its file format, see `file.ts`).
 *
 * Guarantee: `has(key)` is true for every key ever added (no false negatives). For a key never
 * added it is true with probability about (1 − e^(−kn/m))^k after n adds into m bits with k
 * hashes. Sizing ({@link DcsoBloomFilter.create}, DCSO's `Initialize(n, p)`):
 * m = |⌈n · ln p / ln² 2⌉| bits (not rounded to words), k = ⌈ln 2 · m / n⌉;
 * `capacity: 1000, fpp: 0.01` → 9585 bits, k = 7 (what `bloom show` prints).
 *
 * Positions: FNV-1 64 of the key's bytes, then a multiplicative sequence modulo the largest
 * prime below 2^64 (`hash.ts`). Keys are the funnel's bytes: with the default `'string'` funnel a
 * line read by `bloom` and the same text here are the same key (UTF-8).
 *
 * The filter keeps what DCSO's files hold beside the bits: the requested capacity and rate, its
 * element counter N (DCSO counts an add that set at least one new bit; `estimatedCount()` returns
 * it, as `bloom show` prints "Elements present") and the attached data (`bloom set-data`).
 * Limits: at most 2^36 bits and 255 hashes (a DCSO file beyond them is refused, never clamped).
 * Reference: Bloom, "Space/Time Trade-offs in Hash Coding with Allowable Errors", CACM 1970; the
 * Go source of github.com/DCSO/bloom (bloom.go: `Initialize`, `Fingerprint`, `Add`, `Join`).
 */

import { BitArray } from '../../bits/bit-array.js';
import { checkOptions, checkPositiveInteger, checkProbability, mustBe } from '../../errors.js';
import { type DecodeOptions, joinContainer } from '../../formats/native.js';
import { checkFunnel, encodeKeyInto, type Funnel, type Key } from '../../hash/keys.js';
import { checkHashesFor, expectedFpp, MAX_BITS } from '../../math.js';
import { FilterBase, percent } from '../base.js';
import { checkCombinable, type KeyOf, type MembershipFilter, type Requirement } from '../filter.js';
import { readDcso, writeDcso } from './file.js';
import { dcsoFormatCore } from './format.js';
import { dcsoPositions } from './hash.js';

/** The explicit shape of a DCSO filter: what its file's header holds. */
export interface DcsoBloomFilterShape<F extends Funnel = Funnel> {
  /** The capacity it was sized for (DCSO's n). */
  capacity: number;
  /** The rate it was sized for (DCSO's p), in (0, 1). */
  fpp: number;
  /** Bits (m), any positive integer up to 2^36; stored in ⌈m/64⌉ 64-bit words. */
  bits: number;
  /** Hash functions per key (k), 1 to 255. */
  hashes: number;
  /** Key encoding; default `'string'` (UTF-8, the bytes `bloom` reads from a line). */
  funnel?: F;
  /** DCSO's element counter N (adds that set a new bit); default 0. */
  count?: number;
  /** Data attached to the filter (`bloom set-data`); default none. */
  data?: Uint8Array;
}

/** Options of {@link DcsoBloomFilter.create}. */
export interface DcsoBloomFilterCreateOptions<F extends Funnel = Funnel> {
  /** Expected number of distinct keys (n): a positive safe integer. */
  capacity: number;
  /** Target false positive probability at `capacity` keys, in (0, 1). */
  fpp: number;
  /** Key encoding; default `'string'`. */
  funnel?: F;
}

/** DCSO's `Initialize(n, p)`: m = |⌈n·ln p / ln²2⌉|, k = ⌈ln 2 · m / n⌉ (same float steps). */
export function dcsoSize(capacity: number, fpp: number): { bits: number; hashes: number } {
  checkPositiveInteger('capacity', capacity);
  checkProbability('fpp', fpp);
  const bits = Math.abs(Math.ceil((capacity * Math.log(fpp)) / Math.LN2 ** 2));
  const hashes = Math.ceil((Math.LN2 * bits) / capacity);
  return { bits, hashes };
}

export class DcsoBloomFilter<K extends Key = Key>
  extends FilterBase<K>
  implements MembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'DcsoBloomFilter';
  /** The bits: ⌈m/64⌉ 64-bit words; positions are below m. */
  declare readonly bits: BitArray;
  /** Bits (m). */
  declare readonly bitSize: number;
  /** Hash functions per key (k). */
  declare readonly hashes: number;
  /** The capacity the filter was sized for (n). */
  declare readonly capacity: number;
  /** The rate the filter was sized for (p). */
  declare readonly fpp: number;
  declare readonly funnel: Funnel;
  /** DCSO's element counter N: adds that set at least one new bit (a union adds the other's). */
  declare count: number;
  /** Data attached to the filter (`bloom set-data`), kept through every format. */
  declare data: Uint8Array;
  declare private readonly idx: Float64Array;
  declare private scratch: Uint8Array;

  /** A filter of an explicit shape, or over existing words (`storage`: ⌈m/64⌉·64 bits). */
  constructor(shape: DcsoBloomFilterShape, storage?: BitArray) {
    super();
    checkOptions('shape', shape);
    checkPositiveInteger('capacity', shape.capacity);
    checkProbability('fpp', shape.fpp);
    const bits = checkPositiveInteger('bits', shape.bits, MAX_BITS);
    const hashes = checkPositiveInteger('hashes', shape.hashes, 255);
    const count = shape.count ?? 0;
    if (!Number.isSafeInteger(count) || count < 0) {
      throw mustBe('count', 'a non-negative safe integer', count);
    }
    const data = shape.data ?? new Uint8Array(0);
    if (!(data instanceof Uint8Array)) throw mustBe('data', 'a Uint8Array', data, TypeError);
    const wordBits = Math.ceil(bits / 64) * 64;
    if (storage !== undefined && storage.bitSize !== wordBits) {
      throw new RangeError(`storage has ${storage.bitSize} bits, the shape needs ${wordBits}`);
    }
    this.bits = storage ?? new BitArray(wordBits);
    this.bitSize = bits;
    this.hashes = hashes;
    this.capacity = shape.capacity;
    this.fpp = shape.fpp;
    this.funnel = checkFunnel(shape.funnel ?? 'string');
    this.count = count;
    this.data = data;
    this.idx = new Float64Array(hashes);
    this.scratch = new Uint8Array(256);
  }

  /** A filter for `capacity` keys at rate `fpp`, sized as DCSO's `bloom create -n -p`. */
  static create<F extends Funnel = 'string'>(
    options: DcsoBloomFilterCreateOptions<F>,
  ): DcsoBloomFilter<KeyOf<F>> {
    checkOptions('options', options);
    const size = dcsoSize(options.capacity, options.fpp);
    checkHashesFor(options.fpp, size.hashes);
    return new DcsoBloomFilter<KeyOf<F>>({ ...options, ...size });
  }

  /** Adds `key`. True iff a bit changed (then N grows by one, as in DCSO's `Add`). */
  override add(key: K): boolean {
    return this.addEncoded(this.encode(key));
  }

  /** False if `key` was certainly never added; true if it probably was. */
  override has(key: K): boolean {
    return this.hasEncoded(this.encode(key));
  }

  /** The funnel bytes of `key`, in a buffer reused from call to call. */
  private encode(key: Key): Uint8Array {
    let len = encodeKeyInto(this.funnel, key, this.scratch, 0);
    if (len < 0) {
      this.scratch = new Uint8Array(-len + 64);
      len = encodeKeyInto(this.funnel, key, this.scratch, 0);
    }
    return this.scratch.subarray(0, len);
  }

  protected override addEncoded(bytes: Uint8Array): boolean {
    const idx = this.idx;
    dcsoPositions(bytes, this.bitSize, idx);
    let changed = false;
    for (let i = 0; i < idx.length; i++) if (this.bits.set(idx[i]!)) changed = true;
    if (changed) this.count++;
    return changed;
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    const idx = this.idx;
    dcsoPositions(bytes, this.bitSize, idx);
    const data = this.bits.data;
    for (let i = 0; i < idx.length; i++) {
      const p = idx[i]!;
      if ((data[(p / 32) | 0]! & (1 << (p & 31))) === 0) return false;
    }
    return true;
  }

  /** Forgets every key (N back to 0, as DCSO's `Reset`); the attached data stays. */
  override clear(): void {
    this.bits.clear();
    this.count = 0;
  }

  /** DCSO's N, the count `bloom show` prints as "Elements present". */
  override estimatedCount(): number {
    return this.count;
  }

  /** Bytes of the bits in memory and in a file: ⌈m/64⌉ words of 8 bytes. */
  get byteLength(): number {
    return Math.ceil(this.bitSize / 64) * 8;
  }

  /** Number of bits set. */
  get bitCount(): number {
    return this.bits.bitCount();
  }

  /**
   * The design the file keeps, as `info` prints it: its capacity and the fpp it was made for (not
   * guessed from the shape as for a Guava file, which keeps neither).
   */
  override designPoint(): { capacity: number; fpp: number } {
    return { capacity: this.capacity, fpp: this.fpp };
  }

  /** (bitCount/m)^k: the rate that the bits set now imply. */
  expectedFpp(): number {
    return expectedFpp(this.bits.bitCount(), this.bitSize, this.hashes);
  }

  /** What another filter must share with this one to be joined (DCSO's `Join` checks, + funnel). */
  protected requirements(other: this): readonly Requirement[] {
    return [
      ['have the same capacity', this.capacity, other.capacity],
      ['have the same fpp', this.fpp, other.fpp],
      ['have the same number of hash functions', this.hashes, other.hashes],
      ['have the same bit size', this.bitSize, other.bitSize],
      ['have equal funnels', this.funnel, other.funnel],
    ];
  }

  /**
   * DCSO's `Join` (`bloom join`): the bitwise OR in place, N = N + other's N (an upper bound when
   * the two sets overlap, as DCSO says); returns this. Throws `IncompatibleFiltersError` naming
   * the first difference in n, p, k, m or funnel.
   */
  union(other: this): this {
    checkCombinable(DcsoBloomFilter, this, other, (o: never) => this.requirements(o));
    this.bits.orWith(other.bits);
    this.count = Math.min(Number.MAX_SAFE_INTEGER, this.count + other.count);
    return this;
  }

  /** The explicit shape of this filter (its words are not in it). */
  shape(): DcsoBloomFilterShape {
    return {
      capacity: this.capacity,
      fpp: this.fpp,
      bits: this.bitSize,
      hashes: this.hashes,
      funnel: this.funnel,
      count: this.count,
      data: this.data,
    };
  }

  /** DCSO's file bytes, as `bloom` writes them (see `file.ts`). */
  toDcso(): Uint8Array {
    return writeDcso(this);
  }

  /**
   * Reads a file written by DCSO's `bloom` (uncompressed; `gunzip` one made with `--gzip`).
   * Throws `FormatError` for a file that is truncated or not DCSO's (see `file.ts`).
   */
  static fromDcso<F extends Funnel = 'string'>(
    bytes: Uint8Array,
    options: { funnel?: F } = {},
  ): DcsoBloomFilter<KeyOf<F>> {
    return readDcso(bytes, options, DcsoBloomFilter) as DcsoBloomFilter<KeyOf<F>>;
  }

  /** bloomkit's native format (type 11): see `format.ts` and docs/FORMAT.md. */
  override toBytes(): Uint8Array {
    return joinContainer(dcsoFormatCore.parts(this));
  }

  /** Reads bloomkit's native format written by {@link DcsoBloomFilter.toBytes}. */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options?: DecodeOptions,
  ): DcsoBloomFilter<K> {
    return dcsoFormatCore.decode(bytes, options, DcsoBloomFilter) as DcsoBloomFilter<K>;
  }

  protected override summary(): string {
    const m = this.bitSize;
    return `n=${this.capacity} p=${this.fpp} m=${m} k=${this.hashes} funnel=${this.funnel} fill=${percent(this.bitCount, m)} N=${this.count}`;
  }
}
