/**
 * The worker side of bloomkit's worker pool (node/parallel-pool.ts): opens the pool's filter on
 * its shared memory (`fromShared`), or decodes its own private copy from native bytes
 * (`fromBytes`: then the classic filter keeps its bits in its WebAssembly kernel, which shared
 * memory cannot hold), and answers batch messages, one at a time, until terminated.
 *
 * Message in:  { id, op: 'add' | 'has', chunk } (the chunk is in a lane: node/parallel-lanes.ts),
 *              or { id, op: 'bytes' } (a private copy's native bytes, for merging adds)
 * Message out: { id, count }: the keys that were new ('add') or found ('has': the answers are
 *              in the lane); { id, bytes } for 'bytes' (transferred);
 *              { id, error } if the batch threw (the error's name and message).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MembershipFilter } from '../filters/filter.js';
import { fromBytes } from '../formats/registry.js';
import { type LaneBuffers, type LaneChunk, openChunk } from './parallel-lanes.js';
import { fromSharedHandle, type SharedFilterHandle } from './shared-handle.js';

/** What the pool sends. */
export interface BatchMessage {
  id: number;
  op: 'add' | 'has' | 'bytes';
  chunk?: LaneChunk;
}

/** What a worker answers. */
export interface BatchReply {
  id: number;
  count?: number;
  bytes?: Uint8Array;
  error?: { name: string; message: string };
}

/** A worker's filter: on the pool's shared memory, or its own copy from native bytes. */
export type WorkerFilterSource = { handle: SharedFilterHandle } | { copy: Uint8Array };

/** Runs the worker loop; called by the worker bootstrap (see parallel-pool.ts). */
export function runParallelWorker(): void {
  const port = parentPort;
  if (port === null) throw new Error('runParallelWorker must run in a worker thread');
  const source = workerData as WorkerFilterSource;
  const filter = (
    'copy' in source ? fromBytes(source.copy) : fromSharedHandle(source.handle)
  ) as MembershipFilter;
  const lanes = new Map<number, LaneBuffers>();
  port.on('message', (m: BatchMessage) => {
    try {
      if (m.op === 'bytes') {
        const bytes = filter.toBytes();
        port.postMessage({ id: m.id, bytes } satisfies BatchReply, [bytes.buffer as ArrayBuffer]);
        return;
      }
      const { batch, found } = openChunk(lanes, m.chunk!);
      let count: number;
      if (m.op === 'add') count = filter.addBatch(batch);
      else {
        filter.hasBatch(batch, found);
        count = 0;
        for (let i = 0; i < found.length; i++) count += found[i]!;
      }
      port.postMessage({ id: m.id, count } satisfies BatchReply);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      const reply: BatchReply = { id: m.id, error: { name: error.name, message: error.message } };
      port.postMessage(reply);
    }
  });
  port.postMessage('ready');
}
