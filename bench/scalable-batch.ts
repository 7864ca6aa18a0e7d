/**
 * ScalableBloomFilter: the batch paths (addBatch / hasBatch: each key hashed once, one wasm pass
 * per layer) against the per-key paths, in CPU time (process.cpuUsage) on real-looking URL keys
 * (bench/corpus.ts), at fpp 0.01 and 1e-6, with a small initial capacity so that the chain has
 * about nine layers. Prints ratios (per-key CPU time / batch CPU time: above 1 is faster).
 *
 *   npx tsx bench/scalable-batch.ts [keys]   (default 2,000,000)
 *
 * Per-key rows: `add` / `has` of each JavaScript string, and the generic packed path the class
 * had before (FilterBase's addBatch / hasBatch: per key, the JavaScript walk of every layer).
 * "layers, rehashed" is hasBatch done as each layer's own BloomFilter.hasBatch, OR-ed: every
 * layer hashes every key again and every key visits every layer, which the scalable path avoids.
 */
import { FilterBase } from '../src/filters/base.js';
import { packKeys, ScalableBloomFilter } from '../src/index.js';
import { corpusKeys } from './corpus.js';

const n = Number(process.argv[2] ?? 2_000_000);
const present = corpusKeys('urls', n, false);
const absent = corpusKeys('urls', n, true);
const packedPresent = packKeys('string', present);
const packedAbsent = packKeys('string', absent);
/** c0 so that n keys fill about nine layers at growth 2: c0·(2^9 − 1) ≈ n. */
const capacity = Math.ceil(n / 511);

type Filter = ScalableBloomFilter<string>;
const make = (fpp: number): Filter => ScalableBloomFilter.create({ capacity, fpp });

/** CPU milliseconds (user + system) of `run`, and its result. */
function cpu<T>(run: () => T): { ms: number; result: T } {
  const before = process.cpuUsage();
  const result = run();
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000, result };
}

const genericAdd = FilterBase.prototype.addBatch;
const genericHas = FilterBase.prototype.hasBatch;

function sum(bytes: Uint8Array): number {
  let s = 0;
  for (const b of bytes) s += b;
  return s;
}

/** hasBatch as each layer's own BloomFilter.hasBatch, OR-ed (hashes per layer, no skipping). */
function layersRehashed(f: Filter, batch: typeof packedPresent): Uint8Array {
  const out = new Uint8Array(batch.offsets.length - 1);
  const one = new Uint8Array(out.length);
  for (let i = f.layerCount - 1; i >= 0; i--) {
    f.layer(i).hasBatch(batch, one);
    for (let j = 0; j < out.length; j++) out[j]! |= one[j]!;
  }
  return out;
}

const lines: string[] = [];
function row(what: string, perKey: number, batch: number): void {
  const line = `| ${what} | ${perKey.toFixed(0)} ms | ${batch.toFixed(0)} ms | ${(perKey / batch).toFixed(2)}x |`;
  lines.push(line);
  console.log(line);
}

console.log(`${n} URL keys (absent: ${n} others), capacity ${capacity}, growth 2`);
for (const fpp of [0.01, 1e-6]) {
  const a = make(fpp);
  const b = make(fpp);
  const c = make(fpp);
  const perKey = cpu(() => {
    let added = 0;
    for (const key of present) if (a.add(key)) added++;
    return added;
  });
  const generic = cpu(() => genericAdd.call(b, packedPresent));
  const batch = cpu(() => c.addBatch(packedPresent));
  if (perKey.result !== batch.result || generic.result !== batch.result) {
    throw new Error(`new keys differ: ${perKey.result} / ${generic.result} / ${batch.result}`);
  }
  if (Buffer.compare(a.toBytes(), c.toBytes()) !== 0) throw new Error('bytes differ');
  console.log(`fpp ${fpp}: ${c.layerCount} layers, ${(c.byteLength / 2 ** 20).toFixed(1)} MiB`);
  row(`fpp ${fpp} add, per key (strings) / addBatch`, perKey.ms, batch.ms);
  row(`fpp ${fpp} add, generic packed path / addBatch`, generic.ms, batch.ms);
  for (const [what, keys, packed] of [
    ['present', present, packedPresent],
    ['absent', absent, packedAbsent],
  ] as const) {
    const one = cpu(() => {
      let found = 0;
      for (const key of keys) if (c.has(key)) found++;
      return found;
    });
    const gen = cpu(() => sum(genericHas.call(c, packed)));
    const layered = cpu(() => sum(layersRehashed(c, packed)));
    const bat = cpu(() => sum(c.hasBatch(packed)));
    if (one.result !== bat.result || gen.result !== bat.result || layered.result !== bat.result) {
      throw new Error(
        `answers differ: ${one.result} / ${gen.result} / ${layered.result} / ${bat.result}`,
      );
    }
    row(`fpp ${fpp} has ${what}, per key (strings) / hasBatch`, one.ms, bat.ms);
    row(`fpp ${fpp} has ${what}, generic packed path / hasBatch`, gen.ms, bat.ms);
    row(`fpp ${fpp} has ${what}, layers rehashed / hasBatch`, layered.ms, bat.ms);
  }
}
console.log(`\n| | per key | batch | ratio |\n|---|---|---|---|\n${lines.join('\n')}`);
