/**
 * The string paths side by side in one process, timed in CPU time (user + system of this
 * process, `process.cpuUsage`), which a busy shared machine disturbs less than wall time:
 * `addMany` / `hasMany` of the blocked and classic filters (`hasMany` into a new answer array, and
 * into one array reused from call to call: `hasMany(keys, out)`), the classic filter key by key, and
 * `packKeys` (fresh buffers, and buffers reused from round to round) + `addBatch` / `hasBatch`,
 * against bloomfilter@1.1 key by key. Rounds
 * interleave the rows (the order rotates); each row's ratio to the peer is taken round by round
 * and the median printed, with the best CPU ns per key. Every row must find all present keys.
 *
 *   node --expose-gc --max-old-space-size=8000 --import tsx bench/strings.ts [n] [urls|synthetic]
 *        [rounds] [path/to/other/src/index.ts]
 *
 * With a fourth argument, the same rows also run on that copy of bloomkit (say, an older commit
 * extracted with `git archive <commit> src | tar -x -C /tmp/old`, next to a package.json and a
 * node_modules link), labelled "before", in the same rounds.
 */
import { BloomFilter as Peer } from 'bloomfilter';
import * as current from '../src/index.js';
import { type CorpusName, corpusKeys } from './corpus.js';

type Lib = typeof current;
type Timed = (f: never, keys: string[]) => number;

const n = Number(process.argv[2] ?? 1e6);
const corpus = (process.argv[3] ?? 'urls') as CorpusName;
const rounds = Number(process.argv[4] ?? 3);
const before: Lib | null = process.argv[5] ? ((await import(process.argv[5])) as Lib) : null;
const present = corpusKeys(corpus, n, false);
const absent = corpusKeys(corpus, n, true);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const count = (found: ArrayLike<unknown>) => {
  let c = 0;
  for (let i = 0; i < found.length; i++) if (found[i]) c++;
  return c;
};
const many: [Timed, Timed] = [
  (f: { addMany(k: string[]): number }, k) => f.addMany(k),
  (f: { hasMany(k: string[]): boolean[] }, k) => count(f.hasMany(k)),
];
/** `hasMany` into one answer array reused from call to call (written once before timing). */
const answers: boolean[] = new Array(n).fill(false);
const manyInto: [Timed, Timed] = [
  many[0],
  (f: { hasMany(k: string[], out: boolean[]): boolean[] }, k) => count(f.hasMany(k, answers)),
];
const perKey: [Timed, Timed] = [
  (f: { add(k: string): boolean }, k) => {
    for (let i = 0; i < k.length; i++) f.add(k[i]!);
    return 0;
  },
  (f: { has(k: string): boolean }, k) => {
    let c = 0;
    for (let i = 0; i < k.length; i++) if (f.has(k[i]!)) c++;
    return c;
  },
];
const packed = (lib: Lib): [Timed, Timed] => [
  (f: current.BlockedBloomFilter, k) => f.addBatch(lib.packKeys('string', k)),
  (f: current.BlockedBloomFilter, k) => count(f.hasBatch(lib.packKeys('string', k))),
];
/** Buffers `packKeys` reuses from round to round (written once before timing: no page faults). */
const reused = (lib: Lib) => {
  const into = lib.packKeys('string', present);
  const bytes = new Uint8Array(Math.ceil(into.bytes.length * 1.2) + 4096);
  const target = { bytes, offsets: new Uint32Array(n + 1) };
  lib.packKeys('string', present, target);
  lib.packKeys('string', absent, target);
  return target;
};
const packedReused = (lib: Lib): [Timed, Timed] => {
  const into = reused(lib);
  return [
    (f: current.BlockedBloomFilter, k) => f.addBatch(lib.packKeys('string', k, into)),
    (f: current.BlockedBloomFilter, k) => count(f.hasBatch(lib.packKeys('string', k, into))),
  ];
};
const rowsOf = (lib: Lib, tag: string): [string, () => unknown, [Timed, Timed]][] => [
  [
    `${tag} blocked addMany/hasMany`,
    () => lib.BlockedBloomFilter.create({ capacity: n, fpp: 0.01 }),
    many,
  ],
  [
    `${tag} classic addMany/hasMany`,
    () => lib.BloomFilter.create({ capacity: n, fpp: 0.01 }),
    many,
  ],
  [
    `${tag} blocked addMany/hasMany(out)`,
    () => lib.BlockedBloomFilter.create({ capacity: n, fpp: 0.01 }),
    manyInto,
  ],
  [
    `${tag} classic addMany/hasMany(out)`,
    () => lib.BloomFilter.create({ capacity: n, fpp: 0.01 }),
    manyInto,
  ],
  [
    `${tag} classic add/has per key`,
    () => lib.BloomFilter.create({ capacity: n, fpp: 0.01 }),
    perKey,
  ],
  [
    `${tag} blocked packKeys+batch`,
    () => lib.BlockedBloomFilter.create({ capacity: n, fpp: 0.01 }),
    packed(lib),
  ],
  [
    `${tag} blocked packKeys reused+batch`,
    () => lib.BlockedBloomFilter.create({ capacity: n, fpp: 0.01 }),
    packedReused(lib),
  ],
];
const peerHas: Timed = (f: { test(k: string): boolean }, k) => {
  let c = 0;
  for (let i = 0; i < k.length; i++) if (f.test(k[i]!)) c++;
  return c;
};
const rows: [string, () => unknown, [Timed, Timed]][] = [
  ['bloomfilter@1.1', () => Peer.withTargetError(n, 0.01), [perKey[0], peerHas]],
  ...rowsOf(current, 'after'),
  ...(before === null ? [] : rowsOf(before, 'before')),
];

const times = new Map<string, number[][]>();
for (let r = 0; r < rounds; r++) {
  for (let j = 0; j < rows.length; j++) {
    const [name, make, [add, has]] = rows[(j + r) % rows.length]!;
    gc();
    const f = make() as never;
    const t0 = cpu();
    add(f, present);
    const t1 = cpu();
    const hits = has(f, present);
    const t2 = cpu();
    has(f, absent);
    const t3 = cpu();
    if (hits !== n) throw new Error(`${name}: ${n - hits} false negatives`);
    const list = times.get(name) ?? [];
    list[r] = [t1 - t0, t2 - t1, t3 - t2].map((ms) => (ms * 1e6) / n);
    times.set(name, list);
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const peer = times.get('bloomfilter@1.1')!;
console.log(
  `${n} keys (${corpus}), ${rounds} rounds: × bloomfilter@1.1 (median of rounds), best CPU ns per key; add / has present / has absent`,
);
for (const [name, list] of times) {
  const ratio = [0, 1, 2].map((c) => median(list.map((row, r) => peer[r]![c]! / row[c]!)));
  const best = [0, 1, 2].map((c) => Math.min(...list.map((row) => row[c]!)));
  console.log(
    `${name.padEnd(34)} ${ratio.map((x) => `${x.toFixed(2)}×`).join(' / ')}   ${best.map((x) => x.toFixed(0)).join(' / ')} ns`,
  );
}
