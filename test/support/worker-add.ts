/**
 * Worker for test/shared-bits.test.ts: adds keys into a BloomFilter whose bits live in a
 * SharedArrayBuffer shared with other workers, starting at the same moment as they do.
 *
 * It runs bundled (test/support/worker-bundle.ts) and serves one job after another (the test
 * starts its workers once): for each {@link AddJob} it is sent, it prepares, posts 'ready', waits
 * on the start gate, does its work and posts an {@link AddReport}.
 *
 * The filter is the production one (`new BloomFilter(shape, new SharedBitArray(...))`). The
 * worker wraps the global `Atomics.or` to count, from the old value each call returns, the bits
 * it turned from 0 to 1. The atomic design guarantees that each bit's transition is seen by
 * exactly one `Atomics.or`, so across all workers the counts must add up to the bits set during
 * the run. (A storage that set bits with plain stores would make the sum come up short; one
 * that used a compare-and-swap loop would need this counter adapted.)
 */
import { parentPort } from 'node:worker_threads';
import { BloomFilter, type Funnel, SharedBitArray, type StrategyName } from '../../src/index.js';

export interface AddJob {
  /** The filter's bits (a SharedArrayBuffer of bits / 8 bytes). */
  buffer: SharedArrayBuffer;
  bits: number;
  hashes: number;
  funnel: Funnel;
  strategy: StrategyName;
  /** Keys this worker adds, in order. */
  keys: string[];
  /** Keys already in the filter before the start; checked with `has` between adds. */
  preloaded: string[];
  /** 'add': add each key. 'union': build a private filter from the keys and union it in. */
  mode: 'add' | 'union';
  /** Int32Array gate: slot 0 becomes 1 when all workers may start. */
  gate: SharedArrayBuffer;
}

export interface AddReport {
  /** add() result per key, 1 = true. Empty in 'union' mode. */
  adds: Uint8Array;
  /** Bits that this worker's Atomics.or calls on the filter turned from 0 to 1. */
  transitions: number;
  /** Preloaded keys that `has` answered false for while others were writing (must be 0). */
  missedPreloaded: number;
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

// Count, for this thread, the bits that an Atomics.or on the current job's filter words turned
// from 0 to 1.
let counted: ArrayBufferLike | null = null;
let transitions = 0;
const atomicOr = Atomics.or;
Atomics.or = ((array: Uint32Array, index: number, value: number): number => {
  const old = atomicOr(array, index, value);
  if (array.buffer === counted) transitions += popcount(~old & value);
  return old;
}) as typeof Atomics.or;

function run(job: AddJob): AddReport {
  const shape = {
    bits: job.bits,
    hashes: job.hashes,
    funnel: job.funnel,
    strategy: job.strategy,
  };
  const data = new Uint32Array(job.buffer);
  const filter = new BloomFilter(shape, new SharedBitArray(job.bits, data));

  // Prepare everything before the gate so that the workers really start together.
  const local = job.mode === 'union' ? new BloomFilter(shape) : null;
  if (local !== null) local.addMany(job.keys);
  const adds = new Uint8Array(job.mode === 'add' ? job.keys.length : 0);
  const gate = new Int32Array(job.gate);
  counted = job.buffer;
  transitions = 0;

  parentPort!.postMessage('ready');
  Atomics.wait(gate, 0, 0);

  let missedPreloaded = 0;
  const pre = job.preloaded;
  if (local !== null) {
    filter.union(local);
    for (const k of pre) if (!filter.has(k)) missedPreloaded++;
  } else {
    const keys = job.keys;
    for (let i = 0; i < keys.length; i++) {
      adds[i] = filter.add(keys[i]!) ? 1 : 0;
      if (pre.length > 0 && !filter.has(pre[i % pre.length]!)) missedPreloaded++;
    }
  }
  counted = null;
  return { adds, transitions, missedPreloaded };
}

parentPort!.on('message', (job: AddJob) => parentPort!.postMessage(run(job)));
