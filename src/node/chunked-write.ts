/**
 * Writing a chunked file's records: the key loop of a build (with progress and abort checks),
 * positional writes, and a run of chunk records filled in memory and written where they belong
 * (chunks without keys are left as holes; see chunked-format.ts).
 */

import type { FileHandle } from 'node:fs/promises';
import { show } from '../errors.js';
import type { ProgressOptions } from '../filters/filter.js';
import type { Key } from '../hash/keys.js';
import { LITTLE_ENDIAN } from '../hash/murmur3.js';
import type { ChunkedPlan } from './chunked-build.js';
import { type ChunkedLayout, chunkCrc, chunkOffset, chunkStride } from './chunked-format.js';
import { throwIfAborted } from './progress.js';

/** Keys between two progress reports and abort checks. */
export const PROGRESS_EVERY = 65536;

/**
 * Iterates a sync or async iterable, awaiting `each` only when it returns a promise; every
 * {@link PROGRESS_EVERY} keys (and at the end) reports progress and checks the signal.
 */
export async function forEachKey(
  keys: Iterable<Key> | AsyncIterable<Key>,
  progress: ProgressOptions,
  each: (key: Key) => void | Promise<void>,
): Promise<void> {
  const { signal, onProgress } = progress;
  let seen = 0;
  const step = (): void => {
    throwIfAborted(signal);
    onProgress?.(seen);
  };
  if (keys !== null && typeof keys === 'object' && Symbol.asyncIterator in keys) {
    for await (const key of keys as AsyncIterable<Key>) {
      const r = each(key);
      if (r !== undefined) await r;
      if (++seen % PROGRESS_EVERY === 0) step();
    }
    step();
    return;
  }
  if (keys === null || typeof keys !== 'object' || !(Symbol.iterator in keys)) {
    throw new TypeError(`keys must be an iterable or async iterable, got ${show(keys)}`);
  }
  for (const key of keys as Iterable<Key>) {
    const r = each(key);
    if (r !== undefined) await r;
    if (++seen % PROGRESS_EVERY === 0) step();
  }
  step();
}

export async function writeAt(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

/** Reverses the bytes of every u32 (big-endian hosts only: the file is little-endian). */
function swap32(bytes: Uint8Array): void {
  for (let i = 0; i + 3 < bytes.length; i += 4) {
    const a = bytes[i]!;
    const b = bytes[i + 1]!;
    bytes[i] = bytes[i + 3]!;
    bytes[i + 1] = bytes[i + 2]!;
    bytes[i + 2] = b;
    bytes[i + 3] = a;
  }
}

/**
 * A run of consecutive chunk records in memory (stride B + 8): bits are set in place, then the
 * counts and CRCs are filled in and the run is written with one positional write.
 */
export class ChunkGroup {
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  readonly counts: Uint32Array;
  readonly strideWords: number;
  first = 0;
  size = 0;

  constructor(
    readonly layout: Pick<ChunkedLayout, 'chunkBytes'>,
    capacity: number,
  ) {
    const stride = chunkStride(layout.chunkBytes);
    this.bytes = new Uint8Array(capacity * stride);
    this.words = new Uint32Array(this.bytes.buffer);
    this.counts = new Uint32Array(capacity);
    this.strideWords = stride / 4;
  }

  reset(first: number, size: number): void {
    this.first = first;
    this.size = size;
    this.bytes.fill(0, 0, size * this.strideWords * 4);
    this.counts.fill(0);
  }

  count(local: number): void {
    if (this.counts[local] === 0xffffffff) {
      throw new RangeError(`chunk ${this.first + local} received more than 2^32 − 1 keys`);
    }
    this.counts[local]!++;
  }

  /**
   * Finishes the records (count, CRC) and writes them at their place in the file: each run of
   * chunks that hold keys in one positional write; empty chunks are left as holes.
   */
  async write(fh: FileHandle, layout: ChunkedLayout, allCounts: Uint32Array | null): Promise<void> {
    const b = layout.chunkBytes;
    const stride = chunkStride(b);
    if (!LITTLE_ENDIAN) swap32(this.bytes.subarray(0, this.size * stride));
    const v = new DataView(this.bytes.buffer);
    for (let j = 0; j < this.size; j++) {
      if (allCounts !== null) allCounts[this.first + j] = this.counts[j]!;
      if (this.counts[j] === 0) continue; // not written
      const start = j * stride;
      v.setUint32(start + b, this.counts[j]!, true);
      v.setUint32(
        start + b + 4,
        chunkCrc(this.bytes.subarray(start, start + b + 4), this.first + j),
        true,
      );
    }
    for (let j = 0; j < this.size; ) {
      if (this.counts[j] === 0) {
        j++;
        continue;
      }
      let end = j + 1;
      while (end < this.size && this.counts[end] !== 0) end++;
      await writeAt(
        fh,
        this.bytes.subarray(j * stride, end * stride),
        chunkOffset(layout, this.first + j),
      );
      j = end;
    }
  }
}

/** The layout of a finished build: the plan, the chunks written and the keys they hold. */
export function layoutOf(plan: ChunkedPlan, chunks: number, keys: number): ChunkedLayout {
  return { ...plan, chunks, keys, indexLength: 8 * chunks };
}
