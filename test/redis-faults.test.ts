/**
 * Faults with real servers: the server killed in the middle of a pipelined batch (a typed error
 * within a bounded time, no hang), a hung server (the filter's timeout), a crash and restart with
 * AOF on (every acknowledged add still answers true), and two processes adding the same keys at
 * once (no false negative, no key reported new by both).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  RedisBloomFilter,
  RedisFilterError,
  RedisFilterTimeoutError,
  RedisScalableBloomFilter,
} from '../src/redis.js';
import { keys } from './support/random.js';
import { clientTemplate } from './support/redis-clients.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';
import { bundleProgram, removeBundles } from './support/worker-bundle.js';

const hasRedis = requireRedis();

/**
 * A node-redis client, not connected yet. `Client` is the type this infers: typing it
 * `ReturnType<typeof createClient>` makes tsc compare two instantiations of node-redis' command
 * maps (seconds of type checking; see test/support/redis-clients.ts).
 */
function makeClient(url: string, options: { offlineQueue?: boolean; reconnect?: boolean }) {
  return clientTemplate.duplicate({
    url,
    disableOfflineQueue: !options.offlineQueue,
    socket: {
      reconnectStrategy: options.reconnect === false ? false : () => 50,
      connectTimeout: 1000,
    },
  });
}
type Client = ReturnType<typeof makeClient>;

afterAll(removeBundles);

describe.skipIf(!hasRedis)('Redis filters under faults', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function server(opts: Parameters<typeof startRedis>[0] = {}): Promise<RedisServerHandle> {
    const s = await startRedis(opts);
    cleanups.push(() => s.stop());
    return s;
  }

  /**
   * A plain server for the tests that leave it running (the hung server and the races, each on
   * keys of its own): started by the first that asks, stopped after the last.
   */
  let shared: Promise<RedisServerHandle> | undefined;
  const sharedServer = (): Promise<RedisServerHandle> => {
    shared ??= startRedis();
    return shared;
  };
  afterAll(async () => {
    await (await shared)?.stop();
  });

  async function connect(
    url: string,
    options: { offlineQueue?: boolean; reconnect?: boolean } = {},
  ): Promise<Client> {
    const c = makeClient(url, options);
    c.on('error', () => undefined);
    await c.connect();
    cleanups.push(async () => {
      if (c.isOpen) c.destroy();
    });
    return c;
  }

  it('server killed in the middle of a pipelined batch: a typed error, fast', async () => {
    const batch = keys('k', 300_000);
    for (const offlineQueue of [false, true]) {
      const s = await server();
      // No reconnecting here: once the server is gone its port is free, and another test process
      // may start a server on it. (The hung-server test below shows the filter's timeout.)
      const client = await connect(s.url, { offlineQueue, reconnect: false });
      const f = await RedisBloomFilter.create(client, 'kill', { capacity: 300_000, fpp: 0.01 });
      const t0 = performance.now();
      const pending = f.addMany(batch).then(
        () => 'completed',
        (err: unknown) => err,
      );
      setTimeout(() => void s.kill(), 100);
      const outcome = await pending;
      const ms = performance.now() - t0;
      console.log(
        `offline queue ${offlineQueue ? 'on' : 'off'}: ${outcome instanceof Error ? `${outcome.name} after ${ms.toFixed(0)} ms: ${outcome.message}` : outcome}`,
      );
      expect(outcome).toBeInstanceOf(RedisFilterError);
      expect((outcome as Error).message).toMatch(/RedisBloomFilter "kill": addMany failed/);
      expect(ms).toBeLessThan(5000);
      // Later calls fail at once too (the client is closed).
      const t1 = performance.now();
      await expect(f.has('x')).rejects.toBeInstanceOf(RedisFilterError);
      expect(performance.now() - t1).toBeLessThan(500);
    }
  });

  it('hung server (SIGSTOP): the filter timeout bounds every call', async () => {
    const s = await sharedServer();
    const client = await connect(s.url);
    const f = await RedisBloomFilter.create(client, 'hung', {
      capacity: 1000,
      fpp: 0.01,
      timeout: 300,
    });
    await f.add('before');
    process.kill(s.pid, 'SIGSTOP');
    try {
      const t0 = performance.now();
      await expect(f.addMany(keys('k', 1000))).rejects.toBeInstanceOf(RedisFilterTimeoutError);
      await expect(f.has('before')).rejects.toThrow(/has did not complete within 300 ms/);
      expect(performance.now() - t0).toBeLessThan(2000);
    } finally {
      process.kill(s.pid, 'SIGCONT');
    }
    expect(await f.has('before')).toBe(true);
  });

  it('crash and restart with AOF (appendfsync always): every acknowledged add answers true', async () => {
    const s = await server({ appendonly: true, appendfsync: 'always' });
    const client = await connect(s.url);
    const f = await RedisBloomFilter.create(client, 'aof', {
      capacity: 4_000,
      fpp: 0.001,
      shardBits: 65536,
      timeout: 60_000, // 4,000 calls queue behind each other in one client
    });
    const all = keys('k', 4_000);
    const acked: string[] = [];
    let failed = 0;
    let killed: Promise<void> | undefined;
    // Individual adds, all issued at once (node-redis pipelines them); kill once a quarter is in.
    await Promise.all(
      all.map((k) =>
        f.add(k).then(
          () => {
            acked.push(k);
            if (acked.length === 1_000) killed = s.kill();
          },
          () => {
            failed++;
          },
        ),
      ),
    );
    await killed;
    console.log(`AOF: ${acked.length} adds acknowledged, ${failed} failed when the server died`);
    expect(acked.length).toBeGreaterThanOrEqual(1_000);
    expect(failed).toBeGreaterThan(0);
    await s.restart();
    const again = await connect(s.url);
    const g = await RedisBloomFilter.open(again, 'aof');
    const answers = await g.hasMany(acked);
    expect(answers.filter((x) => !x)).toEqual([]);
  });

  // The adder runs bundled (plain JavaScript): through tsx each process would compile the sources.
  const adder = fileURLToPath(new URL('./support/redis-adder.ts', import.meta.url));

  function child(
    program: string,
    args: string[],
  ): {
    proc: ChildProcess;
    ready: Promise<void>;
    result: Promise<number[]>;
  } {
    const proc = spawn(process.execPath, [program, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    });
    let out = '';
    let err = '';
    proc.stderr!.on('data', (d) => {
      err += d;
    });
    const ready = new Promise<void>((resolve, reject) => {
      proc.stdout!.on('data', (d) => {
        out += d;
        if (out.startsWith('ready\n')) resolve();
      });
      proc.on('exit', (code) => reject(new Error(`adder exited early (${code}): ${err}`)));
    });
    const result = new Promise<number[]>((resolve, reject) => {
      proc.on('exit', (code) => {
        if (code !== 0) reject(new Error(`adder exited with ${code}: ${err}`));
        else resolve(JSON.parse(out.slice('ready\n'.length)) as number[]);
      });
    });
    return { proc, ready, result };
  }

  for (const kind of ['bloom', 'scalable'] as const) {
    it(`two processes adding the same keys at once (${kind}): no key new twice, no false negative`, async () => {
      const [s, program] = await Promise.all([sharedServer(), bundleProgram(adder)]);
      // The scalable filter (first layer count / 10 keys) grows three layers during the race.
      const count = kind === 'bloom' ? 5_000 : 2_500;
      const a = child(program, [s.url, kind, `race-${kind}`, String(count), '12345']);
      const b = child(program, [s.url, kind, `race-${kind}`, String(count), '67890']);
      await Promise.all([a.ready, b.ready]);
      a.proc.stdin!.end('go\n');
      b.proc.stdin!.end('go\n');
      const [newA, newB] = await Promise.all([a.result, b.result]);
      const inA = new Set(newA);
      const both = newB.filter((i) => inA.has(i));
      console.log(
        `${kind}: process A saw ${newA.length} keys as new, B ${newB.length}, both ${both.length}`,
      );
      expect(both).toEqual([]);
      expect(newA.length + newB.length).toBeGreaterThan(count * 0.97);
      // Both processes really raced (each in its own shuffled order): a process that ran after
      // the other had finished would win no key at all, so each winning 1% proves they overlapped
      // (a scheduler may still let one run ahead for a while on a busy machine).
      expect(Math.min(newA.length, newB.length)).toBeGreaterThan(count * 0.01);
      const client = await connect(s.url);
      const f =
        kind === 'bloom'
          ? await RedisBloomFilter.open(client, `race-${kind}`)
          : await RedisScalableBloomFilter.open(client, `race-${kind}`);
      const answers = await f.hasMany(Array.from({ length: count }, (_, i) => `key:${i}`));
      expect(answers.every(Boolean)).toBe(true);
    });
  }
});
