/**
 * `RuntimeFilter`: semi-join reduction across two systems. Instead of shipping the build side's key
 * list to the probe side (or every probe row to the join), ship a Bloom filter of the build keys;
 * the probe side drops every row whose key cannot match before sending it across.
 *
 * Rows sent = matching rows + about p × non-matching rows, i.e. a fraction of about
 * `m + p (1 - m)` of the probe table for a match rate m and false positive rate p (never fewer
 * than the matching rows: a Bloom filter has no false negatives). test/apps-runtime-filter.test.ts
 * measures it between two PostgreSQL databases: at m = 1% and p = 1%, 2.0% of the rows cross, and
 * the filter is a fraction of the size of the key list it replaces.
 *
 * Is it worth it? A filter that passes nearly every row costs a hash per row and saves nothing.
 * Engines check at run time: Impala and StarRocks disable a runtime filter that rejects too few
 * rows, and Spark only injects one when the build side is small and selective. `filter` does the
 * same: after the first `sampleSize` rows (default 10,000) it compares the fraction that passed
 * with `maxPassRate` (default 0.9); at or above it the filter disables itself, passes every later
 * row without checking, and `stats` says when and why.
 *
 * Keys are hashed by the filter's funnel (`'string'` by default; `'long'` for integer keys), so
 * both sides must agree on it: the bytes carry it.
 */

import { checkOptions, checkPositiveInteger, checkProbability, show } from '../errors.js';
import { BloomFilter } from '../filters/bloom/filter.js';
import type { ReadonlyMembershipFilter } from '../filters/filter.js';
import { fromBytes } from '../formats/registry.js';
import type { Funnel, Key } from '../hash/keys.js';
import { checkFunction } from './membership.js';

/** Options of {@link RuntimeFilter.build}. */
export interface RuntimeFilterBuildOptions extends RuntimeFilterOptions {
  /** False positive rate of the filter at the build side's key count, in (0, 1). */
  fpp: number;
  /** Key encoding (both sides use the same one). Default `'string'`. */
  funnel?: Funnel;
  /** Keys to size for. Default: the number of build keys given (duplicates included). */
  capacity?: number;
}

/** The effectiveness check of {@link RuntimeFilter.filter}. */
export interface RuntimeFilterOptions {
  /** Rows checked before the filter judges whether it is worth it. Default 10,000. */
  sampleSize?: number;
  /** Disable once at least this fraction of the sample passed, in (0, 1]. Default 0.9. */
  maxPassRate?: number;
}

/** What a runtime filter has done (a snapshot), over every `filter` call. */
export interface RuntimeFilterStats {
  /** Rows seen, checked or not. */
  readonly rows: number;
  /** Rows whose key was looked up in the filter. */
  readonly checked: number;
  /** Checked rows that passed (may match). */
  readonly passed: number;
  /** Checked rows dropped (certainly no match). */
  readonly dropped: number;
  /** Whether the filter stopped checking. */
  readonly disabled: boolean;
  /** The number of rows seen when it stopped (null while enabled). */
  readonly disabledAtRow: number | null;
  /** Why it stopped (null while enabled). */
  readonly reason: string | null;
}

/** A filter of the build side's join keys that drops probe rows which cannot match. */
export class RuntimeFilter<K extends Key = Key> {
  readonly #filter: ReadonlyMembershipFilter<K>;
  readonly #sampleSize: number;
  readonly #maxPassRate: number;
  #rows = 0;
  #checked = 0;
  #passed = 0;
  #disabledAtRow: number | null = null;
  #reason: string | null = null;

  /** Wraps a filter of the build keys (any in-memory type). */
  constructor(filter: ReadonlyMembershipFilter<K>, options: RuntimeFilterOptions = {}) {
    if (filter === null || typeof filter !== 'object' || typeof filter.has !== 'function') {
      throw new TypeError(`filter must be a MembershipFilter, got ${show(filter)}`);
    }
    checkOptions('options', options);
    this.#filter = filter;
    this.#sampleSize = checkPositiveInteger('options.sampleSize', options.sampleSize ?? 10_000);
    const rate = options.maxPassRate ?? 0.9;
    if (typeof rate !== 'number' || !(rate > 0 && rate <= 1)) {
      throw new RangeError(`options.maxPassRate must be in (0, 1], got ${show(rate)}`);
    }
    this.#maxPassRate = rate;
  }

  /**
   * Builds the filter of the build side's keys (a classic Bloom filter sized for their count at
   * `fpp`). An async source is read to its end first (to count it), so it should be the small
   * side of the join.
   */
  static async build<K extends Key>(
    keys: Iterable<K> | AsyncIterable<K>,
    options: RuntimeFilterBuildOptions,
  ): Promise<RuntimeFilter<K>> {
    checkOptions('options', options);
    const fpp = checkProbability('options.fpp', options.fpp);
    const list: K[] = [];
    for await (const key of keys) list.push(key);
    const capacity = checkPositiveInteger(
      'options.capacity',
      options.capacity ?? Math.max(1, list.length),
    );
    const filter = BloomFilter.create({ capacity, fpp, funnel: options.funnel ?? 'string' });
    for (const key of list) filter.add(key);
    return new RuntimeFilter(filter as unknown as ReadonlyMembershipFilter<K>, options);
  }

  /** The probe side's copy: a filter from `toBytes()` (any bloomkit filter's native bytes). */
  static fromBytes<K extends Key = Key>(
    bytes: Uint8Array,
    options: RuntimeFilterOptions = {},
  ): RuntimeFilter<K> {
    return new RuntimeFilter(fromBytes<K>(bytes), options);
  }

  /** The bytes to ship to the probe side (bloomkit's native format). */
  toBytes(): Uint8Array {
    return this.#filter.toBytes();
  }

  /** The filter itself. */
  get membership(): ReadonlyMembershipFilter<K> {
    return this.#filter;
  }

  /**
   * Yields the rows of `probeRows` whose key (`keyOf(row)`) may be among the build keys, in
   * order; drops the rest. Disables itself after the sample when it drops too little (see the
   * module comment); from then on every row is yielded.
   */
  async *filter<R>(
    probeRows: Iterable<R> | AsyncIterable<R>,
    keyOf: (row: R) => K,
  ): AsyncGenerator<R, void, undefined> {
    checkFunction('keyOf', keyOf);
    for await (const row of probeRows) {
      if (this.#pass(row, keyOf)) yield row;
    }
  }

  /**
   * The synchronous form of {@link filter} for rows already in memory (a page of a cursor):
   * the rows that may match, in order. Shares the counters and the effectiveness check.
   */
  filterPage<R>(rows: readonly R[], keyOf: (row: R) => K): R[] {
    checkFunction('keyOf', keyOf);
    const out: R[] = [];
    for (const row of rows) if (this.#pass(row, keyOf)) out.push(row);
    return out;
  }

  #pass<R>(row: R, keyOf: (row: R) => K): boolean {
    this.#rows++;
    if (this.#disabledAtRow !== null) return true;
    this.#checked++;
    const pass = this.#filter.has(keyOf(row));
    if (pass) this.#passed++;
    if (this.#checked === this.#sampleSize) {
      const rate = this.#passed / this.#checked;
      if (rate >= this.#maxPassRate) {
        this.#disabledAtRow = this.#rows;
        this.#reason =
          `${this.#passed} of the first ${this.#checked} rows passed ` +
          `(${(100 * rate).toFixed(1)}% >= maxPassRate ${(100 * this.#maxPassRate).toFixed(1)}%): ` +
          'checking costs more than it saves';
      }
    }
    return pass;
  }

  /** A snapshot of the counters. */
  get stats(): RuntimeFilterStats {
    return {
      rows: this.#rows,
      checked: this.#checked,
      passed: this.#passed,
      dropped: this.#checked - this.#passed,
      disabled: this.#disabledAtRow !== null,
      disabledAtRow: this.#disabledAtRow,
      reason: this.#reason,
    };
  }
}
