/**
 * Keys in memory handed to worker threads: packed a chunk at a time (at most {@link KEY_CHUNK}
 * keys) into reused shared buffers, which the worker reads where they lie: no copy, no transfer,
 * and no fresh memory per chunk (memory touched for the first time costs a page fault per 4 KiB,
 * about 12 µs each on a busy virtual machine: a fresh 2 MB buffer per chunk cost more than
 * packing into it). Packing is the only per-key work the main thread does, in {@link packChunk}
 * (the one place keys are encoded for the workers).
 *
 * A chunk's buffers are in use until {@link KeyChunks.release}; released buffers are reused, so
 * with at most three chunks in flight per worker (`HANDED_DEPTH`) and one read ahead,
 * `3 × workers + 2` pairs are ever made.
 */
import type { PackedKeys } from '../filters/filter.js';
import type { Funnel, Key } from '../hash/keys.js';
import { encodeKeyInto } from '../hash/keys.js';
import { packStringsInto, stringTarget } from '../hash/pack.js';

/** Keys per chunk (one message to a worker). */
export const KEY_CHUNK = 65_536;

/** A chunk's shared buffers: key bytes (grown as needed) and offsets. */
interface KeyBuffers {
  bytes: Uint8Array;
  offsets: Uint32Array;
}

/**
 * Packs `keys[start, end)` with `funnel` into `into` (its bytes grown when they do not fit);
 * returns the packed keys as views of `into`. The same bytes as `packKeys` (hash/pack.ts).
 */
export function packChunk(
  funnel: Funnel,
  keys: readonly Key[],
  start: number,
  end: number,
  into: KeyBuffers,
): PackedKeys {
  const offsets = into.offsets;
  let i = start;
  let p = 0;
  offsets[0] = 0;
  while (i < end) {
    if (funnel === 'string') {
      // Strings packed back to back (hash/pack.ts: the same bytes as packKeys).
      i += packStringsInto(keys, i, end, into.bytes, offsets.subarray(i - start), p);
      p = offsets[i - start]!;
      if (i === end) break;
      if (typeof keys[i] !== 'string') encodeKeyInto(funnel, keys[i]!, into.bytes, p); // throws
    } else {
      const len = encodeKeyInto(funnel, keys[i]!, into.bytes, p);
      if (len >= 0) {
        p += len;
        offsets[++i - start] = p;
        continue;
      }
    }
    // Key i did not fit: twice the room, the packed bytes kept.
    const key = keys[i];
    const need = typeof key === 'string' ? 3 * key.length + 16 : 64;
    const size = Math.max(2 * into.bytes.length, p + need + 64);
    const grown = stringTarget(new SharedArrayBuffer(size) as unknown as ArrayBuffer, 0, size);
    grown.set(into.bytes.subarray(0, p));
    into.bytes = grown;
  }
  return { bytes: into.bytes.subarray(0, p), offsets: offsets.subarray(0, end - start + 1) };
}

/** The reused buffers of chunks of keys. */
export class KeyChunks {
  private readonly free: KeyBuffers[] = [];
  private readonly inUse = new Map<PackedKeys, KeyBuffers>();

  constructor(private readonly funnel: Funnel) {}

  /** `keys[start, end)` (at most {@link KEY_CHUNK} keys) packed into free buffers. */
  pack(keys: readonly Key[], start: number, end: number): PackedKeys {
    const buffers = this.free.pop() ?? {
      bytes: stringTarget(
        new SharedArrayBuffer(KEY_CHUNK * 48) as unknown as ArrayBuffer,
        0,
        KEY_CHUNK * 48,
      ),
      offsets: new Uint32Array(new SharedArrayBuffer((KEY_CHUNK + 1) * 4)),
    };
    const batch = packChunk(this.funnel, keys, start, end, buffers);
    this.inUse.set(batch, buffers);
    return batch;
  }

  /** Gives the buffers of `batch` back for reuse (once its worker is done with it). */
  release(batch: PackedKeys): void {
    const buffers = this.inUse.get(batch);
    if (buffers === undefined) return;
    this.inUse.delete(batch);
    this.free.push(buffers);
  }
}
