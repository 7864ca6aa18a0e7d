/**
 * The browser side of test/browser-workers.test.ts: functions that run in a page and in its Web
 * Workers (injected by source with `toString()`, so they use nothing from outside but their
 * arguments and each other), and the types of what they report.
 *
 * The page makes a shared filter, posts `share()`'s handle to module workers that open it with
 * `fromShared`, releases them together at a gate (`Atomics.wait`/`notify`), and then checks every
 * live key on its own filter object; a page without shared memory reports how each way into it
 * fails.
 */
import type * as bloomkit from '../../src/index.js';

export type Lib = typeof bloomkit;
export type SharedType = 'classic' | 'blocked' | 'split-block' | 'counting';

/**
 * Worker `w`'s operations, in its order: each of its keys is added; with `mixed`, after adding
 * key j it removes key j - 2 unless j - 2 is a multiple of 32. So one key in 32 stays (and the
 * last two), removes race other workers' adds on the same counters, and every remove follows its
 * own key's add in the same worker. Runs in Node, the page and the workers, so it uses nothing
 * from outside.
 */
export function operations(
  w: number,
  count: number,
  mixed: boolean,
): [op: 'add' | 'remove', key: string][] {
  const ops: [op: 'add' | 'remove', key: string][] = [];
  for (let j = 0; j < count; j++) {
    ops.push(['add', `worker-${w}/key-${j}`]);
    if (mixed && j >= 2 && (j - 2) % 32 !== 0) ops.push(['remove', `worker-${w}/key-${j - 2}`]);
  }
  return ops;
}

/** What the test uses of each shareable class. */
interface SharedClass {
  new (shape: object): SharedLike;
  create(options: { capacity: number; fpp: number; shared?: boolean }): SharedLike;
  fromShared(handle: bloomkit.SharedFilterHandle): SharedLike;
}
interface SharedLike {
  add(key: string): boolean;
  has(key: string): boolean;
  toBytes(): Uint8Array;
  share(): bloomkit.SharedFilterHandle;
  shape(): object;
}

/** The classes that open each handle type. */
export function classes(lib: Lib): Record<SharedType, SharedClass> {
  return {
    classic: lib.BloomFilter,
    blocked: lib.BlockedBloomFilter,
    'split-block': lib.SplitBlockBloomFilter,
    counting: lib.CountingBloomFilter,
  } as unknown as Record<SharedType, SharedClass>;
}

/** The few browser globals used here (the test compiles without the DOM library). */
interface BrowserWorker {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: { message: string }) => void) | null;
}
export interface BrowserGlobals {
  crossOriginIsolated: boolean;
  Worker: new (url: string, options: { type: 'module' }) => BrowserWorker;
}
interface WorkerScope {
  crossOriginIsolated: boolean;
  postMessage(message: unknown): void;
  onmessage: ((e: { data: unknown }) => void) | null;
}

/** What a worker reports. */
export interface WorkerReport {
  isolated: boolean;
  done: number;
  error?: string;
}

/**
 * The worker module's message handler: open the handle, say ready, wait at the gate, run its
 * operations, report. (Source injected into worker.js.)
 */
function workerMain(lib: Lib, scope: WorkerScope): void {
  scope.onmessage = (e) => {
    const { handle, gate, worker, count, mixed } = e.data as {
      handle: bloomkit.SharedFilterHandle;
      gate: SharedArrayBuffer;
      worker: number;
      count: number;
      mixed: boolean;
    };
    try {
      const filter = classes(lib)[handle.type as SharedType].fromShared(handle);
      const ops = operations(worker, count, mixed);
      const flag = new Int32Array(gate);
      scope.postMessage({ ready: true });
      Atomics.wait(flag, 0, 0);
      for (const [op, key] of ops) {
        if (op === 'add') filter.add(key);
        else (filter as bloomkit.CountingBloomFilter).remove(key);
      }
      scope.postMessage({ isolated: scope.crossOriginIsolated, done: ops.length });
    } catch (err) {
      scope.postMessage({ isolated: scope.crossOriginIsolated, done: 0, error: String(err) });
    }
  };
}

/** What the isolated page reports for one type. */
export interface PageReport {
  isolated: boolean;
  sharedArrayBuffer: string;
  workers: WorkerReport[];
  checked: number;
  missing: string[];
  bytes: string;
  guava: string | null;
}

/**
 * Runs in the page: a shared filter of `type`, its handle posted to `workers` Web Workers which
 * are released together; then every key added and not removed is looked up on the page's own
 * filter object, and its bytes returned as hex.
 */
export async function runShared(
  lib: Lib,
  type: SharedType,
  shape: object,
  workers: number,
  count: number,
): Promise<PageReport> {
  const hex = (b: Uint8Array): string =>
    Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  const g = globalThis as unknown as BrowserGlobals;
  const mixed = type === 'counting';
  const filter = new (classes(lib)[type])({ ...shape, shared: true });
  const handle = filter.share();
  const gate = new SharedArrayBuffer(4);
  const started = Array.from({ length: workers }, () => {
    const worker = new g.Worker('./worker.js', { type: 'module' });
    let onReady!: () => void;
    const ready = new Promise<void>((r) => {
      onReady = r;
    });
    const done = new Promise<WorkerReport>((resolve) => {
      worker.onerror = (e) => resolve({ isolated: false, done: 0, error: `onerror: ${e.message}` });
      worker.onmessage = (e) => {
        const m = e.data as WorkerReport & { ready?: boolean };
        if (m.ready) onReady();
        else resolve(m);
      };
    });
    return { worker, ready, done };
  });
  started.forEach(({ worker }, w) => {
    worker.postMessage({ handle, gate, worker: w, count, mixed });
  });
  const all = Promise.all(started.map((s) => s.done));
  // A worker that fails before 'ready' ends the wait with its report.
  await Promise.race([Promise.all(started.map((s) => s.ready)), all]);
  const flag = new Int32Array(gate);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  const reports = await all;
  for (const s of started) s.worker.terminate();
  const missing: string[] = [];
  let checked = 0;
  for (let w = 0; w < workers; w++) {
    const present = new Set<string>();
    for (const [op, key] of operations(w, count, mixed)) {
      if (op === 'add') present.add(key);
      else present.delete(key);
    }
    for (const key of present) {
      checked++;
      if (!filter.has(key)) missing.push(key);
    }
  }
  return {
    isolated: g.crossOriginIsolated,
    sharedArrayBuffer: typeof SharedArrayBuffer,
    workers: reports,
    checked,
    missing: missing.slice(0, 10),
    bytes: hex(filter.toBytes()),
    guava: filter instanceof lib.BloomFilter ? hex(filter.toGuava()) : null,
  };
}

/** Runs in the plain page: each way into shared memory, and how it fails. */
export function tryShared(lib: Lib) {
  const outcome = (f: () => unknown): { name: string; message: string } => {
    try {
      f();
      return { name: 'none', message: 'no error' };
    } catch (e) {
      return { name: (e as Error).name, message: (e as Error).message };
    }
  };
  const fake = {
    kind: 'bloomkit-shared',
    type: 'classic',
    shape: { bits: 64, hashes: 3 },
    buffer: new ArrayBuffer(8),
    byteOffset: 0,
  } as unknown as bloomkit.SharedFilterHandle;
  const c = classes(lib);
  return {
    isolated: (globalThis as unknown as BrowserGlobals).crossOriginIsolated,
    sharedArrayBuffer: typeof SharedArrayBuffer,
    create: Object.fromEntries(
      Object.entries(c).map(([type, C]) => [
        type,
        outcome(() => C.create({ capacity: 100, fpp: 0.01, shared: true })),
      ]),
    ),
    share: outcome(() => lib.BloomFilter.create({ capacity: 100, fpp: 0.01 }).share()),
    fromShared: outcome(() => lib.BloomFilter.fromShared(fake)),
    exported: typeof lib.SharedMemoryUnavailableError,
  };
}

/**
 * The page's module script and the worker module, with the functions above injected as source:
 * both import the core bundle as `./bloomkit.js`. The page exposes `globalThis.bloomkitTest`
 * (`runShared(type, shape, workers, count)`, `tryShared()`).
 */
export function sharedPageSources(): { html: string; worker: string } {
  const shared = `const operations = ${operations.toString()};\nconst classes = ${classes.toString()};`;
  const html = `<!doctype html><meta charset="utf-8"><title>bloomkit shared filters</title>
<script type="module">
import * as lib from './bloomkit.js';
${shared}
const runShared = ${runShared.toString()};
const tryShared = ${tryShared.toString()};
globalThis.bloomkitTest = {
  runShared: (...args) => runShared(lib, ...args),
  tryShared: () => tryShared(lib),
};
</script>`;
  const worker = `import * as lib from './bloomkit.js';
${shared}
(${workerMain.toString()})(lib, self);`;
  return { html, worker };
}
