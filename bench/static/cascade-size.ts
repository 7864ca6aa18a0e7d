/**
 * Size of a filter cascade (CRLite sizing, MLBF murmur3 layers) for |R| included and |S|
 * excluded keys, against CRLite's own analysis and the bounds:
 *
 *   CRLite estimate  1.44·|R|·(log2(|S|/|R|) + 0.5 + (1/√2)/(1 − 1/√2))  (layer 1 at
 *                    p = |R|/(√2|S|), later layers at p = 1/2 holding 1/√2 of the keys two
 *                    layers up; see src/filters/cascade/build.ts)
 *   Bloom bound      1.44·|R|·log2(|S|/|R|)  (layer 1 alone, at p = |R|/|S|)
 *   lower bound      log2 C(|R| + |S|, |R|)  (any exact static function on the universe)
 *
 * Keys: 32 pseudo-random bytes each (like CRLite's certificate identifiers), from a seeded
 * counter; the exclude set is streamed, never held. Exactness is checked on every included key
 * and on the first `--check` excluded keys before the numbers are printed.
 *
 *   npx tsx bench/static/cascade-size.ts [--r 100000] [--s 10000000]
 */

import { FilterCascade } from '../../src/filters/cascade/filter.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
}

const R = arg('r', 100_000);
const S = arg('s', 10_000_000);
const CHECK = Math.min(arg('check', 1_000_000), S);

/** Key i: 32 bytes of splitmix32-style output from the counter (distinct for distinct i). */
function key(i: number, out = new Uint8Array(32)): Uint8Array {
  let x = (i * 0x9e3779b9 + 0x7f4a7c15) >>> 0;
  for (let w = 0; w < 8; w++) {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = Math.imul(x ^ (x >>> 15), x | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    t = (t ^ (t >>> 14)) >>> 0;
    out[4 * w] = t & 0xff;
    out[4 * w + 1] = (t >>> 8) & 0xff;
    out[4 * w + 2] = (t >>> 16) & 0xff;
    out[4 * w + 3] = t >>> 24;
  }
  out[0] = i & 0xff; // the low bytes of the index make keys distinct
  out[1] = (i >>> 8) & 0xff;
  out[2] = (i >>> 16) & 0xff;
  out[3] = i >>> 24;
  return out;
}

function* range(from: number, to: number): Generator<Uint8Array> {
  for (let i = from; i < to; i++) yield key(i);
}

const include = Array.from(range(0, R));
const t0 = performance.now();
const cascade = FilterCascade.build({
  include,
  exclude: range(R, R + S),
  excludeSize: S,
  funnel: 'bytes',
});
const buildSeconds = (performance.now() - t0) / 1000;

let wrong = 0;
for (const k of include) if (!cascade.has(k)) wrong++;
for (let i = R; i < R + CHECK; i++) if (cascade.has(key(i))) wrong++;
if (wrong > 0) throw new Error(`cascade is not exact: ${wrong} wrong answers`);

const bits = cascade.bitSize;
const mlbfBytes = cascade.toMlbf().length;
const ratio = S / R;
const crlite = 1.44 * R * (Math.log2(ratio) + 0.5 + Math.SQRT1_2 / (1 - Math.SQRT1_2));
const bloomBound = 1.44 * R * Math.log2(ratio);
let lower = 0;
for (let i = 1; i <= R; i++) lower += Math.log2((S + i) / i);

const row = (name: string, total: number) =>
  `| ${name} | ${Math.round(total).toLocaleString('en-US')} | ${(total / R).toFixed(2)} | ${(bits / total).toFixed(3)} |`;
console.log(
  `### Filter cascade, |R| = ${R.toLocaleString('en-US')}, |S| = ${S.toLocaleString('en-US')}\n`,
);
console.log(
  `${cascade.layers.length} layers, built in ${buildSeconds.toFixed(1)} s (murmur3, the exclude set streamed); exact on all ${R.toLocaleString('en-US')} included keys and the first ${CHECK.toLocaleString('en-US')} excluded keys; MLBF file ${mlbfBytes.toLocaleString('en-US')} bytes.\n`,
);
console.log('r = |R|, s = |S|.\n');
console.log('| | bits | bits per included key | measured ÷ this |');
console.log('|---|---:|---:|---:|');
console.log(row('**measured cascade**', bits));
console.log(row("CRLite's estimate, 1.44·r·(log2(s/r) + 2.91)", crlite));
console.log(row('1.44·r·log2(s/r)', bloomBound));
console.log(row('lower bound log2 C(r + s, r)', lower));
console.log('\nLayers (bits / hashes):');
console.log(cascade.layers.map((l, i) => `${i + 1}: ${l.bits}/${l.hashes}`).join(', '));
