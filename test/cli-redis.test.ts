/**
 * `bloomkit redis create|add|check|info` against a real redis-server started for this file, and
 * the library's RedisBloomFilter reading what the command wrote. The command runs in this process
 * (the build's `main()`); `redis check` runs once more as the built command, as a process (the
 * end-to-end run of `redis`), and must print the same.
 */

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBloomFilter } from '../src/redis.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';
import { getFreePort } from './support/ports.js';
import { keys } from './support/random.js';
import { type RedisServerHandle, requireRedis, startRedis } from './support/redis-server.js';

const hasRedis = requireRedis();
let cli: InProcessCli;
let bin: BuiltCli;
let server: RedisServerHandle;

beforeAll(async () => {
  if (!hasRedis) return;
  cli = inProcessCli();
  bin = await buildCli();
  server = await startRedis();
});

afterAll(async () => {
  cli?.dispose();
  bin?.dispose();
  await server?.stop();
});

describe.skipIf(!hasRedis)('bloomkit redis', () => {
  it('creates, adds, checks and describes a filter that the library reads alike', async () => {
    const dir = cli.tempDir();
    const present = keys('https://example.com/r/', 500);
    const absent = keys('https://other.example/r/', 500);
    writeFileSync(join(dir, 'in.txt'), `${present.join('\n')}\n`);
    const url = ['--url', server.url];
    expect(
      (await cli.run(['redis', 'create', 'seen', '-n', '1000', '-p', '0.01', ...url])).code,
    ).toBe(0);
    const add = await cli.run(['redis', 'add', 'seen', join(dir, 'in.txt'), '--json', ...url]);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout.toString()).records).toBe(500);
    const check = await cli.run(['redis', 'check', 'seen', ...url], {
      input: `${[...present, ...absent].join('\n')}\n`,
    });
    expect(check.code).toBe(0);
    const built = bin.run(['redis', 'check', 'seen', ...url], {
      input: `${[...present, ...absent].join('\n')}\n`,
    });
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout.equals(check.stdout)).toBe(true);
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      const filter = await RedisBloomFilter.open(client, 'seen');
      const answers = await filter.hasMany([...present, ...absent]);
      const expected = [...present, ...absent].filter((_, i) => answers[i]);
      expect(check.stdout.toString()).toBe(`${expected.join('\n')}\n`);
      expect(expected.slice(0, 500)).toEqual(present);
    } finally {
      await client.quit();
    }
    const info = JSON.parse(
      (await cli.run(['redis', 'info', 'seen', '--json', ...url])).stdout.toString(),
    );
    expect(info).toMatchObject({
      name: 'seen',
      funnel: 'string',
      capacity: 1000,
      designFpp: 0.01,
      persistence: 'aof-always',
    });
    expect(Math.abs(info.estimatedCount - 500)).toBeLessThan(50);
    const none = await cli.run(['redis', 'check', 'seen', '-q', ...url], {
      input: 'nope-never-added\n',
    });
    expect(none.code).toBe(1);
    const missing = await cli.run(['redis', 'info', 'no-such-filter', ...url]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no-such-filter');
    expect((await cli.run(['redis', 'frob', 'x', ...url])).code).toBe(2);
  });

  it('add and info print the figures add and info print for a file with the same bits', async () => {
    const dir = cli.tempDir();
    const url = ['--url', server.url];
    const input = `${keys('https://example.com/full/', 3000).join('\n')}\n`;
    writeFileSync(join(dir, 'keys.txt'), input);
    expect(
      (await cli.run(['redis', 'create', 'small', '-n', '1000', '-p', '0.01', ...url])).code,
    ).toBe(0);
    const add = await cli.run(['redis', 'add', 'small', join(dir, 'keys.txt'), '--json', ...url]);
    expect(add.code, add.stderr).toBe(0);
    // The same keys into a classic filter file of the same (capacity, fpp): one shard, same bits.
    const file = join(dir, 'small.bloom');
    expect((await cli.run(['create', file, '-n', '1000', '-p', '0.01'])).code).toBe(0);
    const local = await cli.run(['add', file, join(dir, 'keys.txt'), '--json']);
    const figures = JSON.parse(add.stdout.toString());
    const filed = JSON.parse(local.stdout.toString());
    expect(figures).toMatchObject({
      records: 3000,
      estimatedCount: filed.estimatedCount,
      saturated: true,
    });
    // Saturation is against the design each keeps: the Redis filter its (1000, 0.01).
    expect(add.stderr).toContain('bloomkit redis add: warning: the filter small is saturated');
    expect(add.stderr).toContain('design rate 0.01 (at about 1,000 keys)');
    const info = JSON.parse(
      (await cli.run(['redis', 'info', 'small', '--json', ...url])).stdout.toString(),
    );
    const facts = JSON.parse((await cli.run(['info', file, '--json'])).stdout.toString());
    expect(info.estimatedCount).toBe(facts.estimatedCount);
    expect(info.expectedFpp).toBe(facts.expectedFpp);
  });

  it('refuses a server without persistence unless --durability best-effort, and says so in info', async () => {
    const lax = await startRedis({ appendonly: false });
    try {
      const url = ['--url', lax.url];
      const refused = await cli.run(['redis', 'create', 'f', '-n', '100', '-p', '0.01', ...url]);
      expect(refused.code).toBe(2);
      expect(refused.stderr.toString()).toMatch(
        /has appendonly no, save "": a crash loses every acknowledged add, silently\. .*or pass --durability best-effort to accept it/,
      );
      const ok = ['--durability', 'best-effort', ...url];
      expect((await cli.run(['redis', 'create', 'f', '-n', '100', '-p', '0.01', ...ok])).code).toBe(
        0,
      );
      const info = await cli.run(['redis', 'info', 'f', '--json', ...ok]);
      expect(JSON.parse(info.stdout.toString()).persistence).toBe('none');
      const bad = await cli.run(['redis', 'info', 'f', '--durability', 'maybe', ...url]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.toString()).toContain(
        '--durability must be strict or best-effort, got "maybe"',
      );
    } finally {
      await lax.stop();
    }
  });
});

/** The built command as a process, bounded: a hang is killed after `ms` and fails the test. */
function bounded(args: string[], ms: number, input = '') {
  const started = Date.now();
  const r = spawnSync(process.execPath, [bin.bin, ...args], {
    input,
    timeout: ms,
    killSignal: 'SIGKILL',
    env: { ...process.env, BLOOMKIT_DEBUG: '' },
  });
  expect(r.signal, `bloomkit ${args.join(' ')} still ran after ${ms} ms`).toBeNull();
  return {
    code: r.status,
    stderr: r.stderr.toString('utf8'),
    seconds: (Date.now() - started) / 1000,
  };
}

describe.skipIf(!hasRedis)('bloomkit redis when the server cannot answer', () => {
  it('with nothing listening, exits 2 at once naming the URL', async () => {
    const url = `redis://127.0.0.1:${await getFreePort()}`;
    for (const verb of [
      ['info', 'x'],
      ['add', 'x'],
    ]) {
      const r = bounded(['redis', ...verb, '--url', url], 15_000, 'a\n');
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(url);
      expect(r.stderr).toMatch(/cannot connect/);
    }
  });

  it('never prints the password of the URL: a wrong one, and a right one with another error', async () => {
    const at = server.url.replace(/^redis:\/\//, '');
    for (const [url, args] of [
      // A user the server does not know: WRONGPASS at the connection.
      [`redis://nobody:sekrit-1@${at}`, ['info', 'x']],
      // The default user takes any password here (none set): the filter is what is missing.
      [`redis://default:sekrit-1@${at}`, ['info', 'no-such-filter']],
    ] as const) {
      const r = await cli.run(['redis', ...args, '--url', url]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).not.toContain('sekrit-1');
      expect(r.stderr).toContain(url.replace('sekrit-1', '***'));
    }
  });

  /** `redis add f` on the frozen server, its stderr kept; SIGKILLed if it still runs after 20 s. */
  function watched(more: string[]) {
    const child = bin.start(['redis', 'add', 'f', '--url', frozen.url, ...more]);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.resume();
    const exited = new Promise<number | null>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('exit', (c) => {
        clearTimeout(kill);
        resolve(c);
      });
    });
    return { child, exited, stderr: () => err };
  }

  // One server for both: stopped (SIGSTOP) for a while in each test, then let go (SIGCONT).
  let frozen: RedisServerHandle;
  beforeAll(async () => {
    frozen = await startRedis();
    const create = ['redis', 'create', 'f', '-n', '100', '-p', '0.01', '--url', frozen.url];
    expect(bounded(create, 15_000).code).toBe(0);
  });
  afterAll(async () => {
    await frozen?.stop();
  });

  it('with a stopped server (SIGSTOP), exits 2 within --timeout naming the URL', () => {
    process.kill(frozen.pid, 'SIGSTOP');
    try {
      const r = bounded(['redis', 'info', 'f', '--url', frozen.url, '--timeout', '1'], 15_000);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${frozen.url}: no answer within 1 s`);
      expect(r.seconds).toBeLessThan(8);
    } finally {
      process.kill(frozen.pid, 'SIGCONT');
    }
  });

  it('with a server stopped mid-run, exits 2 within --timeout naming the URL', async () => {
    const { child, exited, stderr } = watched(['--timeout', '1']);
    // Once the command is connected (a second client on the server), the server stops.
    child.stdin!.write('a\n');
    const watcher = createClient({ url: frozen.url });
    await watcher.connect();
    try {
      for (let i = 0; i < 300; i++) {
        const info = await watcher.info('clients');
        if (Number(/connected_clients:(\d+)/.exec(info)?.[1]) >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      watcher.destroy();
    }
    process.kill(frozen.pid, 'SIGSTOP');
    const started = Date.now();
    child.stdin!.end('b\n');
    const code = await exited;
    process.kill(frozen.pid, 'SIGCONT');
    expect(code, stderr()).toBe(2);
    expect(stderr()).toContain(frozen.url);
    expect((Date.now() - started) / 1000).toBeLessThan(8);
  });

  it('a SIGTERM while a batch waits for a stopped server ends the run at once with 143', async () => {
    const { child, exited, stderr } = watched(['--timeout', '30']);
    // Once a first batch is in (the command is in its loop, its signal handler set: a signal
    // before that ends the process by Node's default), the server stops.
    child.stdin!.write('sigterm/first\n');
    const watcher = createClient({ url: frozen.url });
    await watcher.connect();
    try {
      const seen = await RedisBloomFilter.open(watcher, 'f');
      for (let i = 0; i < 300 && !(await seen.has('sigterm/first')); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      watcher.destroy();
    }
    process.kill(frozen.pid, 'SIGSTOP');
    let code: number | null;
    let seconds: number;
    try {
      // A batch that now waits for the server (up to --timeout, 30 s), then the signal.
      child.stdin!.write('sigterm/second\n');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const sent = Date.now();
      child.kill('SIGTERM');
      code = await exited;
      seconds = (Date.now() - sent) / 1000;
    } finally {
      process.kill(frozen.pid, 'SIGCONT');
    }
    expect(code, stderr()).toBe(143);
    expect(seconds).toBeLessThan(2);
  });
});
