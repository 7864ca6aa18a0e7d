/**
 * `--threads N` for `add` and `check`: the keys' hashing and probing run on worker threads,
 * each holding its own copy of the filter (a classic filter then probes in its WebAssembly
 * kernel, which a shared memory cannot hold: on shared memory it measured about 2x slower per
 * key, more than a second thread gives back).
 *
 * - add, whole records as keys ('string' or 'bytes' funnel, no `-f`): {@link addOnThreads}, on
 *   N threads in all. The main thread reads each input in 1 MiB chunks into reused shared
 *   buffers (cut after the last separator: node/parallel-text.ts) and hands them to N - 1
 *   workers, adding a chunk itself whenever they are all busy; whoever takes a chunk splits it
 *   into records, with the record rules of one thread (CRLF, `-0`, an unterminated last record).
 * - otherwise (check, or keys made from fields or parsed as numbers): {@link ThreadedFilter}. The
 *   main thread reads and splits the input, hands each batch (copied) to the pool, and goes on
 *   with the next while the workers test or add; results come back in input order, so the
 *   output is byte for byte that of one thread.
 *
 * - check: each worker's copy answers as the filter does, so the selected records are the same.
 * - add: each worker adds its share of the keys to its own copy; at the end the copies are
 *   OR-ed into the filter (`union`). A Bloom filter's bits are an OR over its keys, so the file
 *   written equals the one-thread file bit for bit. The count of new keys is summed over the
 *   copies, and may exceed one thread's count when a key's bits were set by keys another worker
 *   held (a repeat or a collision).
 *
 * Memory: a copy of the filter per worker (with {@link addOnThreads}, one more on shared memory
 * that the workers copy from, one `memcpy`, and OR back into, one after another with plain
 * stores). Start-up: each worker loads bloomkit (about 0.1 s of CPU) and touches its copy's
 * memory for the first time, so threads pay for large inputs only, with idle cores (measured in
 * BENCHMARKS.md: on 2 quiet cores, `add --threads 2` of 4M lines took 0.93× the wall time of one
 * thread, 1.35× its CPU time).
 */

import type { MembershipFilter, ReadonlyMembershipFilter } from '../filters/filter.js';
import { FilterWorkerPool } from '../node/parallel-pool.js';
import { type TextChunk, TextChunks } from '../node/parallel-text.js';
import { buildTogether, type Chunk, readAhead } from '../node/parallel-together.js';
import { mergesByOr, type SharedFilter, sharedTwin } from '../node/shared-handle.js';
import { CliError, type CliIo, type OptionValues } from './command.js';
import { type ByteSource, checkInputs, openInput } from './input.js';
import { Progress } from './progress.js';
import type { RecordBatch, RecordOptions } from './records.js';
import type { Interrupt } from './scan.js';

export { warmThreads } from '../node/worker-threads.js';

/** A batch copied out of the reader's buffers (which the next read reuses), with its answers. */
export interface PendingBatch {
  readonly batch: RecordBatch;
  /** 'has': key i's 1/0. */
  readonly flags: Uint8Array;
  /** Resolves to the pool's count (keys found, or keys new to the worker's copy). */
  readonly done: Promise<number>;
}

/** `batch` with its own copies of the record bytes, record bounds and keys. */
function copyBatch(batch: RecordBatch): RecordBatch {
  const { count, keys } = batch;
  const end = batch.starts[count]!;
  const data = new Uint8Array(batch.data.subarray(0, end)); // a copy (Buffer#slice is a view)
  const starts = batch.starts.slice(0, count + 1);
  const ends = batch.ends.slice(0, count);
  const viewsData = keys.bytes.buffer === batch.data.buffer;
  const keyBytes = viewsData ? data : new Uint8Array(keys.bytes);
  return {
    data,
    starts,
    ends,
    count,
    firstRecord: batch.firstRecord,
    keys: {
      bytes: keyBytes,
      offsets: keys.offsets.slice(0, count + 1),
      ...(keys.ends === undefined ? {} : { ends: keys.ends.slice(0, count) }),
    },
  };
}

/**
 * Throws unless copies of `filter` merge by OR (classic, blocked, split-block), naming `file`.
 * The type's name (the codec table, every type's module) is loaded for the message only: this
 * module is on the way to the first chunk of `add --threads`, and its worker's start.
 */
async function checkMergeable(filter: ReadonlyMembershipFilter, file: string): Promise<void> {
  if (!mergesByOr(filter)) {
    const { typeName } = await import('./describe.js');
    throw new CliError(
      `${file}: --threads adds to a classic, blocked or split-block filter (copies merged by OR), not a ${typeName(filter)} filter; leave --threads out`,
    );
  }
}

/** ORs the bytes of every worker's copy into `filter` (whose own bits stay as they were read). */
async function mergeCopies(pool: FilterWorkerPool, filter: MembershipFilter): Promise<void> {
  const { fromBytes } = await import('../formats/registry.js');
  for (const bytes of await pool.copies()) {
    (filter as unknown as { union(o: unknown): unknown }).union(fromBytes(bytes));
  }
}

/** Whether the workers can split the records themselves: whole records are the keys' bytes. */
export function splitsInWorkers(options: RecordOptions): boolean {
  return options.fields === null && (options.funnel === 'string' || options.funnel === 'bytes');
}

/**
 * `add` on `threads` threads in all, for inputs whose records are the keys
 * ({@link splitsInWorkers}): this thread reads every input in chunks, and hands each to one of
 * `threads - 1` workers (which split it and add to their copies of the filter) when one has
 * room, or splits and adds it itself into `filter` when none has: so it works from the first
 * chunk on, while the workers start, and none of the threads waits for another. The workers'
 * copies are OR-ed into `filter` at the end. Stops reading at an interrupt (what was read is
 * added). Resolves to the records read and the keys new to the copy each was added to.
 */
export async function addOnThreads(
  filter: MembershipFilter,
  file: string,
  threads: number,
  inputs: readonly string[],
  recordOpts: RecordOptions,
  run: { io: CliIo; options: OptionValues; interrupt: Interrupt },
): Promise<{ records: number; fresh: number }> {
  await checkMergeable(filter, file);
  const { io, interrupt } = run;
  // The workers copy the filter from shared memory, and OR their copies back into it.
  const twin = sharedTwin(filter);
  let pool: FilterWorkerPool | null = null;
  const starting = FilterWorkerPool.withCopiesOf(twin.share(), threads - 1).then((p) => {
    pool = p;
  });
  starting.catch(() => {}); // awaited below
  const progress = Progress.create(io, run.options, 'add');
  let records = 0;
  let fresh = 0;
  // The input being read, and the bytes of the inputs before it (for the progress line).
  let reading: { source: ByteSource; before: number } | null = null;
  const counted = (n: number, added: number): void => {
    records += n;
    fresh += added;
    if (reading !== null) {
      const { source, before } = reading;
      progress?.update(records, before + source.position(), source.size);
    }
  };
  try {
    // The engine of buildParallel: workers take chunks when they have room, this thread the rest.
    await buildTogether(
      readAhead(
        inputChunks(inputs, io, recordOpts.separator, interrupt, (at) => {
          reading = at;
        }),
      ),
      filter as unknown as SharedFilter,
      () => pool,
      counted,
    );
    await starting;
    // Nothing else writes the twin now: the copies are OR-ed in with plain stores.
    await (pool as FilterWorkerPool | null)?.mergeAlone(twin.share());
    (filter as unknown as { union(o: unknown): unknown }).union(twin);
    return { records, fresh };
  } finally {
    progress?.done();
    await starting.catch(() => {});
    await (pool as FilterWorkerPool | null)?.close();
  }
}

/**
 * The chunks of whole records of every input in turn (node/parallel-text.ts), read into reused
 * shared buffers; stops at an interrupt (what was read is kept). `reading` hears of each input
 * as it is opened, with the bytes of the inputs before it.
 */
async function* inputChunks(
  inputs: readonly string[],
  io: CliIo,
  separator: number,
  interrupt: Interrupt,
  reading: (at: { source: ByteSource; before: number }) => void,
): AsyncGenerator<Chunk> {
  let before = 0;
  checkInputs(inputs);
  for (const name of inputs) {
    if (interrupt.signal !== null) return;
    const source = await interrupt.before(openInput(name, io.stdin), (late) => late.close());
    if (source === null) return;
    reading({ source, before });
    const chunks = new TextChunks((into) => source.read(into), separator);
    try {
      for (;;) {
        const chunk: TextChunk | null = await Promise.race([chunks.next(), interrupt.arrived]);
        if (interrupt.signal !== null) return;
        if (chunk === null) break; // this input is done: on to the next
        yield { text: chunk, release: () => chunks.release(chunk) };
      }
    } finally {
      before += source.position();
      await source.close();
    }
  }
}

/** Worker threads over copies of one filter, fed batch by batch, answering in order. */
export class ThreadedFilter {
  private readonly queue: PendingBatch[] = [];

  private constructor(
    private readonly pool: FilterWorkerPool,
    private readonly op: 'add' | 'has',
  ) {}

  /**
   * `threads` workers, each with a copy of `filter`. For 'add' the filter must be one whose
   * copies merge by OR (classic, blocked, split-block); `file` names it in the error otherwise.
   */
  static async start(
    filter: ReadonlyMembershipFilter,
    threads: number,
    op: 'add' | 'has',
    file: string,
  ): Promise<ThreadedFilter> {
    if (op === 'add') await checkMergeable(filter, file);
    return new ThreadedFilter(await FilterWorkerPool.withCopies(filter.toBytes(), threads), op);
  }

  /**
   * Hands a copy of `batch` to the workers; returns the batches now done, oldest first (at most
   * two stay in flight, so memory stays bounded).
   */
  async push(batch: RecordBatch): Promise<PendingBatch[]> {
    const copy = copyBatch(batch);
    const flags = new Uint8Array(this.op === 'has' ? copy.count : 0);
    const done = this.pool.run(this.op, copy.keys, this.op === 'has' ? flags : null);
    done.catch(() => {}); // observed when it is taken off the queue
    this.queue.push({ batch: copy, flags, done });
    const ready: PendingBatch[] = [];
    while (this.queue.length > 2) ready.push(await this.take());
    return ready;
  }

  /** Every batch still in flight, in order, once done. */
  async drain(): Promise<PendingBatch[]> {
    const ready: PendingBatch[] = [];
    while (this.queue.length > 0) ready.push(await this.take());
    return ready;
  }

  private async take(): Promise<PendingBatch> {
    const next = this.queue.shift()!;
    await next.done;
    return next;
  }

  /** 'add': ORs every worker's copy into `filter` (whose own bits stay as they were read). */
  async mergeInto(filter: MembershipFilter): Promise<void> {
    await this.drain();
    await mergeCopies(this.pool, filter);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
