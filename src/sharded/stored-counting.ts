/**
 * `StoredCountingBloomFilter`: a counting Bloom filter (Fan, Cao, Almeida and Broder, "Summary
 * Cache", IEEE/ACM ToN 2000) kept in a {@link ShardStore}, so keys can be removed;
 * `RedisCountingBloomFilter` is this filter in Redis (RedisBloom has no counting filter; this one
 * needs no module).
 *
 * Layout: the sharded layout of layout.ts with 4-bit counters instead of bits: S shards of c
 * counters each (c·4 ≤ `shardBits`, default 2^23 bits = 2^21 counters = 1 MiB), the key's shard
 * from its hash and its k counters inside it. A counter repeated among a key's k positions is
 * counted once (as bloomkit's in-memory `CountingBloomFilter` does), so add and remove stay
 * symmetric.
 *
 * - `add`: one atomic `addCounters` (saturating at 15); the key was new iff some counter went from
 *   0 to 1 (two clients adding the same key never both see it as new).
 * - `has`: one `readCounters`; true iff every counter is above 0.
 * - `remove`: one atomic `removeCounters`: only if every counter is above 0 are they decremented,
 *   so a remove is all or nothing and never drives a counter of another key below what it needs.
 *   A batch of removes sends each key at most once and stops at the first failure; its error's
 *   `batch` says which removes were applied, so a retry never removes a key twice.
 *
 * Saturation: counters stop at 15 and a saturated counter is never decremented. Past 15 the true
 * count is unknown; lowering it could reach 0 while keys that share the counter are still present
 * (a false negative). A stuck counter only costs stale positives.
 *
 * Guarantee and hazard: a key added (and not removed as often as added) answers true. Removing a
 * key that was never added but is a false positive takes counts from other keys, which may then
 * answer false; remove only keys you added.
 *
 * Rate: as the classic sharded filter of the same (capacity, fpp), since a counter is above 0
 * exactly where that filter would have a bit set. Memory: 4× the classic filter.
 */

import { COUNTER_MAX } from '../bits/counters.js';
import { show } from '../errors.js';
import type { AsyncMembershipFilter, KeyOf, ProgressOptions } from '../filters/filter.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { estimateCount } from '../math.js';
import { checkShardBits, DEFAULT_SHARD_BITS, type PlacedKeys, shardLayout } from './layout.js';
import { StoreOps, type StoreOptions } from './ops.js';
import type { ShardedBloomOptions, ShardedBloomShape } from './sharded-bloom.js';
import type {
  BatchCells,
  CellBatch,
  Epoch,
  Meta,
  ShardRead,
  ShardStore,
  WriteReply,
} from './store.js';
import { StoredShardedFilter, type WriteOp } from './stored-filter.js';
import {
  createStored,
  openStored,
  type StoredCreateOptions,
  type StoredFilterType,
} from './stored-open.js';

/** Options of {@link StoredCountingBloomFilter.create}. */
export interface StoredCountingBloomFilterOptions extends ShardedBloomOptions, StoredCreateOptions {
  /**
   * Most bits per shard (4 per counter): a multiple of 256 in [256, 2^32]; default 2^23 (1 MiB,
   * 2^21 counters).
   */
  shardBits?: number;
}

/**
 * The shape of a counting filter: `shardBits` is counters per shard and `maxShardBits` the limit
 * in counters (the option divided by 4); the metadata stores them as `bits` and `shardBits`.
 */
function countingShape(options: ShardedBloomOptions): ShardedBloomShape {
  const limitBits = checkShardBits('shardBits', options.shardBits ?? DEFAULT_SHARD_BITS);
  if (limitBits % 256 !== 0) {
    throw new RangeError(
      `shardBits must be a multiple of 256 for a counting filter (4 bits per counter), got ${show(limitBits)}`,
    );
  }
  const funnel = checkFunnel(options.funnel ?? 'string');
  const maxShardBits = limitBits / 4;
  const layout = shardLayout(options.capacity, options.fpp, maxShardBits);
  return { ...layout, capacity: options.capacity, fpp: options.fpp, maxShardBits, funnel };
}

/** The create/open descriptor of a counting filter class whose constructor is `make`. */
export function countingType<F>(
  make: (ops: StoreOps, name: string, meta: Meta) => F,
): StoredFilterType<F, ShardedBloomOptions> {
  return {
    kind: 'counting',
    shapeOf: countingShape,
    optionsOf: (s: ShardedBloomShape) => ({
      capacity: s.capacity,
      fpp: s.fpp,
      shardBits: s.maxShardBits * 4,
      funnel: s.funnel,
    }),
    make,
  };
}

/** The distinct counters among offsets[base, base + k). */
function distinctCounters(offsets: Float64Array, base: number, k: number): number[] {
  const out: number[] = [];
  outer: for (let i = 0; i < k; i++) {
    const o = offsets[base + i]!;
    for (let j = 0; j < i; j++) if (offsets[base + j] === o) continue outer;
    out.push(o);
  }
  return out;
}

/** The smallest counter of a read (header first). */
function minOf(read: ShardRead): number {
  let min = COUNTER_MAX;
  for (let i = 2; i < read.length; i++) min = Math.min(min, read[i]!);
  return min;
}

export class StoredCountingBloomFilter<K extends Key = Key>
  extends StoredShardedFilter<K>
  implements AsyncMembershipFilter<K>
{
  private static readonly type = countingType(
    (ops, name, meta) => new StoredCountingBloomFilter(ops, name, meta),
  );

  protected constructor(ops: StoreOps, name: string, meta: Meta) {
    super(ops, name, meta, 'counting');
  }

  /**
   * Creates the filter `name` in `store` sized for (capacity, fpp), or opens it if it exists with
   * the same parameters; the store's mismatch error if it exists with others or is of another kind.
   */
  static create<F extends Funnel = 'string'>(
    store: ShardStore,
    name: string,
    options: StoredCountingBloomFilterOptions & { funnel?: F },
  ): Promise<StoredCountingBloomFilter<KeyOf<F>>> {
    const ops = () => new StoreOps(store, `StoredCountingBloomFilter ${show(name)}`, options);
    return createStored(StoredCountingBloomFilter.type, ops, name, options) as Promise<
      StoredCountingBloomFilter<KeyOf<F>>
    >;
  }

  /** Opens the existing filter `name` in `store`; the store's not-found error if there is none. */
  static open<K extends Key = Key>(
    store: ShardStore,
    name: string,
    options: StoreOptions = {},
  ): Promise<StoredCountingBloomFilter<K>> {
    const ops = () => new StoreOps(store, `StoredCountingBloomFilter ${show(name)}`, options);
    return openStored(StoredCountingBloomFilter.type, ops, name) as Promise<
      StoredCountingBloomFilter<K>
    >;
  }

  /** Total counters. */
  get counterCount(): number {
    return this.shape.shards * this.shape.shardBits;
  }

  protected writeCells(
    op: WriteOp,
    ref: string,
    epoch: Epoch,
    offsets: Float64Array,
    base: number,
    first: boolean,
  ): Promise<WriteReply> {
    // A counter a key probes twice is counted once, by add and by remove alike.
    const cells = distinctCounters(offsets, base, this.shape.hashes);
    if (op === 'remove') return this.store.removeCounters(ref, epoch, cells);
    return this.store.addCounters(ref, epoch, cells, first);
  }

  protected readCells(ref: string, offsets: Float64Array, base: number): Promise<ShardRead> {
    return this.store.readCounters(ref, distinctCounters(offsets, base, this.shape.hashes));
  }

  /** The window's distinct counters, key by key. */
  protected override batchOf(placed: PlacedKeys): { cells: BatchCells; batch: CellBatch } {
    const n = placed.count;
    const k = this.shape.hashes;
    const offsets = placed.offsets;
    const cells = new Float64Array(n * k);
    const starts = new Uint32Array(n + 1);
    let p = 0;
    for (let j = 0; j < n; j++) {
      starts[j] = p;
      const base = j * k;
      outer: for (let i = 0; i < k; i++) {
        const o = offsets[base + i]!;
        for (let q = starts[j]!; q < p; q++) if (cells[q] === o) continue outer;
        cells[p++] = o;
      }
    }
    starts[n] = p;
    return { cells: 'counters', batch: { count: n, refs: this.refsOf(placed), cells, k, starts } };
  }

  /** Present iff every counter of the read (header first) is above 0. */
  protected present(read: ShardRead): boolean {
    return minOf(read) > 0;
  }

  /**
   * The smallest of `key`'s counters: 0 means certainly absent; otherwise an upper estimate of how
   * many times it was added (collisions only add), where 15 means "15 or more".
   */
  async count(key: K): Promise<number> {
    return this.readOne('count', key, minOf);
  }

  /**
   * Removes one occurrence of `key`, atomically: if any of its counters is 0 nothing changes and
   * the result is false; otherwise every counter below 15 goes down by one and the result is true.
   * Only remove keys that were added (see the class comment).
   */
  remove(key: K): Promise<boolean> {
    return this.removeOne(key);
  }

  /** `remove` for every key, a window at a time (see `removeEach`: each key sent at most once). */
  removeMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]> {
    return this.removeEach(keys, options);
  }

  /** Estimated number of distinct keys: from the counters above 0 (as the classic filter's bits). */
  async estimatedCount(): Promise<number> {
    return this.ops.op('estimatedCount', async () => {
      let nonZero = 0;
      await this.eachShard(this.shape.shardBits / 2, (_, id, b) => {
        if (id === 0) return;
        for (let i = 0; i < b.length; i++) {
          const v = b[i]!;
          if (v & 0xf0) nonZero++;
          if (v & 0x0f) nonZero++;
        }
      });
      return estimateCount(nonZero, this.counterCount, this.hashes);
    });
  }
}
