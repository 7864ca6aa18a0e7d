/**
 * The filter types the page knows, in one table: how to build a real filter of an explicit
 * shape, how much memory that shape takes, and the model false positive rate after n keys.
 * Every view (calculator, plots, worker, live filter) reads this table, so a type added here
 * appears everywhere. Only the browser-safe core is imported.
 */

import {
  BinaryFuseFilter,
  BLOCK_BITS,
  BlockedBloomFilter,
  BloomFilter,
  blockedFalsePositiveRate,
  CountingBloomFilter,
  CuckooFilter,
  falsePositiveRate,
  type MembershipFilter,
  SplitBlockBloomFilter,
  splitBlockFalsePositiveRate,
} from '../../src/index.js';

/** Bits of a Parquet split block (eight 32-bit words). */
export const SPLIT_BLOCK_BITS = 256;
/** Slots per cuckoo bucket. */
export const CUCKOO_SLOTS = 4;

/** An explicit, serializable shape (it crosses to the Web Worker as plain data). */
export type Shape =
  | { kind: 'classic'; bits: number; hashes: number }
  | { kind: 'blocked'; blocks: number; hashes: number }
  | { kind: 'split-block'; blocks: number }
  | { kind: 'counting'; counters: number; hashes: number }
  | { kind: 'cuckoo'; buckets: number; fingerprintBits: number }
  | { kind: 'binary-fuse'; keys: number; cells: number; fingerprintBits: 8 | 16 };

export type KindId = Shape['kind'];

export interface KindInfo {
  readonly id: KindId;
  readonly label: string;
  /** One line for the calculator: what the type is for. */
  readonly blurb: string;
  /** Plot colour. */
  readonly color: string;
  /** False for a static set (built once from all its keys): no live view, no fill curve. */
  readonly growable: boolean;
}

export const KINDS: readonly KindInfo[] = [
  {
    id: 'classic',
    growable: true,
    label: 'Classic',
    blurb: 'Guava-compatible Bloom filter: k bits anywhere in m.',
    color: '#4f7cff',
  },
  {
    id: 'blocked',
    growable: true,
    label: 'Blocked',
    blurb: 'All k bits in one 512-bit block: one cache miss per lookup.',
    color: '#f2994a',
  },
  {
    id: 'split-block',
    growable: true,
    label: 'Split-block',
    blurb: "Parquet's filter: 8 bits, one per word of a 256-bit block.",
    color: '#27ae60',
  },
  {
    id: 'counting',
    growable: true,
    label: 'Counting',
    blurb: 'Classic positions with 4-bit counters, so keys can be removed.',
    color: '#bb6bd9',
  },
  {
    id: 'cuckoo',
    growable: true,
    label: 'Cuckoo',
    blurb: 'f-bit fingerprints in buckets of 4: deletable, small at low rates.',
    color: '#eb5757',
  },
  {
    id: 'binary-fuse',
    growable: false,
    label: 'Binary fuse',
    blurb:
      'A static set, built once from all its keys: about 1.125·f bits per key for large sets, rate 2^−f.',
    color: '#2d9cdb',
  },
];

/** The types a filter can be added to one key at a time. */
export const GROWABLE_KINDS: readonly KindInfo[] = KINDS.filter((k) => k.growable);

export function kindInfo(id: KindId): KindInfo {
  const info = KINDS.find((k) => k.id === id);
  if (info === undefined) throw new RangeError(`unknown filter kind ${JSON.stringify(id)}`);
  return info;
}

/** A real, empty filter of `shape`, built with the library's public constructors. */
export function makeFilter(shape: Shape): MembershipFilter {
  switch (shape.kind) {
    case 'classic':
      return new BloomFilter({ bits: shape.bits, hashes: shape.hashes });
    case 'blocked':
      return new BlockedBloomFilter({ blocks: shape.blocks, hashes: shape.hashes });
    case 'split-block':
      return new SplitBlockBloomFilter({ blocks: shape.blocks });
    case 'counting':
      return new CountingBloomFilter({ counters: shape.counters, hashes: shape.hashes });
    case 'cuckoo':
      return new CuckooFilter({ buckets: shape.buckets, fingerprintBits: shape.fingerprintBits });
    case 'binary-fuse':
      throw new TypeError('a binary fuse filter is built from all its keys at once, never empty');
  }
}

const fuseCellsCache = new Map<number, number>();
/** The most keys the page builds a binary fuse filter of, to learn its size. */
export const MAX_FUSE_SIZING_KEYS = 200_000;

/**
 * Fingerprint cells of a binary fuse filter of n distinct keys, read off a real filter built
 * from n keys (the size depends on n only). Throws a `RangeError` above
 * {@link MAX_FUSE_SIZING_KEYS}, where building one in the page would take too long.
 */
export function fuseCells(n: number): number {
  const cached = fuseCellsCache.get(n);
  if (cached !== undefined) return cached;
  if (n > MAX_FUSE_SIZING_KEYS) {
    throw new RangeError(
      `the page sizes a binary fuse filter by building one: up to ${MAX_FUSE_SIZING_KEYS.toLocaleString('en-US')} keys`,
    );
  }
  const keys = Array.from({ length: n }, (_, i) => `k${i}`);
  const cells = BinaryFuseFilter.build(keys).fingerprints.length;
  if (fuseCellsCache.size > 64) fuseCellsCache.clear();
  fuseCellsCache.set(n, cells);
  return cells;
}

/** Bits of memory the shape's table takes (counters are 4 bits; cuckoo slots f bits). */
export function memoryBits(shape: Shape): number {
  switch (shape.kind) {
    case 'classic':
      return shape.bits;
    case 'blocked':
      return shape.blocks * BLOCK_BITS;
    case 'split-block':
      return shape.blocks * SPLIT_BLOCK_BITS;
    case 'counting':
      return shape.counters * 4;
    case 'cuckoo':
      return shape.buckets * CUCKOO_SLOTS * shape.fingerprintBits;
    case 'binary-fuse':
      return shape.cells * shape.fingerprintBits;
  }
}

/** Probes per key, or null where the type has none (cuckoo). */
export function hashesOf(shape: Shape): number | null {
  switch (shape.kind) {
    case 'split-block':
      return 8;
    case 'cuckoo':
    case 'binary-fuse':
      return null;
    default:
      return shape.hashes;
  }
}

/**
 * The model false positive rate after `n` distinct keys, the library's formula for each type:
 * classic and counting (1 − e^(−kn/m))^k; blocked and split-block the Poisson mix over block
 * loads λ = n / z; cuckoo 1 − (1 − 1/(2^f − 1))^(8·load), the rate `CuckooFilter.expectedFpp()`
 * states for a table at that load; binary fuse 2^−f for any key outside its set.
 */
export function modelRate(shape: Shape, n: number): number {
  switch (shape.kind) {
    case 'classic':
      return falsePositiveRate(n, shape.bits, shape.hashes);
    case 'counting':
      return falsePositiveRate(n, shape.counters, shape.hashes);
    case 'blocked':
      return blockedFalsePositiveRate(n / shape.blocks, shape.hashes);
    case 'split-block':
      return splitBlockFalsePositiveRate(n / shape.blocks);
    case 'cuckoo': {
      const load = Math.min(1, n / (shape.buckets * CUCKOO_SLOTS));
      return -Math.expm1(
        2 * CUCKOO_SLOTS * load * Math.log1p(-1 / (2 ** shape.fingerprintBits - 1)),
      );
    }
    case 'binary-fuse':
      // A key outside the set matches its three cells' XOR with probability 2^−f.
      return 2 ** -shape.fingerprintBits;
  }
}

/** The most keys the shape can take: a cuckoo table's slots, else unbounded. */
export function maxKeys(shape: Shape): number {
  return shape.kind === 'cuckoo' ? shape.buckets * CUCKOO_SLOTS : Number.POSITIVE_INFINITY;
}

/** The shape's parameters as label/value pairs, for tables. */
export function describeShape(shape: Shape): [string, string][] {
  const f = (x: number): string => x.toLocaleString('en-US');
  switch (shape.kind) {
    case 'classic':
      return [
        ['bits (m)', f(shape.bits)],
        ['hashes (k)', f(shape.hashes)],
      ];
    case 'blocked':
      return [
        ['blocks of 512 bits', f(shape.blocks)],
        ['probes per key (k)', f(shape.hashes)],
      ];
    case 'split-block':
      return [
        ['blocks of 256 bits', f(shape.blocks)],
        ['bits per key (fixed)', '8'],
      ];
    case 'counting':
      return [
        ['4-bit counters (m)', f(shape.counters)],
        ['hashes (k)', f(shape.hashes)],
      ];
    case 'cuckoo':
      return [
        ['buckets of 4 slots', f(shape.buckets)],
        ['fingerprint bits (f)', f(shape.fingerprintBits)],
      ];
    case 'binary-fuse':
      return [
        ['fingerprint cells', f(shape.cells)],
        ['fingerprint bits (f)', f(shape.fingerprintBits)],
      ];
  }
}
