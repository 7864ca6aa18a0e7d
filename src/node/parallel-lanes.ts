/**
 * The chunk buffers of bloomkit's worker pool (node/parallel-pool.ts), in shared memory and reused:
 * each worker has two lanes (one chunk in flight in each), and a lane's buffers are sent to its
 * worker once, then only reused. The main thread copies a chunk's key bytes and offsets into a
 * free lane (two `memcpy`s, no loop per key, no allocation), and the worker rebases the offsets,
 * runs the batch, and writes a test's answers into the lane, where the main thread copies them
 * out. So the main thread's work per key is a few bytes of copying, and a worker's answer is a
 * number, not a buffer: with as many workers as cores, the main thread takes little from them.
 *
 * A lane is owned by one side at a time: the main thread until it posts the chunk, the worker
 * until its reply arrives; the message passing orders the memory accesses.
 */

import type { PackedKeys } from '../filters/filter.js';

/** A lane's buffers, as the worker receives them (views over SharedArrayBuffers). */
export interface LaneBuffers {
  bytes: Uint8Array;
  offsets: Uint32Array;
  ends: Uint32Array | null;
  found: Uint8Array;
}

/** What a worker needs to find a chunk in its lane. */
export interface LaneChunk {
  /** The lane's id (unique in the pool). */
  lane: number;
  /** Keys in the chunk. */
  count: number;
  /** The offset of the chunk's first key in the caller's batch (subtracted by the worker). */
  first: number;
  /** Bytes of the chunk. */
  byteLength: number;
  /** Whether the chunk has `ends` (records with separators between them). */
  hasEnds: boolean;
  /** The lane's buffers, when they are new to the worker (first use, or grown). */
  buffers?: LaneBuffers;
}

function sharedBytes(length: number): Uint8Array {
  return new Uint8Array(new SharedArrayBuffer(length));
}

function sharedWords(length: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(length * 4));
}

/** One lane on the main thread's side. */
export class Lane {
  busy = false;
  private buffers: LaneBuffers;
  private fresh = true;

  constructor(
    readonly id: number,
    private readonly maxKeys: number,
  ) {
    this.buffers = {
      bytes: sharedBytes(1 << 16),
      offsets: sharedWords(maxKeys + 1),
      ends: null,
      found: sharedBytes(maxKeys),
    };
  }

  /**
   * Copies keys [start, stop) of `batch` into this lane and describes them for the worker
   * (with the buffers when the worker has not seen them yet).
   */
  load(batch: PackedKeys, start: number, stop: number): LaneChunk {
    const { bytes, offsets, ends } = batch;
    const count = stop - start;
    if (count > this.maxKeys)
      throw new RangeError(`a lane holds ${this.maxKeys} keys, got ${count}`);
    const first = offsets[start]!;
    const last = offsets[stop]!;
    const b = this.buffers;
    if (b.bytes.length < last - first) {
      b.bytes = sharedBytes(Math.max(last - first, b.bytes.length * 2));
      this.fresh = true;
    }
    if (ends !== undefined && b.ends === null) {
      b.ends = sharedWords(this.maxKeys);
      this.fresh = true;
    }
    b.bytes.set(bytes.subarray(first, last));
    b.offsets.set(offsets.subarray(start, stop + 1));
    if (ends !== undefined) b.ends!.set(ends.subarray(start, stop));
    const chunk: LaneChunk = {
      lane: this.id,
      count,
      first,
      byteLength: last - first,
      hasEnds: ends !== undefined,
    };
    if (this.fresh) {
      chunk.buffers = { ...b };
      this.fresh = false;
    }
    return chunk;
  }

  /** The answers of the chunk last run in this lane ('has'). */
  found(count: number): Uint8Array {
    return this.buffers.found.subarray(0, count);
  }
}

/**
 * The worker's side: the chunk described by `chunk` as a batch of packed keys (offsets rebased
 * to the lane's bytes, in place), and the lane's answer buffer for it.
 */
export function openChunk(
  lanes: Map<number, LaneBuffers>,
  chunk: LaneChunk,
): { batch: PackedKeys; found: Uint8Array } {
  if (chunk.buffers !== undefined) lanes.set(chunk.lane, chunk.buffers);
  const b = lanes.get(chunk.lane);
  if (b === undefined) throw new Error(`lane ${chunk.lane} was never sent to this worker`);
  const { count, first } = chunk;
  const offsets = b.offsets.subarray(0, count + 1);
  const ends = chunk.hasEnds ? b.ends!.subarray(0, count) : undefined;
  if (first !== 0) {
    for (let i = 0; i <= count; i++) offsets[i] = offsets[i]! - first;
    if (ends !== undefined) for (let i = 0; i < count; i++) ends[i] = ends[i]! - first;
  }
  const bytes = b.bytes.subarray(0, chunk.byteLength);
  const batch: PackedKeys = ends === undefined ? { bytes, offsets } : { bytes, offsets, ends };
  return { batch, found: b.found.subarray(0, count) };
}
