/**
 * A hash-routed build larger than its memory budget: pass 1 hashes each key once and appends its
 * 16-byte hash (h1, h2; all the filter needs) to one of at most 128 bucket files, a bucket being a
 * contiguous range of chunks; pass 2 takes each bucket in turn, fills its chunks in groups of as
 * many as fit in half of `memoryBytes` (reading the bucket file once per group) and writes them.
 * Memory stays about `memoryBytes` whatever the file size, at the cost of 16 bytes of temporary
 * disk per key (the caller deletes `spillDir`).
 */

import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProgressOptions } from '../filters/filter.js';
import { hashKey, views } from '../hash/hasher.js';
import type { Key } from '../hash/keys.js';
import { Modulus, mitz64Indexes } from '../hash/strategies.js';
import type { ChunkedPlan } from './chunked-build.js';
import { type ChunkedLayout, chunkStride, hashChunk } from './chunked-format.js';
import { ChunkGroup, forEachKey, layoutOf } from './chunked-write.js';
import { throwIfAborted } from './progress.js';

const MAX_BUCKETS = 128;
const READ_BYTES = 1 << 20;

export async function buildHashSpilled(
  fh: FileHandle,
  plan: ChunkedPlan,
  keys: Iterable<Key> | AsyncIterable<Key>,
  memoryBytes: number,
  spillDir: string,
  progress: ProgressOptions,
): Promise<{ layout: ChunkedLayout; counts: Uint32Array; firstKeys: Uint8Array[] }> {
  const { funnel, hashes: k, chunks } = plan;
  const stride = chunkStride(plan.chunkBytes);
  const perGroup = Math.max(1, Math.floor(memoryBytes / 2 / stride));
  const buckets = Math.min(MAX_BUCKETS, Math.ceil(chunks / perGroup));
  const chunksPerBucket = Math.ceil(chunks / buckets);
  const bufferBytes = Math.min(
    1 << 20,
    Math.max(4096, Math.floor(memoryBytes / 2 / buckets / 16) * 16),
  );
  const files: FileHandle[] = [];
  const buffers: Int32Array[] = [];
  const fill = new Uint32Array(buckets);
  let total = 0;
  try {
    for (let b = 0; b < buckets; b++) {
      files.push(await open(join(spillDir, `bucket-${b}`), 'w+'));
      buffers.push(new Int32Array(bufferBytes / 4));
    }
    const flush = async (b: number): Promise<void> => {
      const buf = buffers[b]!;
      const bytes = new Uint8Array(buf.buffer, 0, fill[b]! * 4);
      let done = 0;
      while (done < bytes.length) {
        const { bytesWritten } = await files[b]!.write(bytes, done, bytes.length - done);
        done += bytesWritten;
      }
      fill[b] = 0;
    };
    // Pass 1: hash each key once, append its hash to its bucket.
    await forEachKey(keys, progress, (key) => {
      hashKey(funnel, key);
      const h = views.hash;
      const b = Math.floor(hashChunk(h, chunks) / chunksPerBucket);
      const buf = buffers[b]!;
      let f = fill[b]!;
      buf[f] = h[0]!;
      buf[f + 1] = h[1]!;
      buf[f + 2] = h[2]!;
      buf[f + 3] = h[3]!;
      f += 4;
      fill[b] = f;
      total++;
      if (f === buf.length) return flush(b);
      return undefined;
    });
    for (let b = 0; b < buckets; b++) await flush(b);
    buffers.length = 0;
    // Pass 2: per bucket, per group of chunks that fits in memory, replay the bucket's hashes.
    const layout = layoutOf(plan, chunks, total);
    const counts = new Uint32Array(chunks);
    const group = new ChunkGroup(plan, Math.min(perGroup, chunksPerBucket));
    const mod = new Modulus(plan.chunkBytes * 8);
    const idx = new Float64Array(k);
    const h = new Int32Array(4);
    const read = new Int32Array(READ_BYTES / 4);
    const readBytes = new Uint8Array(read.buffer);
    const words = group.words;
    const strideWords = group.strideWords;
    for (let b = 0; b < buckets; b++) {
      const end = Math.min(chunks, (b + 1) * chunksPerBucket);
      for (let first = b * chunksPerBucket; first < end; first += perGroup) {
        throwIfAborted(progress.signal);
        const size = Math.min(perGroup, end - first);
        group.reset(first, size);
        let position = 0;
        for (;;) {
          const { bytesRead } = await files[b]!.read(readBytes, 0, READ_BYTES, position);
          if (bytesRead === 0) break;
          const usable = bytesRead - (bytesRead % 16); // whole records only
          position += usable;
          for (let r = 0; r < usable / 4; r += 4) {
            h[0] = read[r]!;
            h[1] = read[r + 1]!;
            h[2] = read[r + 2]!;
            h[3] = read[r + 3]!;
            const local = hashChunk(h, chunks) - first;
            if (local < 0 || local >= size) continue;
            mitz64Indexes(h, k, mod, idx);
            const base = local * strideWords;
            for (let i = 0; i < k; i++) {
              const j = idx[i]!;
              words[base + ((j / 32) | 0)]! |= 1 << (j & 31);
            }
            group.count(local);
          }
        }
        await group.write(fh, layout, counts);
      }
    }
    return { layout, counts, firstKeys: [] };
  } finally {
    for (const f of files) await f.close().catch(() => {});
  }
}
