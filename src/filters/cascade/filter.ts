/**
 * A filter cascade: exact membership on a known universe (CRLite; Larisch, Choffnes, Levin,
 * Maggs, Mislove, Wilson, IEEE S&P 2017), in the layout of Mozilla's MLBF files.
 *
 * Guarantee: for every key of `include`, `has` is true; for every key of `exclude`, `has` is
 * false. A key in neither set answers true with probability about that of layer 1,
 * p = |R| / (√2·|S|) (it then has to get through layer 2 as well, which halves that). Size and
 * layer sizing: see build.ts; format and hashing: see mlbf.ts and hashing.ts.
 *
 * Lookup: walk the layers from 1; at each layer whose k bits are all set, flip the answer and go
 * on; stop at the first layer with a clear bit. The answer starts false, and an inverted cascade
 * flips it once more at the end (what Mozilla writes when the include set is the larger one).
 *
 * Keys are bytes: the funnel turns each key into bytes first (`'string'`, the default, is UTF-8;
 * `'bytes'` takes them as they are), and those bytes are what Mozilla's tools hash.
 */

import { checkOptions, mustBe } from '../../errors.js';
import { joinContainer } from '../../formats/native.js';
import { checkFunnel, encodeKeyInto, type Funnel, type Key, keyBytes } from '../../hash/keys.js';
import { estimateCount } from '../../math.js';
import { ReadonlyFilterBase } from '../base.js';
import type { KeyOf, ReadonlyMembershipFilter } from '../filter.js';
import { buildLayers } from './build.js';
import { cascadeFormat } from './format.js';
import {
  type CascadeHash,
  type CascadeLayer,
  IndexGenerator,
  layerHas,
  MLBF_HASHES,
  streamOffsets,
} from './hashing.js';
import { decodeMlbf, encodeMlbf, type MlbfWriteOptions } from './mlbf.js';

/** Options of {@link FilterCascade.build}. */
export interface CascadeBuildOptions<F extends Funnel = 'string'> {
  /** The keys `has` must answer true for (R). Iterated once. */
  include: Iterable<KeyOf<F>>;
  /** The keys `has` must answer false for (S). Streamed once; only layer-1 false positives are kept. */
  exclude: Iterable<KeyOf<F>>;
  /**
   * The number of keys in `exclude`, so that a one-pass iterable (a generator) can be streamed;
   * not needed for an array or a Set (otherwise `exclude` is collected into an array first).
   */
  excludeSize?: number;
  /** How keys become bytes (default `'string'`, UTF-8). */
  funnel?: F;
  /** The MLBF hash algorithm (default `'murmur3'`, what Mozilla's Python package writes by default). */
  hash?: CascadeHash;
  /** A salt for the SHA-256 algorithms, under 256 bytes (murmur3 takes none). */
  salt?: Uint8Array;
}

/** Options of {@link FilterCascade.fromMlbf}. */
export interface CascadeReadOptions<F extends Funnel = 'string'> {
  /** How keys become bytes (default `'string'`, UTF-8). */
  funnel?: F;
}

/** The parts a cascade is made of (what `fromMlbf` and the native decoder pass in). */
export interface CascadeInit {
  readonly funnel: Funnel;
  readonly hash: CascadeHash;
  readonly salt: Uint8Array;
  readonly inverted: boolean;
  readonly layers: readonly CascadeLayer[];
  /** The number of keys the cascade answers true for among those it was built from, if known. */
  readonly includeCount?: number | undefined;
  /** The number of keys it answers false for among those, if known. */
  readonly excludeCount?: number | undefined;
}

/** Throws a `TypeError` naming `name` unless `value` is an iterable of keys (not a string). */
function checkKeySet(name: string, value: unknown): void {
  if (
    typeof value === 'string' ||
    value === null ||
    typeof value !== 'object' ||
    typeof (value as Iterable<unknown>)[Symbol.iterator] !== 'function'
  ) {
    throw mustBe(name, 'an iterable of keys (not a string)', value, TypeError);
  }
}

function sizeOf(keys: Iterable<unknown>): number | undefined {
  if (Array.isArray(keys)) return keys.length;
  if (keys instanceof Set) return keys.size;
  return undefined;
}

export class FilterCascade<K extends Key = string>
  extends ReadonlyFilterBase<K>
  implements ReadonlyMembershipFilter<K>
{
  /** The class's name in messages, JSON and summaries (survives minification). */
  static readonly typeName = 'FilterCascade';
  readonly funnel: Funnel;
  readonly hash: CascadeHash;
  /** The salt (empty when none). */
  readonly salt: Uint8Array;
  /** True when the answer is flipped after the walk (the layers encode the exclude set). */
  readonly inverted: boolean;
  readonly layers: readonly CascadeLayer[];
  readonly includeCount: number | undefined;
  readonly excludeCount: number | undefined;
  private readonly gen: IndexGenerator;
  private scratch = new Uint8Array(256);

  /** Use {@link FilterCascade.build} or {@link FilterCascade.fromMlbf}. */
  constructor(init: CascadeInit) {
    super();
    this.funnel = checkFunnel(init.funnel);
    this.hash = init.hash;
    this.salt = init.salt;
    this.inverted = init.inverted;
    this.layers = init.layers;
    this.includeCount = init.includeCount;
    this.excludeCount = init.excludeCount;
    this.gen = new IndexGenerator(init.hash, init.salt, streamOffsets(init.layers));
  }

  /**
   * Builds the cascade of `include` against `exclude` with CRLite's layer sizing. When `include`
   * is the larger set, the layers encode `exclude` instead and the cascade is inverted (smaller,
   * same answers). Throws a `RangeError` for a key in both sets.
   */
  static build<F extends Funnel = 'string'>(
    options: CascadeBuildOptions<F>,
  ): FilterCascade<KeyOf<F>> {
    checkOptions('options', options);
    checkKeySet('include', options.include);
    checkKeySet('exclude', options.exclude);
    const funnel = checkFunnel(options.funnel ?? 'string');
    const hash = options.hash ?? 'murmur3';
    if (!Object.hasOwn(MLBF_HASHES, hash)) {
      throw mustBe('hash', `'murmur3', 'sha256l32' or 'sha256ctr'`, hash);
    }
    const salt = options.salt ?? new Uint8Array(0);
    if (!(salt instanceof Uint8Array)) throw mustBe('salt', 'a Uint8Array', salt, TypeError);
    if (salt.length >= 256)
      throw new RangeError(`salt must be under 256 bytes, got ${salt.length}`);
    if (salt.length > 0 && hash === 'murmur3') {
      throw new RangeError("a salt needs hash 'sha256l32' or 'sha256ctr' (murmur3 ignores salts)");
    }
    const toBytes = (key: Key): Uint8Array => keyBytes(funnel, key);
    const include = Array.from(options.include as Iterable<Key>, toBytes);
    let excludeSize = options.excludeSize ?? sizeOf(options.exclude);
    let exclude: Iterable<Key> = options.exclude as Iterable<Key>;
    if (excludeSize === undefined) {
      exclude = Array.from(exclude);
      excludeSize = (exclude as Key[]).length;
    } else if (!Number.isSafeInteger(excludeSize) || excludeSize < 0) {
      throw mustBe('excludeSize', 'a non-negative integer', excludeSize);
    }
    const inverted = include.length > excludeSize;
    const encoded = inverted
      ? buildLayers({
          include: Array.from(exclude, toBytes),
          exclude: include,
          excludeSize: include.length,
          hash,
          salt,
        })
      : buildLayers({ include, exclude: mapIterable(exclude, toBytes), excludeSize, hash, salt });
    return new FilterCascade<KeyOf<F>>({
      funnel,
      hash,
      salt: salt.slice(),
      inverted,
      layers: encoded,
      includeCount: include.length,
      excludeCount: excludeSize,
    });
  }

  /**
   * Reads an MLBF file (Mozilla's format, versions 1 and 2) as rust-cascade does; `null` for an
   * empty input ("no cascade"). Throws a `FormatError` naming the field and value otherwise.
   * The cascade views `bytes` (keep them unchanged).
   */
  static fromMlbf<F extends Funnel = 'string'>(
    bytes: Uint8Array,
    options: CascadeReadOptions<F> = {},
  ): FilterCascade<KeyOf<F>> | null {
    if (!(bytes instanceof Uint8Array)) throw mustBe('bytes', 'a Uint8Array', bytes, TypeError);
    const parsed = decodeMlbf(bytes);
    if (parsed === null) return null;
    return new FilterCascade<KeyOf<F>>({
      ...parsed,
      funnel: checkFunnel(options.funnel ?? 'string'),
    });
  }

  /** This cascade as an MLBF file (version 2 unless `{ version: 1 }`). */
  toMlbf(options?: MlbfWriteOptions): Uint8Array {
    return encodeMlbf(this, options);
  }

  /** True for every included key, false for every excluded key (see the class comment). */
  override has(key: K): boolean {
    return this.walk(this.encode(key));
  }

  protected override hasEncoded(bytes: Uint8Array): boolean {
    return this.walk(bytes);
  }

  /**
   * The number of included keys when known (built here, or read from bloomkit's format); for a
   * cascade read from MLBF, layer 1's estimate −(m/k)·ln(1 − X/m) (X bits set; math.ts
   * `estimateCount`, `Infinity` when all are set), or NaN when the cascade is inverted (layer 1
   * then holds the excluded keys).
   */
  override estimatedCount(): number {
    if (this.includeCount !== undefined) return this.includeCount;
    const top = this.layers[0];
    if (this.inverted || top === undefined || top.hashes === 0 || top.bits === 0) return Number.NaN;
    let set = 0;
    for (const byte of top.data) set += POPCOUNT[byte]!;
    // The classic estimator, as for every filter: ∞ when every bit of layer 1 is set.
    return estimateCount(set, top.bits, top.hashes);
  }

  /** bloomkit's native binary form: the MLBF v2 file in a container (see format.ts). */
  override toBytes(): Uint8Array {
    return joinContainer(cascadeFormat.parts(this as FilterCascade<never>));
  }

  /** Reads the native format written by {@link FilterCascade.toBytes}. */
  static fromBytes<K extends Key = Key>(bytes: Uint8Array): FilterCascade<K> {
    return cascadeFormat.decode(bytes, undefined, FilterCascade) as FilterCascade<K>;
  }

  protected override summary(): string {
    const bits = this.layers.map((l) => `${l.bits}/${l.hashes}`).join(' ');
    return `${this.layers.length} layers (bits/hashes: ${bits}), ${this.hash}${this.inverted ? ', inverted' : ''}, funnel=${this.funnel}`;
  }

  /** Number of layers. */
  get layerCount(): number {
    return this.layers.length;
  }

  /** Total number of bits over all layers. */
  get bitSize(): number {
    let bits = 0;
    for (const layer of this.layers) bits += layer.bits;
    return bits;
  }

  private walk(key: Uint8Array): boolean {
    const gen = this.gen;
    gen.reset(key);
    let answer = false;
    const layers = this.layers;
    for (let d = 0; d < layers.length; d++) {
      if (!layerHas(gen, layers[d]!, d + 1)) break;
      answer = !answer;
    }
    return this.inverted ? !answer : answer;
  }

  private encode(key: K): Uint8Array {
    let len = encodeKeyInto(this.funnel, key, this.scratch, 0);
    if (len < 0) {
      this.scratch = new Uint8Array(-len + 64);
      len = encodeKeyInto(this.funnel, key, this.scratch, 0);
    }
    return this.scratch.subarray(0, len);
  }
}

function* mapIterable<T, U>(items: Iterable<T>, f: (item: T) => U): Iterable<U> {
  for (const item of items) yield f(item);
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let x = b; x > 0; x >>= 1) n += x & 1;
  return n;
});
