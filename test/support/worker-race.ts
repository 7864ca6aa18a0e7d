/**
 * Worker for test/parallel.test.ts: hammers shared memory with the production storages (atomic:
 * `SharedBitArray`, `SharedCounterArray`, a filter opened with `fromShared`) or with plain
 * read-modify-writes on the same memory (`BitArray` and `CounterArray` over a SharedArrayBuffer),
 * to show that the test would catch lost updates. For each job it is sent (a message; the same
 * workers run one race after another), it prepares, posts 'ready', waits on the gate (slot 0 of
 * `gate` becomes 1), runs the job and posts 'done'.
 */
import { parentPort } from 'node:worker_threads';
import {
  BitArray,
  CounterArray,
  CountingBloomFilter,
  packKeys,
  SharedBitArray,
  SharedCounterArray,
  type SharedFilterHandle,
} from '../../src/index.js';
import { mulberry32 } from './random.js';

export type RaceJob =
  | {
      kind: 'bits';
      atomic: boolean;
      buffers: SharedArrayBuffer[];
      worker: number;
      workers: number;
      gate: SharedArrayBuffer;
    }
  | {
      kind: 'counters';
      atomic: boolean;
      buffer: SharedArrayBuffer;
      worker: number;
      workers: number;
      rounds: number;
      gate: SharedArrayBuffer;
    }
  | { kind: 'counting'; handle: SharedFilterHandle; keys: string[]; gate: SharedArrayBuffer };

function run(job: RaceJob): void {
  const wait = (): void => {
    parentPort!.postMessage('ready');
    Atomics.wait(new Int32Array(job.gate), 0, 0);
  };
  if (job.kind === 'bits') {
    // Every worker owns 8 bits of each 32-bit word and sets each of them once, visiting the words
    // in its own random order: the words are shared, the bits are not. One array after another, so
    // that a run gives the threads several chances to meet.
    const words = job.buffers[0]!.byteLength / 4;
    const storages = job.buffers.map((buffer) =>
      job.atomic
        ? new SharedBitArray(words * 32, new Uint32Array(buffer))
        : new BitArray(words * 32, new Uint32Array(buffer), 0),
    );
    const order = Uint32Array.from({ length: words }, (_, i) => i);
    const rnd = mulberry32(1000 + job.worker);
    for (let i = words - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const lanes = 32 / job.workers;
    wait();
    for (const bits of storages) {
      for (let i = 0; i < words; i++) {
        const w = order[i]!;
        for (let b = 0; b < lanes; b++) bits.setMasked(w, 1 << (job.worker * lanes + b));
      }
    }
  } else if (job.kind === 'counters') {
    // Every worker owns the counters ≡ worker (mod workers) of a small array (neighbours share
    // bytes) and raises each by one, then lowers it again, `rounds` times: the sum stays 0.
    const size = job.buffer.byteLength * 2;
    const data = new Uint8Array(job.buffer);
    const counters = job.atomic ? new SharedCounterArray(size, data) : new CounterArray(size, data);
    wait();
    for (let r = 0; r < job.rounds; r++) {
      for (let c = job.worker; c < size; c += job.workers) counters.increment(c);
      for (let c = job.worker; c < size; c += job.workers) counters.decrement(c);
    }
  } else {
    // Adds its keys to the shared counting filter, removing every other one right after the next
    // is added (adds and removes mixed, as fast as the thread runs).
    const filter = CountingBloomFilter.fromShared(job.handle);
    const keys = job.keys;
    wait();
    filter.addBatch(packKeys('string', keys.slice(0, keys.length >> 1)));
    for (let i = keys.length >> 1; i < keys.length; i++) {
      filter.add(keys[i]!);
      if (i % 2 === 1) filter.remove(keys[i - 1]!);
    }
  }
  parentPort!.postMessage('done');
}

parentPort!.on('message', (job: RaceJob) => run(job));
