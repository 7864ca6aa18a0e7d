/**
 * The option and inspection types of the scalable filter (see filter.ts for the structure).
 */

import type { Funnel } from '../../hash/keys.js';

/** Options of `ScalableBloomFilter.create`. */
export interface ScalableBloomFilterCreateOptions<F extends Funnel = Funnel> {
  /** Keys the first layer holds (c0): a positive safe integer. */
  capacity: number;
  /** Target false positive rate P for any number of keys, in (0, 1). */
  fpp: number;
  /** Growth factor s: each layer holds s times the keys of the previous one; 2 (default) or 4. */
  growth?: 2 | 4;
  /** Tightening ratio r in (0, 1): each layer's rate is r times the previous one's; default 0.9. */
  ratio?: number;
  /** Key encoding; default `'string'` (UTF-8). */
  funnel?: F;
}

/** What one layer is, for inspection. */
export interface ScalableLayerInfo {
  /** Keys this layer holds when full: c0·s^i. */
  readonly capacity: number;
  /** Keys added to this layer. */
  readonly count: number;
  /** The layer's rate at capacity: P0·r^i. */
  readonly fpp: number;
  /** Bits (m_i). */
  readonly bits: number;
  /** Hash functions (k_i). */
  readonly hashes: number;
}
