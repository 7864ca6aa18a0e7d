/**
 * Versions of a WebAssembly kernel timed against each other in one process: each .wat file given
 * is compiled (scripts/build-wasm.ts `compileWat`) and instantiated over a memory of its own laid
 * out as a filter kernel's (hash/kernel-memory.ts), then every version adds the present keys to
 * empty bits, tests them, and tests the absent ones, chunk by chunk as the filters' `addBatch` /
 * `hasBatch` do. Versions take turns each round (the order rotates); times are CPU time (user +
 * system), which a busy shared machine disturbs less than wall time; the first round is a warm-up.
 * Every version must give the first one's answers (the keys found, the bits set, and a checksum
 * of the per-key answers), so a faster kernel that answers differently fails the run.
 *
 *   node --expose-gc --max-old-space-size=8000 --import tsx bench/kernels.ts
 *        blocked|classic <n> <rounds> urls|synthetic <a.wat> <b.wat>[@3] ...
 *
 * blocked: the .wat files are versions of wasm/blocked.wat, hashed by wasm/xxh64.wat (or by the
 * file after a comma: `blocked.wat,my-xxh64.wat`, with `--any-answers` when that hash differs).
 * classic: versions of wasm/murmur3.wat; `@3` tests with `walk_batch` mode 3 rather than 1. The
 * filter is sized as `create({ capacity: n, fpp: 0.01 })` sizes it. Prints, per version, the
 * best and median ns per key (add / has present / has absent) and its speedup over the first.
 * Export an older kernel to compare with: `git show <commit>:src/hash/wasm/blocked.wat > old.wat`.
 */
import { readFileSync } from 'node:fs';
import { compileWat } from '../scripts/build-wasm.js';
import { KERNEL_BASE, KERNEL_KEY_ROOM } from '../src/hash/kernel-memory.js';
import { packAll } from '../src/hash/pack.js';
import { HASHES_AT, KEY_AT, OFFSETS_AT, RESULTS_AT } from '../src/hash/scratch.js';
import { Modulus } from '../src/hash/strategies.js';
import { newMemory, type WasmMemory } from '../src/hash/wasm-loader.js';
import { BlockedBloomFilter, BloomFilter } from '../src/index.js';
import { type CorpusName, corpusKeys } from './corpus.js';

type Call = (...args: number[]) => number;

/** The little of the WebAssembly API used here (bench is type-checked without DOM types). */
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: unknown };
    };
  }
).WebAssembly;

interface Version {
  name: string;
  bytes: Uint8Array;
  u32: Uint32Array;
  /** Hashes and tests (mode 1) or sets (mode 2) one loaded chunk; returns its sum. */
  chunk(keys: number, count: number, mode: number): number;
}

const args = process.argv.slice(2);
const anyAnswers = args.includes('--any-answers');
const [kind, nArg, roundsArg, corpusArg, ...files] = args.filter((a) => a !== '--any-answers');
const n = Number(nArg);
const rounds = Number(roundsArg);
if (kind !== 'blocked' && kind !== 'classic')
  throw new RangeError(`kind must be blocked or classic, got ${kind}`);
if (!Number.isSafeInteger(n) || n < 1000)
  throw new RangeError(`n must be an integer >= 1000, got ${nArg}`);
if (!Number.isSafeInteger(rounds) || rounds < 1)
  throw new RangeError(`rounds must be >= 1, got ${roundsArg}`);
if (files.length === 0) throw new RangeError('give at least one .wat file');

const blocked = BlockedBloomFilter.create({ capacity: n, fpp: 0.01 });
const classic = BloomFilter.create({ capacity: n, fpp: 0.01 });
const bitBytes = kind === 'blocked' ? blocked.blocks * 64 : classic.bitSize / 8;
const mod = new Modulus(classic.bitSize);

async function instance(file: string, memory: WasmMemory): Promise<Record<string, Call>> {
  const binary = await compileWat(readFileSync(file, 'utf8'), file);
  const module = new wasm.Module(binary);
  return new wasm.Instance(module, { env: { memory } }).exports as Record<string, Call>;
}

async function version(spec: string): Promise<Version> {
  const memory = newMemory(Math.ceil((KERNEL_BASE + bitBytes) / 65536));
  if (memory === null) throw new Error('WebAssembly is not available here');
  const base = { name: spec.split('/').pop()!, bytes: new Uint8Array(memory.buffer) };
  const u32 = new Uint32Array(memory.buffer);
  if (kind === 'blocked') {
    const [probeFile, hashFile] = spec.split(',');
    const xx = await instance(hashFile ?? 'src/hash/wasm/xxh64.wat', memory);
    const probe = await instance(probeFile!, memory);
    const { blocks, hashes } = blocked;
    return {
      ...base,
      u32,
      chunk: (keys, count, mode) => {
        xx.xxh64_batch!(keys, OFFSETS_AT, OFFSETS_AT + 4, count, HASHES_AT);
        return probe.batch!(HASHES_AT, count, KERNEL_BASE, blocks, hashes, mode, RESULTS_AT);
      },
    };
  }
  const [file, test] = spec.split('@');
  const murmur = await instance(file!, memory);
  const testMode = Number(test ?? 1);
  const k = classic.hashes;
  return {
    ...base,
    u32,
    chunk: (keys, count, mode) => {
      murmur.murmur3_batch!(keys, OFFSETS_AT, OFFSETS_AT + 4, count, HASHES_AT);
      const walk = mode === 1 ? testMode : mode;
      return murmur.walk_batch!(
        HASHES_AT,
        count,
        k,
        mod.m,
        mod.p63,
        mod.inv,
        KERNEL_BASE,
        walk,
        RESULTS_AT,
      );
    },
  };
}

/** Adds (mode 2) or tests (mode 1) every key of `keys`; returns "sum checksum". */
function pass(v: Version, keys: { bytes: Uint8Array; offsets: Uint32Array }, mode: number): string {
  const { offsets } = keys;
  const total = offsets.length - 1;
  let sum = 0;
  let check = 0;
  for (let start = 0; start < total; ) {
    let stop = Math.min(total, start + 1024);
    while (offsets[stop]! - offsets[start]! > KERNEL_KEY_ROOM) stop--;
    v.u32.set(offsets.subarray(start, stop + 1), OFFSETS_AT >> 2);
    v.bytes.set(keys.bytes.subarray(offsets[start], offsets[stop]), KEY_AT);
    sum += v.chunk((KEY_AT - offsets[start]!) | 0, stop - start, mode);
    for (let i = 0; i < stop - start; i++)
      check = (Math.imul(check, 31) + v.bytes[RESULTS_AT + i]!) | 0;
    start = stop;
  }
  return `${sum} ${check}`;
}

const versions = await Promise.all(files.map(version));
const present = packAll('string', corpusKeys(corpusArg as CorpusName, n, false));
const absent = packAll('string', corpusKeys(corpusArg as CorpusName, n, true));
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const times = versions.map(() => [[], [], []] as number[][]);
let expected: string | null = null;
for (let r = 0; r <= rounds; r++) {
  for (let j = 0; j < versions.length; j++) {
    const i = (j + r) % versions.length;
    const v = versions[i]!;
    v.bytes.fill(0, KERNEL_BASE);
    gc();
    const t0 = cpu();
    const added = pass(v, present, 2);
    const t1 = cpu();
    const found = pass(v, present, 1);
    const t2 = cpu();
    const falsePositives = pass(v, absent, 1);
    const t3 = cpu();
    const answers = `${added} / ${found} / ${falsePositives}`;
    expected ??= answers;
    if (answers !== expected && !anyAnswers) {
      throw new Error(`${v.name} answered ${answers}, the first version ${expected}`);
    }
    if (r === 0) continue;
    const per = [t1 - t0, t2 - t1, t3 - t2];
    for (let q = 0; q < 3; q++) times[i]![q]!.push((per[q]! * 1e6) / n);
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(`${kind}, ${n} ${corpusArg} keys, ${rounds} rounds; CPU ns per key (best, median)`);
console.log('add / has present / has absent; speedup over the first version (of the medians)');
for (let i = 0; i < versions.length; i++) {
  const t = times[i]!;
  const cells = t.map((x) => `${Math.min(...x).toFixed(1)}, ${median(x).toFixed(1)}`).join(' | ');
  const speedup = t.map((x, q) => (median(times[0]![q]!) / median(x)).toFixed(2)).join(' / ');
  console.log(`${versions[i]!.name}: ${cells} | ${speedup}x`);
}
