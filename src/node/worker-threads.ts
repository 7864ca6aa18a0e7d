/**
 * The worker threads behind bloomkit's pools (node/parallel-pool.ts, `buildParallel`, the
 * command's `--threads`), kept warm: a pool borrows threads, and `close()` gives them back idle
 * (unreferenced, so they never keep the process alive) for the next pool to take, instead of
 * ending them. Starting a thread costs about 0.1 s of CPU (it loads bloomkit), so a program that
 * builds or queries in parallel more than once pays it once. Idle threads end after
 * {@link IDLE_MS} without use, or at once with {@link endIdleThreads}.
 *
 * A borrowed thread takes requests `{ id, op, ... }` (node/parallel-worker.ts) and answers each
 * with `{ id, ... }`; {@link PoolThreads} routes the answers, and keeps at most two requests in
 * flight on a thread (a thread's two lanes of chunk buffers), choosing the least busy thread.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { show } from '../errors.js';
import type { BatchMessage, BatchReply } from './parallel-worker.js';

declare const __filename: string | undefined;

/** How long an idle thread waits to be borrowed again before it ends. */
export const IDLE_MS = 30_000;

/** The URL of the module this code runs from (ESM, CJS bundle, or TypeScript source). */
function selfUrl(): string {
  if (typeof __filename === 'string') return pathToFileURL(__filename).href;
  return import.meta.url;
}

/**
 * The eval'd bootstrap that loads bloomkit in a worker and starts its loop. The worker module is
 * the first that exists of: parallel-worker.js beside this file (the one-file-per-module ESM
 * build), cli-worker.js / cli-worker.cjs (the worker entry bundled alone, beside the bundled
 * `bloomkit` command, whose files are CommonJS in dist/), node.js / node.cjs (a bundle whose
 * entry exports `runParallelWorker`).
 */
function bootstrap(): string {
  const self = selfUrl();
  if (self.endsWith('.ts')) {
    const worker = new URL('./parallel-worker.ts', self).href;
    const require = createRequire(self);
    const tsxPkg = require.resolve('tsx/package.json');
    const api = pathToFileURL(tsxPkg.replace(/package\.json$/, 'dist/esm/api/index.mjs')).href;
    return `import(${JSON.stringify(api)}).then(({ tsImport }) => tsImport(${JSON.stringify(worker)}, ${JSON.stringify(self)})).then((m) => m.runParallelWorker())`;
  }
  const names = self.endsWith('.cjs')
    ? ['./cli-worker.cjs', './node.cjs']
    : ['./parallel-worker.js', './cli-worker.js', './node.js'];
  const urls = names.map((name) => new URL(name, self));
  const entry = (urls.find((url) => self.startsWith('file:') && existsSync(url)) ?? urls.at(-1)!)
    .href;
  return `import(${JSON.stringify(entry)}).then((m) => m.runParallelWorker())`;
}

/** Throws `RangeError` unless `workers` is an integer in [1, 256]; defaults to the core count. */
export function checkWorkers(workers: number | undefined): number {
  const n = workers ?? availableParallelism();
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    throw new RangeError(`workers must be an integer in [1, 256], got ${show(workers)}`);
  }
  return n;
}

/** Threads started and not borrowed, with the timer that ends them. */
const idle: { worker: Worker; timer: ReturnType<typeof setTimeout> }[] = [];

/** How many threads are idle (a pool of that many starts none). */
export function idleThreads(): number {
  return idle.length;
}

/** Ends every idle thread now (borrowed ones end when their pool closes them). */
export async function endIdleThreads(): Promise<void> {
  const all = idle.splice(0);
  for (const t of all) clearTimeout(t.timer);
  await Promise.all(all.map((t) => t.worker.terminate()));
}

function dropIdle(worker: Worker): void {
  const i = idle.findIndex((t) => t.worker === worker);
  if (i >= 0) {
    clearTimeout(idle[i]!.timer);
    idle.splice(i, 1);
  }
}

/** Gives a healthy thread back to the idle set. */
function giveBack(worker: Worker): void {
  worker.removeAllListeners('message');
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  worker.on('error', () => dropIdle(worker));
  worker.once('exit', () => dropIdle(worker));
  worker.unref();
  const timer = setTimeout(() => {
    dropIdle(worker);
    void worker.terminate();
  }, IDLE_MS);
  timer.unref?.();
  idle.push({ worker, timer });
}

/** Threads started by {@link warmThreads} and not yet borrowed. */
const starting: Promise<Worker>[] = [];

/**
 * Starts threads until `n` are idle or starting, without waiting for them: a caller that knows
 * it will borrow threads lets them load bloomkit while it does other work (the command reads
 * the filter file meanwhile).
 */
export function warmThreads(n: number): void {
  const code = bootstrap();
  while (idle.length + starting.length < n) {
    const started = spawn(code);
    started.catch(() => {}); // a borrower sees the failure
    starting.push(started);
  }
}

/** A started thread: an idle one, one starting, or a new one once it has loaded bloomkit. */
function borrow(code: string): Promise<Worker> {
  const warm = idle.pop();
  if (warm !== undefined) {
    clearTimeout(warm.timer);
    warm.worker.removeAllListeners('error');
    warm.worker.removeAllListeners('exit');
    warm.worker.ref();
    return Promise.resolve(warm.worker);
  }
  const next = starting.shift();
  if (next !== undefined) {
    return next.then((worker) => {
      worker.ref();
      return worker;
    });
  }
  return spawn(code, true);
}

/** A new thread, once it has loaded bloomkit (unreferenced unless `held`). */
function spawn(code: string, held = false): Promise<Worker> {
  const worker = new Worker(code, { eval: true });
  if (!held) worker.unref();
  return new Promise<Worker>((resolve, reject) => {
    worker.once('message', (m) => {
      worker.removeAllListeners('error');
      if (m === 'ready') resolve(worker);
      else {
        void worker.terminate();
        reject(new Error(String(m)));
      }
    });
    worker.once('error', reject);
  });
}

interface Pending {
  resolve(reply: BatchReply): void;
  reject(error: Error): void;
  /** Run on the reply before the thread's reservation is given back (frees a lane). */
  settle?(reply: BatchReply): void;
}

/** One borrowed thread and its count of requests in flight. */
export interface ThreadSlot {
  readonly worker: Worker;
  /** Index of the slot in the pool (0 to size - 1). */
  readonly index: number;
  inFlight: number;
}

/** The error a worker's reply names, as its own class where it is a standard one. */
function replyError(error: { name: string; message: string }): Error {
  const Ctor =
    error.name === 'RangeError' ? RangeError : error.name === 'TypeError' ? TypeError : Error;
  return new Ctor(error.message);
}

/** Borrowed threads, with their requests and answers. */
export class PoolThreads {
  readonly slots: ThreadSlot[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;
  /** Why a thread failed (then the pool takes no more requests), or null. */
  private broken: Error | null = null;
  private waiters: (() => void)[] = [];

  private constructor(workers: Worker[]) {
    this.slots = workers.map((worker, index) => ({ worker, index, inFlight: 0 }));
    for (const slot of this.slots) {
      slot.worker.on('message', (reply: BatchReply) => this.onReply(slot, reply));
      slot.worker.on('error', (e) => this.fail(e));
      // A thread that ends (killed, out of memory) answers nothing more: no request waits on it.
      slot.worker.once('exit', (code) => {
        if (!this.closed) this.fail(new Error(`a worker thread exited (code ${code})`));
      });
    }
  }

  /** Borrows `workers` threads (idle ones first) and opens `open` on each (see parallel-worker.ts). */
  static async borrow(
    workers: number,
    open: (index: number) => Omit<BatchMessage, 'id'>,
  ): Promise<PoolThreads> {
    const code = bootstrap();
    const got = await Promise.allSettled(Array.from({ length: workers }, () => borrow(code)));
    const ok = got.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const threads = new PoolThreads(ok);
    const failed = got.find((r) => r.status === 'rejected');
    if (failed !== undefined) {
      await threads.close();
      throw (failed as PromiseRejectedResult).reason;
    }
    try {
      await Promise.all(threads.slots.map((slot) => threads.post(slot, open(slot.index))));
    } catch (e) {
      await threads.close();
      throw e;
    }
    return threads;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Gives back a slot's reservation, and wakes whoever waits for room. */
  release(slot: ThreadSlot): void {
    slot.inFlight--;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private onReply(slot: ThreadSlot, reply: BatchReply): void {
    const p = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    p?.settle?.(reply);
    this.release(slot);
    if (p === undefined) return;
    if (reply.error !== undefined) p.reject(replyError(reply.error));
    else p.resolve(reply);
  }

  /** A thread failed: what waits is rejected, and so is every later request. */
  private fail(error: Error): void {
    this.broken ??= error;
    this.failAll(error);
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  /**
   * The least busy thread with room, waiting for one when all have two requests in flight. The
   * slot is reserved (its count raised) before this resolves, so runs going on at once never put
   * a third request on a thread.
   */
  async freeSlot(): Promise<ThreadSlot> {
    for (;;) {
      if (this.closed) throw new Error('the worker pool is closed');
      let best: ThreadSlot | null = null;
      for (const s of this.slots)
        if (s.inFlight < 2 && (best === null || s.inFlight < best.inFlight)) best = s;
      if (best !== null) {
        best.inFlight++;
        return best;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /**
   * The least busy thread with room (reserved), or null when every one has `depth` requests in
   * flight (2 by default: a thread's two lanes; requests that use no lane may queue deeper).
   */
  trySlot(depth = 2): ThreadSlot | null {
    if (this.closed) return null;
    let best: ThreadSlot | null = null;
    for (const s of this.slots)
      if (s.inFlight < depth && (best === null || s.inFlight < best.inFlight)) best = s;
    if (best !== null) best.inFlight++;
    return best;
  }

  /**
   * Sends `message` (its id is set here) to `slot`, which must be reserved (by
   * {@link freeSlot}) or is reserved now when `reserved` is false; resolves to the answer.
   * `transfer` lists buffers moved to the thread, not copied.
   */
  post(
    slot: ThreadSlot,
    message: Omit<BatchMessage, 'id'>,
    options: {
      reserved?: boolean;
      transfer?: ArrayBuffer[];
      settle?: (reply: BatchReply) => void;
    } = {},
  ): Promise<BatchReply> {
    if (options.reserved !== true) slot.inFlight++;
    if (this.broken !== null) {
      this.release(slot);
      return Promise.reject(this.broken);
    }
    const full = { ...message, id: this.nextId++ } as BatchMessage;
    return new Promise<BatchReply>((resolve, reject) => {
      const p: Pending = { resolve, reject };
      if (options.settle !== undefined) p.settle = options.settle;
      this.pending.set(full.id, p);
      slot.worker.postMessage(full, options.transfer ?? []);
    });
  }

  /**
   * Gives the threads back idle (each drops its filter first), or ends them when one failed.
   * Requests still in flight are rejected.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiters) w();
    this.waiters = [];
    const busy = this.pending.size > 0;
    this.failAll(new Error('the worker pool was closed'));
    if (this.broken !== null || busy) {
      await Promise.all(this.slots.map((s) => s.worker.terminate()));
      return;
    }
    await Promise.all(
      this.slots.map(async (slot) => {
        try {
          await new Promise<void>((resolve, reject) => {
            const id = this.nextId++;
            slot.worker.removeAllListeners('message');
            slot.worker.once('message', (r: BatchReply) =>
              r.id === id ? resolve() : reject(new Error('unexpected reply')),
            );
            slot.worker.postMessage({ id, op: 'drop' } satisfies BatchMessage);
          });
          giveBack(slot.worker);
        } catch {
          await slot.worker.terminate();
        }
      }),
    );
  }
}
