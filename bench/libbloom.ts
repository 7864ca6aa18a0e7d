/**
 * libbloom (C, Debian's libbloom-dev) as the benchmark's anchor: compiles bench/c/libbloom-bench.c
 * against the installed library once per source version, writes the keys of a run as a packed
 * file, and runs it. Where the library or a C compiler is missing, {@link runLibbloom} returns
 * null and says why on stderr, and the report leaves the row out.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packAll } from '../src/hash/pack.js';

const here = dirname(fileURLToPath(import.meta.url));

/** What libbloom-bench prints. */
export interface LibbloomResult {
  add: number;
  hasPresent: number;
  hasAbsent: number;
  falsePositives: number;
  bits: number;
  hashes: number;
}

let binary: string | null | undefined;

/** The compiled benchmark, or null (with a message) when it cannot be built here. */
function compile(): string | null {
  if (binary !== undefined) return binary;
  binary = null;
  if (!existsSync('/usr/include/bloom.h')) {
    console.error('libbloom is missing (apt-get install libbloom-dev): the C anchor is left out.');
    return null;
  }
  const source = join(here, 'c', 'libbloom-bench.c');
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `bloomkit-bench-c-${hash}`);
  const out = join(dir, 'libbloom-bench');
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    const cc = spawnSync('cc', ['-O2', '-o', out, source, '-lbloom'], { stdio: 'inherit' });
    if (cc.status !== 0) {
      console.error('cc could not build bench/c/libbloom-bench.c: the C anchor is left out.');
      return null;
    }
  }
  binary = out;
  return binary;
}

/** The packed keys file libbloom-bench reads (see its header comment). */
function keysFile(present: readonly string[], absent: readonly string[]): Uint8Array {
  const a = packAll('string', present);
  const b = packAll('string', absent);
  const n = present.length;
  const setBytes = (p: { bytes: Uint8Array; offsets: Uint32Array }) => 4 * (n + 1) + p.bytes.length;
  const first = setBytes(a);
  const padded = (first + 3) & ~3;
  const out = new Uint8Array(4 + padded + setBytes(b));
  const view = new DataView(out.buffer);
  view.setUint32(0, n, true);
  let at = 4;
  for (const p of [a, b]) {
    for (let i = 0; i <= n; i++) view.setUint32(at + 4 * i, p.offsets[i]!, true);
    out.set(p.bytes, at + 4 * (n + 1));
    at = 4 + padded;
  }
  return out;
}

/**
 * Times libbloom on `present` (added, then probed) and `absent` (probed) keys, best of `rounds`;
 * null where libbloom cannot be built.
 */
export function runLibbloom(
  present: readonly string[],
  absent: readonly string[],
  fpp: number,
  rounds: number,
): LibbloomResult | null {
  const bin = compile();
  if (bin === null) return null;
  const file = join(tmpdir(), `bloomkit-bench-keys-${process.pid}.bin`);
  // In slices: one write call takes at most 2 GiB, and 10M URLs make a larger file.
  const data = keysFile(present, absent);
  const fd = openSync(file, 'w');
  try {
    for (let at = 0; at < data.length; at += 1 << 30) {
      writeSync(fd, data, at, Math.min(1 << 30, data.length - at));
    }
  } finally {
    closeSync(fd);
  }
  try {
    const run = spawnSync(bin, [file, String(fpp), String(rounds)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (run.status !== 0) throw new Error(`libbloom-bench failed (exit ${run.status})`);
    return JSON.parse(run.stdout.trim()) as LibbloomResult;
  } finally {
    rmSync(file, { force: true });
  }
}
