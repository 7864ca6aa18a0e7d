/**
 * The worker side of bloomkit's worker threads (node/worker-threads.ts): a thread holds one
 * filter at a time, opened on a pool's shared memory (`fromShared`) or decoded as its own private
 * copy from native bytes (`fromBytes`: then the classic and blocked filters keep their bits in
 * their WebAssembly kernels, which shared memory cannot hold), and answers requests, one at a
 * time, until its pool gives it back ('drop') or ends it.
 *
 * Requests: { id, op, ... }
 *   'open'    { source }: hold this filter from now on (see {@link WorkerFilterSource});
 *   'add' | 'has' { chunk }: the chunk in a lane (node/parallel-lanes.ts); answers in the lane;
 *   'text'    { text }: whole records in a shared buffer, split here (node/parallel-text.ts) and
 *             added; answers the records' count too;
 *   'packed'  { batch }: packed keys moved here (transferred, not copied) and added;
 *   'merge'   { handle, alone? }: ORs this thread's private copy into the shared filter behind
 *             handle (the bits of every copy OR-ed together: one thread's build, bit for bit);
 *             `alone`: with plain stores, while no other thread writes that filter (orIntoAlone);
 *   'bytes':  the filter's native bytes (transferred), for merging on the caller's side;
 *   'drop':   forget the filter (the thread goes back idle).
 * Answers: { id, count?, records?, bytes? }, or { id, error } with the error's name and message.
 */
import { parentPort } from 'node:worker_threads';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import { type LaneBuffers, type LaneChunk, openChunk } from './parallel-lanes.js';
import { type TextChunk, TextSplitter } from './parallel-text.js';
import {
  copyBits,
  fromSharedHandle,
  loadSharedType,
  orIntoAlone,
  privateCopy,
  type SharedFilterHandle,
} from './shared-handle.js';

/**
 * A thread's filter: the pool's shared filter (`{ handle }`), a private copy of it (`{ handle,
 * private: true }`: the same bits in this thread's plain memory), or its own copy decoded from
 * native bytes (`{ copy }`; only this form loads the codec table).
 */
export type WorkerFilterSource =
  | { handle: SharedFilterHandle; private?: boolean }
  | { copy: Uint8Array };

/**
 * The last private copy this thread dropped, kept for the next of the same type and shape:
 * cleared and reused, its memory is already paged in (a fresh filter's first touch costs a page
 * fault per 4 KiB, about 60 ms of CPU for 4.8 MB on a busy virtual machine).
 */
let spare: { key: string; filter: MembershipFilter } | null = null;

/** The filter `source` describes (see {@link WorkerFilterSource}). */
async function openSource(source: WorkerFilterSource): Promise<MembershipFilter> {
  if ('copy' in source) {
    const { fromBytes } = await import('../formats/registry.js');
    return fromBytes(source.copy) as MembershipFilter;
  }
  await loadSharedType(source.handle);
  if (source.private !== true) return fromSharedHandle(source.handle);
  const key = `${source.handle.type} ${JSON.stringify(source.handle.shape)}`;
  const reuse = spare?.key === key ? spare.filter : null;
  spare = null;
  let copy: MembershipFilter;
  if (reuse === null) copy = privateCopy(source.handle);
  else {
    copyBits(reuse as never, fromSharedHandle(source.handle));
    copy = reuse;
  }
  spare = { key, filter: copy };
  return copy;
}

/** What the pool sends. */
export interface BatchMessage {
  id: number;
  op: 'open' | 'add' | 'has' | 'text' | 'packed' | 'merge' | 'bytes' | 'drop';
  source?: WorkerFilterSource;
  chunk?: LaneChunk;
  text?: TextChunk;
  batch?: PackedKeys;
  handle?: SharedFilterHandle;
  /** 'merge': no other thread writes the shared filter meanwhile (plain stores, no atomics). */
  alone?: boolean;
}

/** What a worker answers. */
export interface BatchReply {
  id: number;
  /** Keys new ('add', 'text', 'packed') or found ('has'). */
  count?: number;
  /** Records in a 'text' chunk. */
  records?: number;
  bytes?: Uint8Array;
  error?: { name: string; message: string };
}

/** Runs the worker loop; called by the worker bootstrap (see worker-threads.ts). */
export function runParallelWorker(): void {
  const port = parentPort;
  if (port === null) throw new Error('runParallelWorker must run in a worker thread');
  let filter: MembershipFilter | null = null;
  const lanes = new Map<number, LaneBuffers>();
  const splitter = new TextSplitter();
  const held = (): MembershipFilter => {
    if (filter === null) throw new Error('no filter was opened on this worker thread');
    return filter;
  };
  const fail = (m: BatchMessage, e: unknown): void => {
    const error = e instanceof Error ? e : new Error(String(e));
    const reply: BatchReply = { id: m.id, error: { name: error.name, message: error.message } };
    port.postMessage(reply);
  };
  port.on('message', (m: BatchMessage) => {
    if (m.op === 'open') {
      // The pool sends nothing else to this thread before the answer.
      openSource(m.source!).then(
        (opened) => {
          filter = opened;
          port.postMessage({ id: m.id } satisfies BatchReply);
        },
        (e: unknown) => fail(m, e),
      );
      return;
    }
    try {
      const reply: BatchReply = { id: m.id };
      switch (m.op) {
        case 'drop':
          // A private copy stays in `spare` for the next build of its shape.
          filter = null;
          lanes.clear();
          break;
        case 'bytes': {
          const bytes = held().toBytes();
          port.postMessage({ id: m.id, bytes } satisfies BatchReply, [bytes.buffer as ArrayBuffer]);
          return;
        }
        case 'merge': {
          if (m.alone === true) {
            orIntoAlone(m.handle!, held() as never);
            break;
          }
          const shared = fromSharedHandle(m.handle!) as unknown as { union(o: unknown): unknown };
          shared.union(held());
          break;
        }
        case 'text': {
          const batch = splitter.split(m.text!);
          reply.count = held().addBatch(batch);
          reply.records = batch.offsets.length - 1;
          break;
        }
        case 'packed':
          reply.count = held().addBatch(m.batch!);
          break;
        default: {
          const { batch, found } = openChunk(lanes, m.chunk!);
          if (m.op === 'add') reply.count = held().addBatch(batch);
          else {
            held().hasBatch(batch, found);
            let count = 0;
            for (let i = 0; i < found.length; i++) count += found[i]!;
            reply.count = count;
          }
        }
      }
      port.postMessage(reply);
    } catch (e) {
      fail(m, e);
    }
  });
  port.postMessage('ready');
}
