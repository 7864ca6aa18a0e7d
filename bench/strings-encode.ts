/**
 * How a chunk of JavaScript strings becomes 'string' funnel bytes in a kernel's memory, encoders
 * side by side (CPU ns per key, best of rounds, rounds interleaved), on the bench corpus: the
 * packer (hash/pack.ts) in runs (hash/utf16-stage.ts) and key by key, and the parts of a run
 * (the join, one `Buffer#ucs2Write`, the WebAssembly transcoder) beside the alternatives measured
 * before choosing it (`Buffer#utf8Write` key by key or of the joined run, which loses the keys'
 * ends unless every one is ASCII; `latin1Write`, exact only for ASCII). The transcoder's bytes
 * are checked against the key-by-key packer's before any timing.
 *
 *   node --expose-gc --import tsx bench/strings-encode.ts [n] [urls|synthetic] [rounds]
 */
import { KERNEL_BASE } from '../src/hash/kernel-memory.js';
import { packStringsInto, stringTarget, useStringEncoder } from '../src/hash/pack.js';
import { KEY_AT, OFFSETS_AT } from '../src/hash/scratch.js';
import { WASM_BASE64 } from '../src/hash/utf16-wasm.js';
import { lazyWasm, newMemory } from '../src/hash/wasm-loader.js';
import { type CorpusName, corpusKeys } from './corpus.js';

const n = Number(process.argv[2] ?? 1e6);
const corpus = (process.argv[3] ?? 'urls') as CorpusName;
const rounds = Number(process.argv[4] ?? 5);
const keys = corpusKeys(corpus, n, false);
const memory = newMemory(4)!;
const wasm = lazyWasm<{ utf8(src: number, offs: number, count: number): number }>(WASM_BASE64)(
  memory,
)!;
type B = Uint8Array & {
  utf8Write(s: string, o: number): number;
  ucs2Write(s: string, o: number): number;
  latin1Write(s: string, o: number): number;
};
const buf = stringTarget(memory.buffer, 0, KERNEL_BASE - 16) as B;
const offsets = new Uint32Array(memory.buffer, OFFSETS_AT, 1025);
const ROOM = KERNEL_BASE - 16 - KEY_AT - 16;
const CHUNK = 1024;

/** Keys [i, stop) fitting the area at 3 bytes per unit; unit ends to offsets[1..]. */
function fitRun(i: number): number {
  let units = 0;
  let j = i;
  const stop = Math.min(n, i + CHUNK);
  for (; j < stop; j++) {
    const u = units + keys[j]!.length;
    if (3 * u + 32 > ROOM) break;
    units = u;
    offsets[j - i + 1] = u;
  }
  return j;
}
let sink = 0;
/** `run(i, stop)` for each run of keys (fitRun), in order. */
function eachRun(run: (i: number, stop: number) => void): void {
  for (let i = 0; i < n; ) {
    const stop = fitRun(i);
    run(i, stop);
    i = stop;
  }
}
/** Where run [i, stop)'s UTF-16 units go (fitRun's unit ends): the end of the area, 2 bytes each. */
const unitsAt = (i: number, stop: number): number => (KEY_AT + ROOM - 2 * offsets[stop - i]!) & ~1;
/** Each run: `copy` puts its UTF-16 units at `src`, then the transcoder writes its UTF-8. */
function transcodeRuns(copy: (i: number, stop: number, src: number) => void): void {
  eachRun((i, stop) => {
    const src = unitsAt(i, stop);
    copy(i, stop, src);
    offsets[0] = KEY_AT;
    sink += wasm.utf8(src, OFFSETS_AT, stop - i);
  });
}
const variants: Record<string, () => void> = {
  'packStringsInto (runs)': () => {
    useStringEncoder('buffer');
    for (let i = 0; i < n; ) i += packStringsInto(keys, i, n, buf, offsets, KEY_AT);
    sink += offsets[1]!;
  },
  'packStringsInto (key by key)': () => {
    useStringEncoder('utf8-write');
    for (let i = 0; i < n; ) i += packStringsInto(keys, i, n, buf, offsets, KEY_AT);
    sink += offsets[1]!;
    useStringEncoder('buffer');
  },
  'utf8Write bare': () =>
    eachRun((i, stop) => {
      let p = KEY_AT;
      for (let j = i; j < stop; j++) p += buf.utf8Write(keys[j]!, p);
      sink += p;
    }),
  'join only': () =>
    eachRun((i, stop) => {
      sink += keys.slice(i, stop).join('').length;
    }),
  'join+utf8Write': () =>
    eachRun((i, stop) => {
      sink += buf.utf8Write(keys.slice(i, stop).join(''), KEY_AT);
    }),
  'join+latin1Write (inexact)': () =>
    eachRun((i, stop) => {
      sink += buf.latin1Write(keys.slice(i, stop).join(''), KEY_AT);
    }),
  'join+ucs2Write only': () =>
    eachRun((i, stop) => {
      sink += buf.ucs2Write(keys.slice(i, stop).join(''), unitsAt(i, stop));
    }),
  'join+ucs2Write+wasm': () =>
    transcodeRuns((i, stop, src) => buf.ucs2Write(keys.slice(i, stop).join(''), src)),
  'concat+ucs2Write+wasm': () =>
    transcodeRuns((i, stop, src) => {
      let s = '';
      for (let j = i; j < stop; j++) s += keys[j]!;
      buf.ucs2Write(s, src);
    }),
  'ucs2Write per key+wasm': () =>
    transcodeRuns((i, stop, src) => {
      let p = src;
      for (let j = i; j < stop; j++) p += buf.ucs2Write(keys[j]!, p);
    }),
};

// Exactness: the transcoder's bytes equal the current packer's, chunk by chunk.
{
  const other = new Uint8Array(ROOM + 64);
  const otherOffs = new Uint32Array(1025);
  eachRun((i, stop) => {
    const src = unitsAt(i, stop);
    buf.ucs2Write(keys.slice(i, stop).join(''), src);
    offsets[0] = KEY_AT;
    if (wasm.utf8(src, OFFSETS_AT, stop - i) !== stop - i) throw new Error(`chunk at ${i} cut`);
    const end = offsets[stop - i]!;
    const c = packStringsInto(keys, i, stop, other, otherOffs, KEY_AT);
    if (c !== stop - i || otherOffs[c] !== end) throw new Error(`chunk at ${i}: ${c} keys`);
    for (let j = 0; j <= c; j++)
      if (otherOffs[j] !== offsets[j]) throw new Error(`offset ${i + j}`);
    for (let b = KEY_AT; b < end; b++)
      if (other[b] !== buf[b]) throw new Error(`byte ${b} of chunk at ${i}`);
  });
}
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const names = Object.keys(variants);
const best = new Map<string, number>();
for (let r = 0; r < rounds; r++) {
  for (let j = 0; j < names.length; j++) {
    const name = names[(j + r) % names.length]!;
    gc();
    const t0 = cpu();
    variants[name]!();
    const ns = ((cpu() - t0) * 1e6) / n;
    best.set(name, Math.min(best.get(name) ?? Infinity, ns));
  }
}
console.log(`${n} keys (${corpus}), best of ${rounds} rounds, CPU ns per key`);
for (const name of names) console.log(`${name.padEnd(28)} ${best.get(name)!.toFixed(1)}`);
if (sink === 0.5) console.log(sink);
