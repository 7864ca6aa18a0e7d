/**
 * A scalable filter's layers in a shard store (scalable-chain.ts runs the algorithm): how a
 * layer is addressed, and a window's keys read from, added to and checked for a seal in one
 * layer, each sent in one turn (as one batch operation where the store has it).
 */

import type { ShardRefs } from './epoch.js';
import type { Locator } from './layout.js';
import { settleAll } from './ops.js';
import type { RedisLayerSpec } from './scalable-layers.js';
import { type CellBatch, cellSpan, type Epoch, type ShardRead, type ShardStore } from './store.js';

/** A layer with what it takes to address it. */
export interface Layer extends RedisLayerSpec {
  readonly index: number;
  readonly locator: Locator;
  readonly refs: ShardRefs;
}

/** The cells of key i of `b`, a batch made by {@link placeIn} (its cells a Float64Array). */
function cellsOf(b: CellBatch, i: number): Float64Array {
  return (b.cells as Float64Array).subarray(...cellSpan(b, i));
}

/** The keys hashed to `hs` placed in `layer`: each key's shard and k cells. */
export function placeIn(layer: Layer, hs: readonly Int32Array[]): CellBatch {
  const n = hs.length;
  const k = layer.hashes;
  const refs = new Array<string>(n);
  const cells = new Float64Array(n * k);
  for (let i = 0; i < n; i++) {
    refs[i] = layer.refs.get(layer.locator.place(hs[i]!));
    cells.set(layer.locator.offsets, i * k);
  }
  return { count: n, refs, cells, k };
}

/**
 * Reads the cells (header first) of the keys hashed to `hs` in `layer` (as one `readBatch` when
 * the store has it). Rejects with the first failure.
 */
export async function readLayer(
  store: ShardStore,
  layer: Layer,
  hs: readonly Int32Array[],
): Promise<ShardRead[]> {
  const b = placeIn(layer, hs);
  const reads = new Array<ShardRead | undefined>(b.count);
  const failure = store.readBatch
    ? await store.readBatch('bits', b, reads)
    : await settleAll(b.count, (i) => store.readBits(b.refs[i]!, cellsOf(b, i)), reads);
  if (failure !== undefined) throw failure;
  return reads as ShardRead[];
}

/**
 * `scalableAdd` of the keys `b` placed in `layer` (as one `scalableAddBatch` when the store has
 * it), in window order. Rejects with the first failure.
 */
export async function addLayer(
  store: ShardStore,
  epoch: Epoch,
  layer: Layer,
  b: CellBatch,
): Promise<number[]> {
  const replies = new Array<number | undefined>(b.count);
  const share = layer.share;
  const failure = store.scalableAddBatch
    ? await store.scalableAddBatch(b, epoch, share, replies)
    : await settleAll(
        b.count,
        (i) => store.scalableAdd(b.refs[i]!, epoch, share, cellsOf(b, i)),
        replies,
      );
  if (failure !== undefined) throw failure;
  return replies as number[];
}

/** Whether the shard in `layer` of each key of `hs` is sealed: one check per distinct shard. */
export async function sealedOf(
  store: ShardStore,
  layer: Layer,
  hs: readonly Int32Array[],
): Promise<boolean[]> {
  const shards = hs.map((h) => layer.locator.place(h));
  const distinct = [...new Set(shards)];
  const states = await Promise.all(distinct.map((s) => store.layerState(layer.refs.get(s))));
  const sealed = new Map(distinct.map((s, i) => [s, states[i]!.sealed]));
  return shards.map((s) => sealed.get(s)!);
}
