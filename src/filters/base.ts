/**
 * What every in-memory filter class shares, written once: the batch methods of
 * {@link MembershipFilter} in terms of the class's own `add` / `has` (and its funnel-bytes
 * paths for packed keys), JSON, and a one-line summary for `toString` and `console.log`.
 *
 * Hot paths stay in each class: `add` and `has` are the class's own methods (one call site per
 * class, so the engine keeps them monomorphic); a class overrides a batch method here when it
 * has a faster one (the blocked filter's `hasMany`, the batch kernels).
 */

import { mustBe, typeNameOf } from '../errors.js';
import type { Key } from '../hash/keys.js';
import { SATURATION_LIMIT, saturation as saturationRatio } from '../math.js';
import type { PackedKeys } from './filter.js';
import { checkKeys, checkPacked, keyEnd } from './packed.js';

// The platform's base64 (browsers, Node 16+); declared here because the core has no DOM types.
declare const btoa: (data: string) => string;
declare const atob: (data: string) => string;

/** `util.inspect` (Node) looks this symbol up; no Node import needed. */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** What `JSON.stringify(filter)` writes: the native bytes in base64 (read with `fromJSON`). */
export interface FilterJSON {
  /** Always `'bloomkit'`: marks the object as a serialized filter. */
  readonly format: 'bloomkit';
  /** The filter's class, for a person reading the JSON (the bytes say it too). */
  readonly type: string;
  /** Base64 of `toBytes()`. */
  readonly base64: string;
}

/** Base64 of `bytes` (the platform's `btoa`, present in browsers and Node 16+), in slices. */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  const SLICE = 0x6000; // multiple of 3, so slices encode independently
  for (let i = 0; i < bytes.length; i += SLICE) {
    out += btoa(String.fromCharCode(...bytes.subarray(i, i + SLICE)));
  }
  return out;
}

/** The bytes of a base64 string; a `TypeError` naming the problem for anything else. */
export function fromBase64(text: string): Uint8Array {
  if (typeof text !== 'string') throw mustBe('base64', 'a string', text, TypeError);
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new TypeError(`base64 is not valid base64 (${text.length} characters)`);
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * What every filter object shows a person: a one-line `toString` (also what `console.log` and
 * `util.inspect` print, instead of the bit array) and `toJSON` (base64 of the native bytes, read
 * back with `fromJSON`). Build-once types extend this directly; growable types via FilterBase.
 */
export abstract class DescribedFilter {
  abstract toBytes(): Uint8Array;
  /** The shape in a few words, e.g. `m=9600 k=7 funnel=string`. */
  protected abstract summary(): string;

  /** The native bytes in base64, so a filter survives a JSON API (read back with `fromJSON`). */
  toJSON(): FilterJSON {
    return {
      format: 'bloomkit',
      type: typeNameOf(this.constructor),
      base64: toBase64(this.toBytes()),
    };
  }

  /** One line: the class, its shape and how full it is. */
  toString(): string {
    return `${typeNameOf(this.constructor)} { ${this.summary()} }`;
  }

  [INSPECT](): string {
    return this.toString();
  }
}

/**
 * The read side every filter shares: `hasMany` and `hasBatch` in terms of the class's own `has`
 * and funnel-bytes test. Build-once types (a cascade, a binary fuse filter) extend this.
 */
export abstract class ReadonlyFilterBase<K extends Key = Key> extends DescribedFilter {
  abstract has(key: K): boolean;
  abstract estimatedCount(): number;
  /** Tests a key given as its funnel bytes (what `has` would hash). */
  protected abstract hasEncoded(bytes: Uint8Array): boolean;

  /** `has` of each key, in order; into `out` when given (see {@link ReadonlyMembershipFilter.hasMany}). */
  hasMany(keys: Iterable<K>, out?: boolean[]): boolean[] {
    checkKeys(keys);
    checkAnswers(out);
    if (Array.isArray(keys)) {
      // Preallocated: a push loop measured 4x the time of indexing a new Array(n).
      const found = answerArray(keys.length, out);
      for (let i = 0; i < keys.length; i++) found[i] = this.has(keys[i]);
      return found;
    }
    const found = out ?? [];
    found.length = 0;
    for (const key of keys) found.push(this.has(key));
    return found;
  }

  /** `has` of every packed key: `out[i]` is 1 or 0 (`out` must hold one byte per key). */
  hasBatch(batch: PackedKeys, out?: Uint8Array): Uint8Array {
    const count = checkPacked(batch);
    const result = checkOut(out, count);
    const { bytes, offsets } = batch;
    for (let i = 0; i < count; i++) {
      result[i] = this.hasEncoded(bytes.subarray(offsets[i]!, keyEnd(batch, i))) ? 1 : 0;
    }
    return result;
  }
}

/** Where a filter stands against the keys it was made for (see {@link FilterBase.saturation}). */
export interface Saturation {
  /**
   * Keys the filter's shape was made for: for the Bloom filters the design load (the keys that
   * set half its bits, `halfFillLoad` in math.ts), read from the shape, so a filter read from a
   * file knows it too; `Infinity` for a filter that grows (scalable).
   */
  readonly designCapacity: number;
  /** The false positive rate at `designCapacity` keys, by the type's own rate model. */
  readonly designFpp: number;
  /** The rate the filter's state implies now (`expectedFpp()`). */
  readonly currentFpp: number;
  /** `currentFpp / designFpp` (math.ts `saturation`): 1 at the design point, 0 when empty. */
  readonly ratio: number;
  /** `ratio` above `SATURATION_LIMIT` (10): time for a larger filter. */
  readonly saturated: boolean;
}

/**
 * The saturation figure of a filter designed for `design` (capacity and rate) whose rate is
 * `currentFpp` now: the ratio of the two (math.ts `saturation`), saturated past
 * `SATURATION_LIMIT`. {@link FilterBase.saturation} and the Deduper's figure both make it here.
 */
export function saturationAt(
  design: { readonly capacity: number; readonly fpp: number },
  currentFpp: number,
): Saturation {
  const ratio = saturationRatio(currentFpp, design.fpp);
  return {
    designCapacity: design.capacity,
    designFpp: design.fpp,
    currentFpp,
    ratio,
    saturated: ratio > SATURATION_LIMIT,
  };
}

/** The write side of a growable filter, on top of {@link ReadonlyFilterBase}. */
export abstract class FilterBase<K extends Key = Key> extends ReadonlyFilterBase<K> {
  abstract add(key: K): boolean;
  abstract clear(): void;
  /** The false positive rate the filter's state implies now. */
  abstract expectedFpp(): number;
  /**
   * The design point, read from the shape (O(1)): the keys it was made for and the false
   * positive rate there, `designCapacity` and `designFpp` of {@link Saturation}.
   */
  abstract designPoint(): { readonly capacity: number; readonly fpp: number };

  /**
   * How far past its design the filter is: its design capacity and rate, the rate now and their
   * ratio. A filter filled well past its capacity still answers (and never forgets a key), but
   * its false positive rate climbs toward 1; `saturated` says when it passed 10 times its design
   * rate, so an application can alert or move to a larger filter. Costs what `expectedFpp()`
   * costs (O(m/32) for the block filters).
   */
  saturation(): Saturation {
    return saturationAt(this.designPoint(), this.expectedFpp());
  }

  /** `saturation().saturated`: the rate passed 10 times the design rate. */
  isSaturated(): boolean {
    return this.saturation().saturated;
  }
  /** Adds a key given as its funnel bytes (what `add` would hash). */
  protected abstract addEncoded(bytes: Uint8Array): boolean;

  /**
   * Adds every key in order; returns how many were new (changed the filter). A key of the
   * wrong kind throws after the keys before it were added.
   */
  addMany(keys: Iterable<K>): number {
    checkKeys(keys);
    let added = 0;
    for (const key of keys) if (this.add(key)) added++;
    return added;
  }

  /**
   * Adds every packed key (funnel bytes, see {@link PackedKeys}) in order; returns how many were
   * new. With `out`, `out[i]` is 1 if key i was new, else 0 (as `add` key by key).
   */
  addBatch(batch: PackedKeys, out?: Uint8Array): number {
    const count = checkPacked(batch);
    const flags = out === undefined ? null : checkOut(out, count);
    const { bytes, offsets } = batch;
    let added = 0;
    for (let i = 0; i < count; i++) {
      const fresh = this.addEncoded(bytes.subarray(offsets[i]!, keyEnd(batch, i)));
      if (fresh) added++;
      if (flags !== null) flags[i] = fresh ? 1 : 0;
    }
    return added;
  }
}

/** `out` when given (a `Uint8Array` of at least `count` bytes, else a `RangeError`), or a new one. */
export function checkOut(out: Uint8Array | undefined, count: number): Uint8Array {
  const result = out ?? new Uint8Array(count);
  if (!(result instanceof Uint8Array) || result.length < count) {
    throw mustBe('out', `a Uint8Array of at least ${count} bytes`, out);
  }
  return result;
}

/** `found[i] === 1` for every i, in a preallocated array (a `push` loop costs twice as much). */
export function booleans(found: Uint8Array, into?: boolean[]): boolean[] {
  const out = answerArray(found.length, into);
  for (let i = 0; i < found.length; i++) out[i] = found[i] === 1;
  return out;
}

/** `out` with its length set to `n`, or a new array of `n` (for `hasMany`'s answers). */
function answerArray(n: number, out: boolean[] | undefined): boolean[] {
  if (out === undefined) return new Array<boolean>(n);
  out.length = n;
  return out;
}

/** `hasMany`'s `out`: an array, or absent. */
export function checkAnswers(out: unknown): void {
  if (out !== undefined && !Array.isArray(out)) throw mustBe('out', 'an array', out, TypeError);
}

/** The largest answer scratch kept between calls (one byte a key): 1 MiB. */
const ANSWER_SCRATCH_MAX = 1 << 20;
let answerScratch = new Uint8Array(0);

/**
 * Room for `n` one-byte answers that the caller reads before it returns: up to
 * {@link ANSWER_SCRATCH_MAX} keys, one buffer reused by every call of this thread (a batch
 * never calls another batch before it reads its answers), so a `hasMany` does not fault in a
 * new buffer each time; more keys get a new array. Zeroed.
 */
export function answerBytes(n: number): Uint8Array {
  if (n > ANSWER_SCRATCH_MAX) return new Uint8Array(n);
  if (answerScratch.length < n) {
    answerScratch = new Uint8Array(
      Math.min(ANSWER_SCRATCH_MAX, Math.max(n, 2 * answerScratch.length)),
    );
  }
  const bytes = answerScratch.subarray(0, n);
  bytes.fill(0);
  return bytes;
}

/** `12.5%`-style fill for summaries. */
export function percent(part: number, whole: number): string {
  if (whole === 0) return '0%';
  const p = (100 * part) / whole;
  return `${p < 0.1 && p > 0 ? p.toPrecision(2) : p.toFixed(1)}%`;
}
