/**
 * The worker side of bloomkit's worker pool (node/parallel-pool.ts): opens the pool's filter on
 * its shared memory (`fromShared`), or decodes its own private copy from native bytes
 * (`fromBytes`: then the classic filter keeps its bits in its WebAssembly kernel, which shared
 * memory cannot hold), and answers batch messages, one at a time, until terminated.
 *
 * Message in:  { id, op: 'add' | 'has', bytes, offsets, ends? } (buffers transferred), or
 *              { id, op: 'bytes' } (a private copy's native bytes, for merging adds)
 * Message out: { id, added } for 'add'; { id, found } for 'has' (a Uint8Array, transferred);
 *              { id, found: bytes } for 'bytes';
 *              { id, error } if the batch threw (the error's name and message).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MembershipFilter, PackedKeys } from '../filters/filter.js';
import { fromBytes } from '../formats/registry.js';
import { fromSharedHandle, type SharedFilterHandle } from './shared-handle.js';

/** What the pool sends. */
export interface BatchMessage {
  id: number;
  op: 'add' | 'has' | 'bytes';
  bytes?: Uint8Array;
  offsets?: Uint32Array;
  ends?: Uint32Array;
}

/** What a worker answers. */
export interface BatchReply {
  id: number;
  added?: number;
  found?: Uint8Array;
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
  port.on('message', (m: BatchMessage) => {
    try {
      if (m.op === 'bytes') {
        const found = filter.toBytes();
        port.postMessage({ id: m.id, found } satisfies BatchReply, [found.buffer as ArrayBuffer]);
        return;
      }
      const batch: PackedKeys =
        m.ends === undefined
          ? { bytes: m.bytes!, offsets: m.offsets! }
          : { bytes: m.bytes!, offsets: m.offsets!, ends: m.ends };
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
