/**
 * The benchmarked filters behind one small interface. Each adapter has its own loop functions
 * (not a shared generic loop calling `lib.has`), so that every call site stays monomorphic and no
 * library pays for another's presence in the same process.
 */
import bloomFilters from 'bloom-filters';
import { BloomFilter as PeerBloomFilter } from 'bloomfilter';
import { packAll } from '../src/hash/pack.js';
import { BlockedBloomFilter, BloomFilter, packKeys, SplitBlockBloomFilter } from '../src/index.js';

/** A filter built for one run: the three timed loops and its size. */
export interface BenchFilter {
  /** Adds keys[0..n). */
  addAll(keys: readonly string[], n: number): void;
  /** How many of keys[0..n) answer true. */
  countHits(keys: readonly string[], n: number): number;
  /** Bits of filter memory (the bit array only). */
  bits: number;
  /** Probes per key. */
  hashes: number;
}

export interface BenchLibrary {
  /** Row label in the table. */
  name: string;
  /** Short id used on the command line (`--only`). */
  id: string;
  /** Keys this library is timed with at most (bloom-filters is timed on fewer; see run.ts). */
  maxKeys?: number;
  create(n: number, fpp: number): BenchFilter;
}

const classic: BenchLibrary = {
  name: 'bloomkit BloomFilter (classic, Guava-exact)',
  id: 'classic',
  create(n, fpp) {
    const f = BloomFilter.create({ capacity: n, fpp });
    return {
      bits: f.bitSize,
      hashes: f.hashes,
      addAll(keys, count) {
        for (let i = 0; i < count; i++) f.add(keys[i]!);
      },
      countHits(keys, count) {
        let hits = 0;
        for (let i = 0; i < count; i++) if (f.has(keys[i]!)) hits++;
        return hits;
      },
    };
  },
};

const blocked: BenchLibrary = {
  name: 'bloomkit BlockedBloomFilter',
  id: 'blocked',
  create(n, fpp) {
    const f = BlockedBloomFilter.create({ capacity: n, fpp });
    return {
      bits: f.bitSize,
      hashes: f.hashes,
      addAll(keys, count) {
        for (let i = 0; i < count; i++) f.add(keys[i]!);
      },
      countHits(keys, count) {
        let hits = 0;
        for (let i = 0; i < count; i++) if (f.has(keys[i]!)) hits++;
        return hits;
      },
    };
  },
};

/** A bloomkit filter through `addMany`/`hasMany` on the strings themselves (`hasMany`'s array counted). */
function manyLibrary(
  name: string,
  id: string,
  make: (n: number, fpp: number) => BloomFilter | BlockedBloomFilter,
): BenchLibrary {
  return {
    name,
    id,
    create(n, fpp) {
      const f = make(n, fpp);
      const upTo = (keys: readonly string[], count: number) =>
        count === keys.length ? keys : keys.slice(0, count);
      return {
        bits: f.bitSize,
        hashes: f.hashes,
        addAll(keys, count) {
          f.addMany(upTo(keys, count));
        },
        countHits(keys, count) {
          const found = f.hasMany(upTo(keys, count));
          let hits = 0;
          for (let i = 0; i < count; i++) if (found[i]) hits++;
          return hits;
        },
      };
    },
  };
}

const blockedBatch = manyLibrary(
  'bloomkit BlockedBloomFilter, addMany/hasMany',
  'blocked-batch',
  (n, fpp) => BlockedBloomFilter.create({ capacity: n, fpp }),
);

const classicMany = manyLibrary('bloomkit BloomFilter, addMany/hasMany', 'classic-many', (n, fpp) =>
  BloomFilter.create({ capacity: n, fpp }),
);

/** Keys packed once per key array (outside the timed loops), as keys read from a file are. */
const packedCache = new WeakMap<readonly string[], { bytes: Uint8Array; offsets: Uint32Array }>();

function packed(
  keys: readonly string[],
  count: number,
): { bytes: Uint8Array; offsets: Uint32Array } {
  let p = packedCache.get(keys);
  if (p === undefined) {
    p = packAll('string', keys);
    packedCache.set(keys, p);
  }
  return count === keys.length ? p : { bytes: p.bytes, offsets: p.offsets.subarray(0, count + 1) };
}

interface BatchFilter {
  readonly bitSize: number;
  addBatch(batch: { bytes: Uint8Array; offsets: Uint32Array }): number;
  hasBatch(batch: { bytes: Uint8Array; offsets: Uint32Array }, out?: Uint8Array): Uint8Array;
}

/** Packing timed: into buffers reused from call to call (and round to round), as packKeys allows. */
const into: { bytes?: Uint8Array; offsets?: Uint32Array } = {};

/**
 * A filter's batch API on keys packed beforehand (`prepacked`: the bytes of a file of lines, split
 * with `splitRecords`, cost no encoding) or packed from the strings inside the timed loop.
 */

function batchLibrary(
  name: string,
  id: string,
  make: (n: number, fpp: number) => BatchFilter,
  hashes: (f: BatchFilter) => number,
  prepacked: boolean,
): BenchLibrary {
  return {
    name,
    id,
    create(n, fpp) {
      const f = make(n, fpp);
      const out = new Uint8Array(n);
      const pack = (keys: readonly string[], count: number) => {
        if (prepacked) return packed(keys, count);
        const p = packKeys('string', count === keys.length ? keys : keys.slice(0, count), into);
        into.bytes = new Uint8Array(p.bytes.buffer, p.bytes.byteOffset);
        into.offsets = new Uint32Array(p.offsets.buffer, p.offsets.byteOffset);
        return p;
      };
      return {
        bits: f.bitSize,
        hashes: hashes(f),
        addAll(keys, count) {
          f.addBatch(pack(keys, count));
        },
        countHits(keys, count) {
          f.hasBatch(pack(keys, count), out);
          let hits = 0;
          for (let i = 0; i < count; i++) hits += out[i]!;
          return hits;
        },
      };
    },
  };
}

const classicBatch = batchLibrary(
  'bloomkit BloomFilter, addBatch/hasBatch (keys packed beforehand)',
  'classic-batch',
  (n, fpp) => BloomFilter.create({ capacity: n, fpp }),
  (f) => (f as BloomFilter).hashes,
  true,
);

const blockedPacked = batchLibrary(
  'bloomkit BlockedBloomFilter, addBatch/hasBatch (keys packed beforehand)',
  'blocked-packed',
  (n, fpp) => BlockedBloomFilter.create({ capacity: n, fpp }),
  (f) => (f as BlockedBloomFilter).hashes,
  true,
);

const blockedPackTimed = batchLibrary(
  'bloomkit BlockedBloomFilter, packKeys (reused buffers) + addBatch/hasBatch (packing timed)',
  'blocked-pack',
  (n, fpp) => BlockedBloomFilter.create({ capacity: n, fpp }),
  (f) => (f as BlockedBloomFilter).hashes,
  false,
);

const splitBlockPacked = batchLibrary(
  'bloomkit SplitBlockBloomFilter, addBatch/hasBatch (keys packed beforehand)',
  'split-block-packed',
  (n, fpp) => SplitBlockBloomFilter.create({ capacity: n, fpp }),
  () => 8,
  true,
);

const splitBlock: BenchLibrary = {
  name: 'bloomkit SplitBlockBloomFilter (Parquet)',
  id: 'split-block',
  create(n, fpp) {
    const f = SplitBlockBloomFilter.create({ capacity: n, fpp });
    return {
      bits: f.bitSize,
      hashes: 8,
      addAll(keys, count) {
        for (let i = 0; i < count; i++) f.add(keys[i]!);
      },
      countHits(keys, count) {
        let hits = 0;
        for (let i = 0; i < count; i++) if (f.has(keys[i]!)) hits++;
        return hits;
      },
    };
  },
};

const bloomfilter: BenchLibrary = {
  name: 'bloomfilter@1.1',
  id: 'bloomfilter',
  create(n, fpp) {
    const f = PeerBloomFilter.withTargetError(n, fpp);
    return {
      bits: f.m,
      hashes: f.k,
      addAll(keys, count) {
        for (let i = 0; i < count; i++) f.add(keys[i]!);
      },
      countHits(keys, count) {
        let hits = 0;
        for (let i = 0; i < count; i++) if (f.test(keys[i]!)) hits++;
        return hits;
      },
    };
  },
};

const bloomFiltersLib: BenchLibrary = {
  name: 'bloom-filters@3',
  id: 'bloom-filters',
  maxKeys: 100_000,
  create(n, fpp) {
    const f = bloomFilters.BloomFilter.create(n, fpp);
    return {
      bits: f.size,
      hashes: f._nbHashes,
      addAll(keys, count) {
        for (let i = 0; i < count; i++) f.add(keys[i]!);
      },
      countHits(keys, count) {
        let hits = 0;
        for (let i = 0; i < count; i++) if (f.has(keys[i]!)) hits++;
        return hits;
      },
    };
  },
};

/** Every JavaScript library, in table order. */
export const LIBRARIES: readonly BenchLibrary[] = [
  classic,
  classicMany,
  classicBatch,
  blocked,
  blockedBatch,
  blockedPacked,
  blockedPackTimed,
  splitBlock,
  splitBlockPacked,
  bloomfilter,
  bloomFiltersLib,
];
