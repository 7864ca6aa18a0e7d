/**
 * What a plain `add` or `check` of a native filter file loads, seen from the built command run
 * as a process: only its own filter type's code (no other row of the table of types), and none of
 * Node's zlib, worker_threads, crypto, http or child_process. Each run is watched by a module
 * loaded with `--import`: the module URLs come from a loader hook, Node's own modules from
 * `process.moduleLoadList` at exit (in a second run without the hook, whose worker thread would
 * count). Which classes a loaded file defines is read from its text (the build keeps names).
 */

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODECS } from '../src/index.js';
import { type BuiltCli, buildCli } from './support/cli.js';

let cli: BuiltCli;
let dir: string;

/** The command's code files, ES module or CommonJS (not the probes' own `.mjs`). */
const CODE_FILE = /\.c?js$/;

/** Node's modules a plain add or check must not load. */
const NOT_LOADED = ['zlib', 'worker_threads', 'crypto', 'http', 'child_process'];

beforeAll(async () => {
  cli = await buildCli();
  dir = cli.tempDir();
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(process.env.PROBE_OUT, url + '\\n');
  return next(url, context);
}
`,
  );
  writeFileSync(
    join(dir, 'urls.mjs'),
    `import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(`file://${join(dir, 'hooks.mjs')}`)});
// The command's files are CommonJS (loaded by require(), which the hook does not see).
const required = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const urls = Object.keys(required).map((path) => pathToFileURL(path).href);
  appendFileSync(process.env.PROBE_OUT, urls.map((u) => u + '\\n').join(''));
});
`,
  );
  writeFileSync(
    join(dir, 'natives.mjs'),
    `import { appendFileSync } from 'node:fs';
process.on('exit', () => {
  const natives = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
  appendFileSync(process.env.PROBE_OUT, natives.map((m) => m.slice(13)).join('\\n') + '\\n');
});
`,
  );
  // The same as CommonJS, loaded with --require: an ES module probe's own `import ... from
  // 'node:fs'` runs node:fs's lazy getters (fs/promises, and the stream code it loads).
  writeFileSync(
    join(dir, 'natives.cjs'),
    `const { appendFileSync } = require('node:fs');
process.on('exit', () => {
  const natives = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
  appendFileSync(process.env.PROBE_OUT, natives.map((m) => m.slice(13)).join('\\n') + '\\n');
});
`,
  );
  writeFileSync(join(dir, 'empty.txt'), '');
  writeFileSync(
    join(dir, 'wasm.mjs'),
    `import { appendFileSync } from 'node:fs';
const Module = WebAssembly.Module;
WebAssembly.Module = function (bytes) {
  appendFileSync(process.env.PROBE_OUT, bytes.length + '\\n');
  return new Module(bytes);
};
`,
  );
  // 120 kB of bits: large enough for the classic filter's kernel and the bulk checksum.
  const made = cli.run(['create', join(dir, 'f.bloom'), '-n', '100000', '-p', '0.01']);
  expect(made.code, made.stderr).toBe(0);
});
afterAll(() => cli?.dispose());

/**
 * The lines the probe `probe` wrote during `bloomkit ...args` (standard input empty: a socket, as
 * Node's spawn makes it, or with `pipe` a shell's pipe from a command that writes nothing).
 */
function probed(
  probe: 'urls' | 'natives' | 'natives-cjs' | 'wasm',
  args: string[],
  pipe = false,
): string[] {
  const out = join(dir, `${probe}-${args[0]}.txt`);
  writeFileSync(out, '');
  const loader =
    probe === 'natives-cjs'
      ? ['--require', join(dir, 'natives.cjs')]
      : ['--import', join(dir, `${probe}.mjs`)];
  const argv = [process.execPath, ...loader, cli.bin, ...args];
  const quoted = argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  const [file, fileArgs] = pipe ? ['sh', ['-c', `: | exec ${quoted}`]] : [argv[0]!, argv.slice(1)];
  const r = spawnSync(file, fileArgs, {
    env: { ...process.env, PROBE_OUT: out, BLOOMKIT_DEBUG: '' },
    input: '',
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect([0, 1]).toContain(r.status);
  // Each file once (the entry is seen by the hook and in require's cache).
  return [...new Set(readFileSync(out, 'utf8').split('\n').filter(Boolean))];
}

/** The filter classes of the table defined in the files a run loaded. */
function classesIn(urls: readonly string[]): string[] {
  const code = urls
    .filter((u) => CODE_FILE.test(u))
    .map((u) => readFileSync(fileURLToPath(u), 'utf8'))
    .join('\n');
  return CODECS.map((c) => c.filterClass.name).filter((name) =>
    new RegExp(`\\b(class _?${name}\\b|${name}\\s*=\\s*class\\b)`).test(code),
  );
}

describe.each(['check', 'add'])('a plain %s of a native classic filter file', (command) => {
  it('loads the classic filter and no other type', () => {
    const urls = probed('urls', [command, join(dir, 'f.bloom')]);
    expect(urls.some((u) => u.endsWith('/cli.cjs'))).toBe(true);
    expect(classesIn(urls)).toEqual(['BloomFilter']);
  });

  it('reads its code from a few files, not one per module (scripts/cli-chunks.ts)', () => {
    const files = probed('urls', [command, join(dir, 'f.bloom')]).filter((u) => CODE_FILE.test(u));
    // The entry, the hot path (its part the worker threads share apart), esbuild's helpers,
    // and one small file per import() target: the command, the classic type's codec, and
    // add's file lock (34 files before).
    expect(files.length, files.join('\n')).toBeLessThanOrEqual(7);
  });

  it('compiles no WebAssembly it does not run: no record search on empty input', () => {
    // The file's checksum and the classic filter's kernel; the record search (3.5 ms to
    // compile) waits for a first record.
    expect(probed('wasm', [command, join(dir, 'f.bloom')]).length).toBeLessThanOrEqual(2);
  });

  it('makes no standard stream when it reads a file and prints nothing: no stream code loaded', () => {
    // Node makes process.stdout, stdin and stderr when first read; each loads its stream code
    // (a pipe's socket, net, ...), about 6 ms of CPU a run. The command reads them only when used.
    const natives = probed('natives-cjs', [command, join(dir, 'f.bloom'), join(dir, 'empty.txt')]);
    expect(natives).toContain('fs');
    const streams = ['stream', 'net', 'internal/fs/sync_write_stream', 'tty'];
    expect(natives.filter((m) => streams.includes(m))).toEqual([]);
    // The files, and add's lock file, are opened and read with blocking calls: node:fs/promises
    // is not loaded.
    expect(natives).not.toContain('internal/fs/promises');
  });

  it('makes no standard stream either when standard input is an empty pipe', () => {
    // A pipe is read through a non-blocking descriptor of its own while no read waits: an empty
    // one is read to its end without process.stdin (whose socket loads net and stream).
    const natives = probed('natives-cjs', [command, join(dir, 'f.bloom')], true);
    expect(natives).toContain('fs');
    const streams = ['stream', 'net', 'internal/fs/sync_write_stream', 'tty'];
    expect(natives.filter((m) => streams.includes(m))).toEqual([]);
  });

  it(`loads none of Node's ${NOT_LOADED.join(', ')}`, () => {
    const natives = probed('natives', [command, join(dir, 'f.bloom')]);
    expect(natives).toContain('fs'); // the probe sees Node's modules
    expect(natives.filter((m) => NOT_LOADED.includes(m))).toEqual([]);
  });
});
