/**
 * The hand-over loop of a build on several threads, shared by `buildParallel` (node/parallel.ts)
 * and the command's `add --threads` (cli/threads.ts): each chunk goes to a worker with room, and
 * the calling thread adds the chunks none has room for. Kept apart from `buildParallel` so the
 * command loads it without the codec table `buildParallel` sizes its filters with.
 */
import type { PackedKeys } from '../filters/filter.js';
import type { FilterWorkerPool } from './parallel-pool.js';
import { type TextChunk, TextSplitter } from './parallel-text.js';
import type { SharedFilter } from './shared-handle.js';

/**
 * What a build reads: text chunks of a file (with `release`: the buffer may be reused), or
 * packed chunks of keys.
 */
export type Chunk = { text: TextChunk; release(): void } | { packed: PackedKeys; release(): void };

/**
 * The chunks of `chunks`, each next one asked for as soon as one is handed out: its read (a file
 * read on libuv's thread pool) goes on while this thread adds or hands out the one before, so a
 * worker with room finds a chunk ready. At most one chunk more is read than handed out. For
 * files only: keys in memory are packed on this thread, where asking ahead gains nothing and
 * costs one more set of chunk buffers per build (3 MiB of fresh pages).
 */
export async function* readAhead(chunks: AsyncGenerator<Chunk>): AsyncGenerator<Chunk> {
  let next = chunks.next();
  try {
    for (;;) {
      const got = await next;
      if (got.done === true) return;
      next = chunks.next();
      next.catch(() => {}); // awaited on the next turn, or dropped when the caller stops
      yield got.value;
    }
  } finally {
    // Stopped early: the source ends (a file is closed) once the chunk read ahead is in.
    await chunks.return(undefined);
  }
}

/** What {@link buildTogether} hands chunks to: a pool's `tryAdd*` (null: no worker has room). */
export type ChunkTaker = Pick<FilterWorkerPool, 'tryAddText' | 'tryAddPacked'>;

/**
 * Adds every chunk: on a worker of `pool()` when one has room (the pool once it has started, or
 * null before and without one), else on this thread into `here`. So this thread adds from the
 * first chunk on while the workers start, keeps every worker fed (three chunks in flight each;
 * callers read a file's next chunk ahead: {@link readAhead}),
 * and never waits for one: a slow worker start never makes the build slower than this thread
 * alone would be. `helped`: workers may come, so this thread yields to the event loop after
 * each chunk it adds (their answers are events). `progress(records, added)` follows each chunk
 * added: its records, and the keys new to the filter (or copy) that took it. `drained` runs
 * once the source has ended and this thread has added its last chunk, while the workers may
 * still add theirs (not after a failure): this thread's share of the merge goes there.
 */
export async function buildTogether(
  chunks: AsyncGenerator<Chunk>,
  here: SharedFilter,
  pool: () => ChunkTaker | null,
  progress: (records: number, added: number) => void,
  helped = true,
  drained?: () => void,
): Promise<void> {
  const splitter = new TextSplitter();
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  try {
    for await (const chunk of chunks) {
      const workers = pool();
      const keys = 'text' in chunk ? 0 : chunk.packed.offsets.length - 1;
      const sent: Promise<[records: number, added: number]> | null =
        workers === null
          ? null
          : 'text' in chunk
            ? (workers.tryAddText(chunk.text)?.done.then((r) => [r.records, r.count]) ?? null)
            : (workers.tryAddPacked(chunk.packed)?.done.then((added) => [keys, added]) ?? null);
      if (sent === null) {
        const batch = 'text' in chunk ? splitter.split(chunk.text) : chunk.packed;
        const added = here.addBatch(batch);
        chunk.release();
        progress(batch.offsets.length - 1, added);
        // The workers' answers (and a pool that has started) are events: keys in memory come
        // without any, so this thread lets them in between its chunks.
        if (helped) await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const p = sent.then(
        ([records, added]) => {
          chunk.release();
          progress(records, added);
        },
        (error: unknown) => {
          failure ??= { error };
        },
      );
      inFlight.add(p);
      void p.then(() => inFlight.delete(p));
      if (failure !== null) break;
    }
    if (failure === null) drained?.();
  } finally {
    await Promise.all(inFlight);
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
}
