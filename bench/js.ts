/**
 * One benchmark process for one key count: every JavaScript library side by side, printing one
 * JSON line. Started by bench/run.ts (with --expose-gc and a large heap); not meant to be run
 * by hand, but can be:
 * `node --expose-gc --import tsx bench/js.ts <n> <fpp> <rounds> <synthetic|urls> [ids]`.
 *
 * Keys come from bench/corpus.ts (flat strings: a template literal makes a V8 cons string, and
 * `charCodeAt` does not turn it into a sequential one, so every key is rebuilt first). libbloom
 * (C) runs on the same keys after the JavaScript libraries (bench/libbloom.ts), as id 'libbloom'.
 *
 * For each library, a first pass builds a filter, checks that every present key is found (no
 * false negatives: the run aborts otherwise) and counts false positives among the absent keys.
 * That pass is also the warm-up. Then `rounds` rounds each build a fresh filter and time add,
 * has(present) and has(absent) over all keys; libraries take turns within a round (the order
 * rotates), and each round's answers must equal the checked ones. The best round is reported.
 */
import { type CorpusName, corpusKeys } from './corpus.js';
import { runLibbloom } from './libbloom.js';
import { LIBRARIES } from './libs.js';

export interface JsResult {
  id: string;
  name: string;
  /** Keys inserted and probed (present and absent each). */
  keys: number;
  bits: number;
  hashes: number;
  falsePositives: number;
  /** Best ops/s over the rounds. */
  add: number;
  hasPresent: number;
  hasAbsent: number;
  /** Every round's ops/s, for the spread. */
  rounds: { add: number[]; hasPresent: number[]; hasAbsent: number[] };
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

function main(): void {
  const n = Number(process.argv[2]);
  const fpp = Number(process.argv[3]);
  const rounds = Number(process.argv[4]);
  const corpus = process.argv[5] as CorpusName;
  const only = process.argv[6] ? new Set(process.argv[6].split(',')) : null;
  const libs = LIBRARIES.filter((l) => only === null || only.has(l.id));
  const present = corpusKeys(corpus, n, false);
  const absent = corpusKeys(corpus, n, true);
  const results = libs.map((lib) => {
    const keys = Math.min(n, lib.maxKeys ?? n);
    gc();
    const f = lib.create(keys, fpp);
    f.addAll(present, keys);
    const hits = f.countHits(present, keys);
    if (hits !== keys) {
      throw new Error(`${lib.name}: ${keys - hits} false negatives among ${keys} keys`);
    }
    const falsePositives = f.countHits(absent, keys);
    const result: JsResult = {
      id: lib.id,
      name: lib.name,
      keys,
      bits: f.bits,
      hashes: f.hashes,
      falsePositives,
      add: 0,
      hasPresent: 0,
      hasAbsent: 0,
      rounds: { add: [], hasPresent: [], hasAbsent: [] },
    };
    return result;
  });
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < libs.length; j++) {
      const index = (j + r) % libs.length;
      const lib = libs[index]!;
      const result = results[index]!;
      const keys = result.keys;
      gc();
      const f = lib.create(keys, fpp);
      const t0 = performance.now();
      f.addAll(present, keys);
      const t1 = performance.now();
      const hits = f.countHits(present, keys);
      const t2 = performance.now();
      const fp = f.countHits(absent, keys);
      const t3 = performance.now();
      if (hits !== keys || fp !== result.falsePositives) {
        throw new Error(`${lib.name}: round ${r} answered differently from the checked pass`);
      }
      const rate = (ms: number) => Math.round((keys * 1000) / ms);
      result.rounds.add.push(rate(t1 - t0));
      result.rounds.hasPresent.push(rate(t2 - t1));
      result.rounds.hasAbsent.push(rate(t3 - t2));
    }
  }
  for (const result of results) {
    result.add = Math.max(...result.rounds.add);
    result.hasPresent = Math.max(...result.rounds.hasPresent);
    result.hasAbsent = Math.max(...result.rounds.hasAbsent);
  }
  if (only === null || only.has('libbloom')) {
    const c = runLibbloom(present, absent, fpp, rounds);
    if (c !== null) {
      results.push({
        id: 'libbloom',
        name: 'libbloom 1.6 (C, Debian libbloom-dev)',
        keys: n,
        bits: c.bits,
        hashes: c.hashes,
        falsePositives: c.falsePositives,
        add: c.add,
        hasPresent: c.hasPresent,
        hasAbsent: c.hasAbsent,
        rounds: { add: [c.add], hasPresent: [c.hasPresent], hasAbsent: [c.hasAbsent] },
      });
    }
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main();
