/**
 * The files the command writes and reads, against real processes and real files: two writers
 * of one filter file (both processes' keys kept), a lock left by a killed process, a FIFO or a
 * device where a filter file should be (refused at once, never waited on, never replaced), a
 * symbolic link (written through), an existing output (replaced only with --force), a symbolic
 * link planted where the old Guava writer put its predictable temporary file, temporary files
 * a killed writer left, and `serve` meeting a file it cannot open.
 *
 * Subprocesses where only a process shows it (two writers at once, a hang bounded by a timeout,
 * a server that must stay up); the rest runs main() in this process.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  constants,
  existsSync,
  promises as fsp,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MembershipFilter } from '../src/filters/filter.js';
import { load } from '../src/node/io.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';

let cli: InProcessCli;
let bin: BuiltCli;
let dir: string;
const isRoot = process.getuid?.() === 0;

beforeAll(async () => {
  cli = inProcessCli();
  bin = await buildCli();
  dir = cli.tempDir();
});

afterAll(() => {
  cli?.dispose();
  bin?.dispose();
});

const path = (name: string) => join(dir, name);

function ok(r: { code: number | null; stderr: string }, code = 0): void {
  expect(r.code, r.stderr).toBe(code);
}

function lines(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}`);
}

/** A pid that ran and has exited (a killed writer's). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
  return r.pid!;
}

function mkfifo(p: string): void {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

/** Waits until `done()` holds, polling every 20 ms; fails after `ms`. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs the built command as a process; resolves with its exit status and stderr. */
async function finished(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout?.resume();
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

/**
 * Runs the built command with `input` on standard input, killed after `ms`: a hang shows as
 * `signal` SIGKILL instead of a stuck test.
 */
async function bounded(
  args: string[],
  ms: number,
  input = '',
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = bin.start(args);
  child.stdin!.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  const r = await finished(child);
  clearTimeout(timer);
  return { ...r, signal: child.signalCode };
}

async function missing(file: string, keys: readonly string[]): Promise<number> {
  const filter = (await load(file)) as MembershipFilter<string>;
  return keys.filter((k) => !filter.has(k)).length;
}

describe('two writers of one filter file', () => {
  const a = lines('writer-a/', 60_000);
  const b = lines('writer-b/', 60_000);

  beforeAll(() => {
    writeFileSync(path('a.txt'), `${a.join('\n')}\n`);
    writeFileSync(path('b.txt'), `${b.join('\n')}\n`);
  });

  it('two add processes at once: both exit 0 and the file holds both inputs', async () => {
    const file = path('two.bloom');
    ok(await cli.run(['create', file, '-n', '400000', '-p', '0.001']));
    const runs = await Promise.all(
      ['a.txt', 'b.txt'].map((input) => finished(bin.start(['add', file, path(input)]))),
    );
    for (const r of runs) ok(r);
    expect(await missing(file, a)).toBe(0);
    expect(await missing(file, b)).toBe(0);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('two dedup --state processes at once: a third run finds every key of both seen', async () => {
    const state = path('two-state.bloom');
    // Both start, and one has read the state and printed, before either input ends:
    // without a lock both would hold the empty state and the last to write would win.
    const children = [a, b].map((keys) => {
      const child = bin.start(['dedup', '--state', state, '-n', '400000']);
      child.stdin!.write(`${keys.join('\n')}\n`);
      return child;
    });
    const runs = children.map((child) => finished(child));
    // Whichever took the lock first prints; the other waits for it (the order is the kernel's).
    await Promise.race(children.map((child) => once(child.stdout!, 'data')));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const child of children) child.stdin!.end();
    for (const r of await Promise.all(runs)) ok(r);
    const again = await cli.run(['dedup', '--state', state, path('a.txt'), path('b.txt')]);
    ok(again);
    expect(again.stdout.length).toBe(0);
  });

  it('a lock held by a live process: add waits the bounded time, then exit 2 naming it', async () => {
    const file = path('held.bloom');
    ok(await cli.run(['create', file, '-n', '1000', '-p', '0.01']));
    const before = readFileSync(file);
    // This test process is the holder: alive, on this host.
    const holder = { pid: process.pid, start: '', host: hostname(), since: 'now' };
    writeFileSync(`${file}.lock`, JSON.stringify(holder));
    const started = Date.now();
    const r = await cli.run(['add', file, path('a.txt')], { env: { BLOOMKIT_LOCK_WAIT: '0.3' } });
    ok(r, 2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(r.stderr).toContain(`pid ${process.pid}`);
    expect(r.stderr).toContain(`${file}.lock`);
    expect(readFileSync(file).equals(before)).toBe(true);
    const d = await cli.run(['dedup', '--state', file, path('a.txt')], {
      env: { BLOOMKIT_LOCK_WAIT: '0' },
    });
    ok(d, 2);
    expect(d.stdout.length).toBe(0);
    expect(d.stderr).toContain('being updated by another process');
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("a lock left by a killed process is taken over, and the killed add's temporary files go", async () => {
    const file = path('stale.bloom');
    ok(await cli.run(['create', file, '-n', '1000', '-p', '0.01']));
    const dead = deadPid();
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: dead, start: '1', host: hostname(), since: 'then' }),
    );
    const staleTemp = `${file}.${dead}.k1ll3d00.tmp`;
    const liveTemp = `${file}.${process.pid}.l1ve0000.tmp`;
    writeFileSync(staleTemp, Buffer.alloc(4096));
    writeFileSync(liveTemp, 'a running writer');
    const r = await cli.run(['add', file], { input: 'x\ny\n', env: { BLOOMKIT_LOCK_WAIT: '5' } });
    ok(r);
    expect(await missing(file, ['x', 'y'])).toBe(0);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(existsSync(staleTemp)).toBe(false);
    expect(existsSync(liveTemp)).toBe(true);
  });
});

describe('what is not a regular file', () => {
  it('a FIFO as the filter file: add and info exit 2 at once (no reader is waited for)', async () => {
    const fifo = path('pipe.bloom');
    mkfifo(fifo);
    for (const args of [
      ['add', fifo],
      ['info', fifo],
      ['check', fifo, 'x'],
    ]) {
      const r = await bounded(args, 10_000, 'k\n');
      expect(r.signal, `${args[0]} hung on a FIFO`).toBeNull();
      ok(r, 2);
      expect(r.stderr).toContain('FIFO');
    }
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  }, 60_000);

  it('a FIFO as an input, plain and gzip: its writer is waited for, never cut off, and every line is added', async () => {
    const file = path('fifo-input.bloom');
    ok(await cli.run(['create', file, '-n', '10000', '-p', '0.01']));
    const keys = lines('fifo/', 3000);
    writeFileSync(path('fifo-keys.txt'), `${keys.join('\n')}\n`);
    for (const [name, writer] of [
      ['in.fifo', `cat ${path('fifo-keys.txt')} > ${path('in.fifo')}`],
      ['in-gz.fifo', `gzip -c ${path('fifo-keys.txt')} > ${path('in-gz.fifo')}`],
    ] as const) {
      mkfifo(path(name));
      // The writer blocks in open() until the command opens the FIFO to read it.
      const w = spawn('sh', ['-c', writer], { stdio: 'ignore' });
      const exited = once(w, 'exit');
      ok(await cli.run(['add', file, path(name)]));
      const [code, signal] = await exited;
      expect({ code, signal }, `${name}: its writer`).toEqual({ code: 0, signal: null });
    }
    expect(await missing(file, keys)).toBe(0);
  }, 60_000);

  it('standard input as a pipe whose writer pauses: every line once, in order, plain and gzip', async () => {
    // The command reads a pipe through a non-blocking descriptor of its own until a read would
    // wait, then through Node's stream: the writer's pauses make it change over mid-input, and
    // the first part (over 64 KiB, a pipe's capacity) takes several reads before the change.
    const keys = lines('piped/', 9000);
    const parts = [keys.slice(0, 6000), keys.slice(6000, 8000), keys.slice(8000)];
    for (const [i, part] of parts.entries()) {
      writeFileSync(path(`pipe-part${i}.txt`), `${part.join('\n')}\n`);
    }
    const cat = (tool: string) =>
      parts.map((_, i) => `${tool} ${path(`pipe-part${i}.txt`)}`).join('; sleep 0.5; ');
    const dedup = spawn('sh', [
      '-c',
      `(${cat('cat')}) | exec "$0" "$1" dedup`,
      process.execPath,
      bin.bin,
    ]);
    let out = '';
    dedup.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    ok(await finished(dedup));
    expect(out).toBe(`${keys.join('\n')}\n`);
    // gzip members, one per part, cut by the pauses: read as one stream, as zcat does.
    const file = path('pipe-gzip.bloom');
    ok(await cli.run(['create', file, '-n', '20000', '-p', '0.01']));
    const add = spawn('sh', [
      '-c',
      `(${cat('gzip -c')}) | exec "$0" "$1" add "$2"`,
      process.execPath,
      bin.bin,
      file,
    ]);
    ok(await finished(add));
    expect(await missing(file, keys)).toBe(0);
  }, 60_000);

  it('standard input as a pipe whose writer stays silent: Ctrl-C still ends the run (130)', async () => {
    const file = path('pipe-silent.bloom');
    ok(await cli.run(['create', file, '-n', '1000', '-p', '0.01']));
    ok(await cli.run(['add', file], { input: 'k\n' }));
    // A FIFO the test holds open for writing: the command's standard input is a pipe whose writer
    // writes one line, then nothing.
    const fifo = path('silent.fifo');
    mkfifo(fifo);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = await fsp.open(fifo, 'w');
    try {
      const child = spawn(process.execPath, [bin.bin, 'check', file], {
        stdio: [reader, 'pipe', 'pipe'],
      });
      closeSync(reader);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const done = finished(child);
      await writer.write('k\n');
      await until(() => out === 'k\n', 20_000);
      child.kill('SIGINT');
      expect((await done).code).toBe(130);
    } finally {
      await writer.close();
    }
  }, 60_000);

  it('standard input fed faster than it is read: SIGTERM still ends the run (143), the file whole', async () => {
    const file = path('pipe-fast.bloom');
    ok(await cli.run(['create', file, '-n', '1000', '-p', '0.01']));
    // An anonymous pipe from a writer that never ends and is mostly ahead: the command reads it
    // on its own descriptor, where only its turns of the event loop let the signal in (whether a
    // read ever waits here depends on timing: test/cli-stdin-pipe.test.ts holds the reader to
    // its turns). The shell says the command's pid, then its exit status.
    const pidFile = path('pipe-fast.pid');
    const statusFile = path('pipe-fast.status');
    const shell = spawn(
      'sh',
      [
        '-c',
        'yes fast/line | "$0" "$1" add "$2" & echo $! > "$3"; wait $!; echo $? > "$4"',
        process.execPath,
        bin.bin,
        file,
        pidFile,
        statusFile,
      ],
      { stdio: 'ignore' },
    );
    const exited = once(shell, 'exit');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
    await exited;
    expect(readFileSync(statusFile, 'utf8').trim()).toBe('143');
    expect(await missing(file, ['fast/line'])).toBe(0);
  }, 60_000);

  it('a FIFO as an output: convert, merge, cascade and create --force refuse it, and it stays', async () => {
    const src = path('src.bloom');
    ok(await cli.run(['create', src, '-n', '1000', '-p', '0.01']));
    writeFileSync(path('inc.txt'), 'a\nb\n');
    writeFileSync(path('exc.txt'), 'c\nd\n');
    const out = path('out-fifo');
    mkfifo(out);
    const runs = [
      ['convert', src, out, '--to', 'guava', '--force'],
      ['convert', src, out, '--to', 'native'],
      ['merge', out, src, '--force'],
      ['create', out, '-n', '10', '-p', '0.1', '--force'],
      ['cascade', 'build', '--include', path('inc.txt'), '--exclude', path('exc.txt'), out],
    ];
    for (const args of runs) {
      const r = await cli.run(args);
      ok(r, 2);
      expect(r.stderr, args.join(' ')).toMatch(/FIFO|exists/);
      expect(lstatSync(out).isFIFO(), args.join(' ')).toBe(true);
    }
    expect(readdirSync(dir).filter((n) => n.startsWith('out-fifo.'))).toEqual([]);
  });

  it.skipIf(!isRoot)('a device node as an output (as root): never replaced', async () => {
    const src = path('dev-src.bloom');
    ok(await cli.run(['create', src, '-n', '1000', '-p', '0.01']));
    const device = path('null-device');
    // The same device as /dev/null (char 1:3), made here so that nothing shared is at stake.
    const made = spawnSync('mknod', [device, 'c', '1', '3']);
    if (made.status !== 0) throw new Error(`mknod: ${made.stderr}`);
    for (const args of [
      ['convert', src, device, '--to', 'guava', '--force'],
      ['create', device, '-n', '10', '-p', '0.1', '--force'],
    ]) {
      ok(await cli.run(args), 2);
      expect(lstatSync(device).isCharacterDevice(), args.join(' ')).toBe(true);
    }
  });
});

describe('outputs: symbolic links, existing files, temporary files', () => {
  it('add through a symbolic link updates its target and leaves the link a link', async () => {
    const real = path('real.bloom');
    const link = path('link.bloom');
    ok(await cli.run(['create', real, '-n', '1000', '-p', '0.01']));
    symlinkSync('real.bloom', link);
    ok(await cli.run(['add', link], { input: 'through\nthe\nlink\n' }));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(await missing(real, ['through', 'the', 'link'])).toBe(0);
    ok(await cli.run(['dedup', '--state', link], { input: 'state\n' }));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(await missing(real, ['state'])).toBe(0);
  });

  it('convert, merge and cascade refuse an existing output without --force, replace it with', async () => {
    const src = path('ex-src.bloom');
    ok(await cli.run(['create', src, '-n', '1000', '-p', '0.01']));
    writeFileSync(path('ex-inc.txt'), 'a\nb\n');
    writeFileSync(path('ex-exc.txt'), 'c\nd\n');
    const out = path('existing.out');
    const cascade = ['cascade', 'build', '--include', path('ex-inc.txt')];
    const runs = [
      ['convert', src, out, '--to', 'guava'],
      ['convert', src, out, '--to', 'native'],
      ['merge', out, src],
      [...cascade, '--exclude', path('ex-exc.txt'), out],
    ];
    for (const args of runs) {
      writeFileSync(out, 'precious');
      const r = await cli.run(args);
      ok(r, 2);
      expect(r.stderr, args.join(' ')).toContain('exists (use --force');
      expect(readFileSync(out, 'utf8'), args.join(' ')).toBe('precious');
      ok(await cli.run([...args, '--force']));
      expect(readFileSync(out, 'utf8'), args.join(' ')).not.toBe('precious');
    }
  });

  it('SIGKILL during add leaves its temporary file and lock; the next add removes both', async () => {
    const file = path('killed.bloom');
    ok(await cli.run(['create', file, '-n', '10M', '-p', '0.001'])); // 18 MB
    const temps = () =>
      readdirSync(dir).filter((n) => n.startsWith('killed.bloom.') && n.endsWith('.tmp'));
    // Killed the moment its temporary file appears (in the middle of writing 18 MB and fsync).
    for (let attempt = 0; attempt < 5 && temps().length === 0; attempt++) {
      const child = bin.start(['add', file]);
      child.stdin!.end('k\n');
      const watcher = watch(dir, (_event, name) => {
        if (name?.startsWith('killed.bloom.') && name.endsWith('.tmp')) child.kill('SIGKILL');
      });
      await once(child, 'close');
      watcher.close();
    }
    expect(temps().length).toBeGreaterThan(0);
    expect(existsSync(`${file}.lock`)).toBe(true);
    ok(await cli.run(['add', file], { input: 'after\n', env: { BLOOMKIT_LOCK_WAIT: '5' } }));
    expect(temps()).toEqual([]);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(await missing(file, ['after'])).toBe(0);
  });

  it('a symbolic link planted at the old predictable temporary name is not followed', async () => {
    const src = path('g-src.bloom');
    ok(await cli.run(['create', src, '-n', '1000', '-p', '0.01']));
    writeFileSync(path('g-inc.txt'), 'a\nb\n');
    writeFileSync(path('g-exc.txt'), 'c\nd\n');
    const victim = path('victim.txt');
    const outputs: [string, string[]][] = [
      ['planted.guava', ['convert', src, path('planted.guava'), '--to', 'guava']],
      [
        'planted.mlbf',
        [
          'cascade',
          'build',
          '--include',
          path('g-inc.txt'),
          '--exclude',
          path('g-exc.txt'),
          path('planted.mlbf'),
          '--format',
          'mlbf',
        ],
      ],
    ];
    for (const [name, args] of outputs) {
      writeFileSync(victim, 'not yours');
      // The old writer opened `.<out>.<pid>.tmp` with 'w' (following a link) and renamed it.
      symlinkSync(victim, path(`.${name}.${process.pid}.tmp`));
      ok(await cli.run(args));
      expect(readFileSync(victim, 'utf8'), name).toBe('not yours');
      expect(lstatSync(path(name)).isFile(), name).toBe(true);
      expect(statSync(path(name)).size).toBeGreaterThan(9);
    }
  });
});

describe('serve', () => {
  /** Starts `bloomkit serve DIR` and resolves with the process and its URL. */
  async function serve(root: string): Promise<{ child: ChildProcess; url: string }> {
    const child = bin.start(['serve', root]);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 20_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /at (http:\/\/\S+\/)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.on('exit', () => reject(new Error(`serve exited: ${out}`)));
    });
    return { child, url };
  }

  it('a file that cannot be opened is an error response, and the server keeps running', async () => {
    // A regular file that stat() sees and open() refuses. As root, permission bits do not stop
    // a read; /proc/sys/vm/drop_caches (mode 0200) does, for root too.
    let root: string;
    let name: string;
    if (isRoot && existsSync('/proc/sys/vm/drop_caches')) {
      root = '/proc/sys/vm';
      name = 'drop_caches';
    } else {
      root = path('www');
      mkdirSync(root);
      name = 'secret.txt';
      writeFileSync(join(root, name), 'x', { mode: 0 });
    }
    const { child, url } = await serve(root);
    try {
      const refused = await fetch(url + name);
      expect(refused.status).toBeGreaterThanOrEqual(400);
      await refused.arrayBuffer();
      // Still up: it answers the next request.
      const next = await fetch(`${url}no-such-file`);
      expect(next.status).toBe(404);
      await next.arrayBuffer();
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGTERM');
      await once(child, 'close');
    }
  });

  it("--host '' is refused, not taken for every interface", async () => {
    const r = await bounded(['serve', dir, '--host', ''], 10_000);
    expect(r.signal, 'serve bound and kept running').toBeNull();
    ok(r, 2);
    expect(r.stderr).toContain('host');
  }, 30_000);
});
