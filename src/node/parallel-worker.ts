/**
 * The worker side of bloomkit's worker pool (node/parallel-pool.ts): opens the pool's filter on
 * its shared memory (`fromShared`) and answers batch messages, one at a time, until terminated.
 *
 * Message in:  { id, op: 'add' | 'has', bytes, offsets, ends? } (buffers transferred)
 * Message out: { id, added } for 'add'; { id, found } for 'has' (a Uint8Array, transferred);
 *              { id, error } if the batch threw (the error's name and message).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PackedKeys } from '../filters/filter.js';
import { fromSharedHandle, type SharedFilterHandle } from './shared-handle.js';

/** What the pool sends. */
export interface BatchMessage {
  id: number;
  op: 'add' | 'has';
  bytes: Uint8Array;
  offsets: Uint32Array;
  ends?: Uint32Array;
}

/** What a worker answers. */
export interface BatchReply {
  id: number;
  added?: number;
  found?: Uint8Array;
  error?: { name: string; message: string };
}

/** Runs the worker loop; called by the worker bootstrap (see parallel-pool.ts). */
export function runParallelWorker(): void {
  const port = parentPort;
  if (port === null) throw new Error('runParallelWorker must run in a worker thread');
  const filter = fromSharedHandle((workerData as { handle: SharedFilterHandle }).handle);
  port.on('message', (m: BatchMessage) => {
    const batch: PackedKeys =
      m.ends === undefined
        ? { bytes: m.bytes, offsets: m.offsets }
        : { bytes: m.bytes, offsets: m.offsets, ends: m.ends };
    try {
      if (m.op === 'add') {
        const reply: BatchReply = { id: m.id, added: filter.addBatch(batch) };
        port.postMessage(reply);
      } else {
        const found = filter.hasBatch(batch);
        const reply: BatchReply = { id: m.id, found };
        port.postMessage(reply, [found.buffer as ArrayBuffer]);
      }
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      const reply: BatchReply = { id: m.id, error: { name: error.name, message: error.message } };
      port.postMessage(reply);
    }
  });
  port.postMessage('ready');
}
