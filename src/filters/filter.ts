/**
 * What every bloomkit filter has in common, so that one conformance suite can check them all.
 */

import { IncompatibleFiltersError, show, typeNameOf } from '../errors.js';
import type { Funnel, Key } from '../hash/keys.js';

/**
 * The key type a funnel accepts, so that `BloomFilter.create({ funnel: 'long' })` is a
 * `BloomFilter<bigint | number>` and `ids.add('42')` does not compile.
 */
export type KeyOf<F extends Funnel> = F extends 'string' | 'utf16'
  ? string
  : F extends 'int'
    ? number
    : F extends 'long'
      ? bigint | number
      : F extends 'bytes'
        ? Uint8Array
        : Key;

/**
 * Keys packed in one buffer, for the batch paths (`addBatch` / `hasBatch`): key i is
 * `bytes.subarray(offsets[i], ends?.[i] ?? offsets[i + 1])`, so `offsets` has one entry more
 * than there are keys. The bytes are the funnel's bytes (what the filter hashes): UTF-8 for `'string'` (Java's
 * `?` for a lone surrogate when packed from JavaScript strings), UTF-16LE code units for
 * `'utf16'`, 4 / 8 bytes little-endian for `'int'` / `'long'`, the bytes themselves for
 * `'bytes'`. Build one with `packKeys` or split a buffer of lines with `splitRecords`.
 */
export interface PackedKeys {
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
  /**
   * When present, key i ends at `ends[i]` instead of `offsets[i + 1]` (so records with
   * separators between them can be viewed in place: `splitRecords` fills it).
   */
  readonly ends?: Uint32Array;
}

/**
 * The part of `AbortSignal` bloomkit reads (declared here because the core is typed without DOM
 * or Node types; a real `AbortSignal` fits).
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
}

/** Options of a long operation: cancel it, or hear how far it got. */
export interface ProgressOptions {
  /** Aborting stops the operation at the next step; it then throws `signal.reason`. */
  signal?: AbortSignalLike;
  /** Called now and then with the number of items done (and the total, when known). */
  onProgress?: (done: number, total?: number) => void;
}

/**
 * What every in-memory filter answers, including the build-once types (a filter cascade, a
 * binary fuse filter) that cannot add after they are built.
 *
 * Guarantee: `has` never answers false for a key the filter holds.
 */
export interface ReadonlyMembershipFilter<K extends Key = Key> {
  /** The key encoding the filter was built for; keys of another kind are a `TypeError`. */
  readonly funnel: Funnel;
  /** False if `key` was certainly never added; true if it probably was. */
  has(key: K): boolean;
  /**
   * `has` of each key, in order. With `out`, the answers go into that array (its length set to
   * the number of keys) and it is returned: an array reused from call to call spares a new one
   * per call (a new array of a million answers costs about 25 ms in fresh memory, a reused one
   * about 1 ms).
   */
  hasMany(keys: Iterable<K>, out?: boolean[]): boolean[];
  /**
   * `has` of each packed key: `out[i]` is 1 or 0 (a new array when `out` is not given). Keys
   * are hashed where their bytes lie; see {@link PackedKeys}.
   */
  hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array;
  /** Estimated number of distinct keys held. */
  estimatedCount(): number;
  /** bloomkit's native binary form (see docs/FORMAT.md). */
  toBytes(): Uint8Array;
}

/** An approximate set that can grow: `has` never answers false for a key that was added. */
export interface MembershipFilter<K extends Key = Key> extends ReadonlyMembershipFilter<K> {
  /** Adds `key`; true if the filter changed (the key was certainly new), as Guava's `put`. */
  add(key: K): boolean;
  /** Adds every key; returns how many of them were new (changed the filter). */
  addMany(keys: Iterable<K>): number;
  /**
   * Adds every packed key, in order; returns how many were new. See {@link PackedKeys}. With
   * `out` (at least one byte per key), `out[i]` is 1 if key i was new (it changed the filter, as
   * `add` returning true) and 0 if not: exactly the answers of `add` called key by key, so a key
   * repeated within the batch is new at most once (its later copies find the bits the first one
   * set).
   */
  addBatch(batch: PackedKeys, out?: Uint8Array): number;
  /** Forgets every key. */
  clear(): void;
}

/** A filter that supports deletion. */
export interface DeletableFilter<K extends Key = Key> extends MembershipFilter<K> {
  /** Removes one occurrence of `key`; false (and no change) if it cannot be present. */
  remove(key: K): boolean;
}

/**
 * The same contract as {@link MembershipFilter} for filters whose bits live elsewhere (Redis,
 * a chunked file): every method returns a promise, batches accept async iterables, and long
 * batches take {@link ProgressOptions}.
 */
export interface AsyncMembershipFilter<K extends Key = Key> {
  readonly funnel: Funnel;
  add(key: K): Promise<boolean>;
  has(key: K): Promise<boolean>;
  /** Adds every key; resolves to how many were new. */
  addMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<number>;
  /** `has` of each key, in order. */
  hasMany(keys: Iterable<K> | AsyncIterable<K>, options?: ProgressOptions): Promise<boolean[]>;
  estimatedCount(): Promise<number>;
  /** Forgets every key (types that cannot, such as a chunked file, leave this out). */
  clear?(): Promise<void>;
}

/** An async filter that only answers (a chunked file opened for reading). */
export type ReadonlyAsyncMembershipFilter<K extends Key = Key> = Pick<
  AsyncMembershipFilter<K>,
  'funnel' | 'has' | 'hasMany' | 'estimatedCount'
>;

/** A property two filters must share to be combined: [what they must have, this value, other's]. */
export type Requirement = readonly [must: string, mine: unknown, theirs: unknown];

/**
 * Why `self` and `other` cannot be combined (union, intersection), or null if they can: `other`
 * must be another instance of `type` and meet every requirement. The reason names the first
 * difference and both values, in Guava's words (`BloomFilters must have equal funnels (a != b)`).
 */
export function incompatibility(
  type: abstract new (...args: never[]) => object,
  self: object,
  other: unknown,
  requirements: (other: never) => readonly Requirement[],
): string | null {
  const name = typeNameOf(type);
  if (!(other instanceof type)) return `other must be a ${name}, got ${show(other)}`;
  if (other === self) return `cannot combine a ${name} with itself`;
  for (const [must, mine, theirs] of requirements(other as never)) {
    if (mine !== theirs) return `${name}s must ${must} (${String(mine)} != ${String(theirs)})`;
  }
  return null;
}

/**
 * Throws what {@link incompatibility} finds: a `TypeError` when `other` is not a `type` at all,
 * else an `IncompatibleFiltersError`.
 */
export function checkCombinable(
  type: abstract new (...args: never[]) => object,
  self: object,
  other: unknown,
  requirements: (other: never) => readonly Requirement[],
): void {
  const problem = incompatibility(type, self, other, requirements);
  if (problem === null) return;
  if (!(other instanceof type)) throw new TypeError(problem);
  throw new IncompatibleFiltersError(problem);
}
