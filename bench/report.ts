/** Renders the benchmark results as BENCHMARKS.md: tables of ops/s, ratios, FPR and targets. */
import type { CorpusName } from './corpus.js';
import type { JsResult } from './js.js';

/** What bench/java/GuavaBench.java prints. */
export interface GuavaResult {
  n: number;
  add: number;
  hasPresent: number;
  hasAbsent: number;
  falsePositives: number;
  bitSize: number;
  hashes: number;
  java: string;
}

export interface SizeResult {
  n: number;
  corpus: CorpusName;
  js: JsResult[];
  guava: GuavaResult | null;
}

export interface ReportContext {
  command: string;
  fpp: number;
  rounds: number;
  machine: string;
  /** Lowest and highest 1-minute load average sampled during the run. */
  load: [number, number];
}

type Op = 'add' | 'hasPresent' | 'hasAbsent';
const OPS: [Op, string][] = [
  ['add', 'add'],
  ['hasPresent', 'has (present)'],
  ['hasAbsent', 'has (absent)'],
];

interface Row {
  id: string;
  name: string;
  keys: number;
  bits: number;
  hashes: number;
  falsePositives: number;
  add: number;
  hasPresent: number;
  hasAbsent: number;
  /** Every round's ops/s (JavaScript libraries; Guava reports its best only). */
  rounds?: { add: number[]; hasPresent: number[]; hasAbsent: number[] };
}

function rows(size: SizeResult): Row[] {
  const out: Row[] = size.js.map((r) => ({ ...r }));
  if (size.guava !== null) {
    const g = size.guava;
    out.push({
      id: 'guava',
      name: `Guava ${'31.1'} BloomFilter (JVM ${g.java})`,
      keys: g.n,
      bits: g.bitSize,
      hashes: g.hashes,
      falsePositives: g.falsePositives,
      add: g.add,
      hasPresent: g.hasPresent,
      hasAbsent: g.hasAbsent,
    });
  }
  return out;
}

/** ops/s as "12.34 M" or "123 k". */
function fmt(opsPerSecond: number): string {
  if (opsPerSecond >= 1e6) return `${(opsPerSecond / 1e6).toFixed(2)} M`;
  return `${Math.round(opsPerSecond / 1e3)} k`;
}

const pct = (x: number): string => `${(x * 100).toFixed(3)}%`;
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

/** The median of a list of rates. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** "best (median)" of a row's rounds for one operation. */
function cell(r: Row, op: Op): string {
  const all = r.rounds?.[op];
  if (all === undefined || all.length < 2) return fmt(r[op]);
  return `${fmt(r[op])} (${fmt(median(all))})`;
}

function table(size: SizeResult, fpp: number): string {
  const lines = [
    `### ${size.n.toLocaleString('en-US')} keys, ${CORPUS_LABEL[size.corpus]}, fpp ${fpp}`,
    '',
    'ops/s: best round (median round).',
    '',
    '| filter | bits/key | k | measured FPR | add | has, present | has, absent |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows(size)) {
    const note = r.keys < size.n ? ` ¹` : '';
    lines.push(
      `| ${r.name}${note} | ${(r.bits / r.keys).toFixed(2)} | ${r.hashes} | ${pct(r.falsePositives / r.keys)} | ${cell(r, 'add')} | ${cell(r, 'hasPresent')} | ${cell(r, 'hasAbsent')} |`,
    );
  }
  const small = rows(size).filter((r) => r.keys < size.n);
  if (small.length > 0) {
    lines.push(
      '',
      `¹ ${small.map((r) => r.name).join(', ')}: timed with ${small[0]!.keys.toLocaleString('en-US')} keys (its own filter sized for that many): it runs at about 0.1 M ops/s, so a full pass would take minutes per round. Its ops/s on that smaller, cache-friendlier filter is an upper bound for the full size, so ratios against it understate bloomkit's lead.`,
    );
  }
  lines.push('', ratios(size));
  return lines.join('\n');
}

function ratios(size: SizeResult): string {
  const all = rows(size);
  const peers = all.filter(
    (r) => !r.id.startsWith('classic') && !r.id.startsWith('blocked') && !r.id.startsWith('split'),
  );
  const ours = all.filter((r) => !peers.includes(r));
  const lines = [
    `Ratios at ${size.n.toLocaleString('en-US')} keys, ${CORPUS_LABEL[size.corpus]} (bloomkit ops/s ÷ peer ops/s, same run; add / has present / has absent):`,
    '',
    `| bloomkit filter | ${peers.map((p) => `÷ ${p.name.replace(/ BloomFilter \(JVM.*\)/, ' (JVM)')}`).join(' | ')} |`,
    `|---|${peers.map(() => '---:').join('|')}|`,
  ];
  for (const r of ours) {
    lines.push(
      `| ${r.name} | ${peers.map((p) => OPS.map(([op]) => ratio(r[op], p[op])).join(' / ')).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

const CORPUS_LABEL: Record<CorpusName, string> = {
  synthetic: 'synthetic keys',
  urls: 'real-looking URLs',
};

function targets(results: SizeResult[]): string {
  const lines = ['### Targets, in the same run', ''];
  const check = (label: string, value: number, goal: number): void => {
    const ok = value >= goal;
    const miss = ok ? '' : ` — missed by ${(((goal - value) / goal) * 100).toFixed(1)}%`;
    lines.push(`- ${label}: ${value.toFixed(2)}× (target ≥ ${goal}×) ${ok ? '✓' : '✗'}${miss}`);
  };
  for (const size of results) {
    const by = (id: string) => size.js.find((r) => r.id === id);
    const peer = by('bloomfilter');
    const c = by('libbloom');
    const where = `${size.n.toLocaleString('en-US')}, ${CORPUS_LABEL[size.corpus]}`;
    const big = size.n >= 1e7;
    const batch = by('blocked-packed');
    if (batch && peer) {
      for (const [op, label] of OPS) {
        if (big && op === 'add')
          check(`${where}: blocked addBatch ÷ bloomfilter`, batch.add / peer.add, 2);
        else if (big) {
          check(`${where}: blocked hasBatch (${label}) ÷ bloomfilter`, batch[op] / peer[op], 2);
          if (c) check(`${where}: blocked hasBatch (${label}) ÷ libbloom`, batch[op] / c[op], 1.5);
        } else check(`${where}: blocked batch ${label} ÷ bloomfilter`, batch[op] / peer[op], 2);
      }
    }
    const classic = by('classic-batch');
    if (classic && peer) {
      for (const [op, label] of OPS) {
        check(`${where}: classic batch ${label} ÷ bloomfilter`, classic[op] / peer[op], 1.2);
      }
    }
    const perKey = by('blocked');
    if (perKey && peer && size.corpus === 'urls') {
      for (const [op, label] of OPS) {
        check(`${where}: blocked per-key ${label} ÷ bloomfilter`, perKey[op] / peer[op], 1.2);
      }
    }
    if (perKey) {
      const fpr = perKey.falsePositives / perKey.keys;
      lines.push(
        `- ${where}: blocked measured FPR ${pct(fpr)} (target ≤ 1.000%) ${fpr <= 0.01 ? '✓' : '✗'}`,
      );
    }
  }
  return lines.join('\n');
}

/** The filters section of BENCHMARKS.md (between its markers; see bench/run.ts). */
export function renderReport(results: SizeResult[], ctx: ReportContext): string {
  const parts = [
    '## Filters side by side',
    '',
    `Command: \`${ctx.command}\` (${ctx.rounds} timed rounds per library after a checked warm-up pass; the best round is shown).`,
    '',
    `Machine: ${ctx.machine}. 1-minute load average between ${ctx.load[0].toFixed(2)} and ${ctx.load[1].toFixed(2)} during the run (sampled between processes)${ctx.load[1] > 1 ? '; other work shared the cores, so expect noise: compare the medians too, and read ratios within one table (the libraries take turns within each round, so they see the same load)' : ''}.`,
    '',
    'Keys (bench/corpus.ts): *synthetic keys* are `https://example.com/item/<i>` added and probed (present) and `https://example.com/other/<i>` probed (absent), 26 to 32 ASCII characters; *real-looking URLs* are crawl-log-like URLs of 20 to 200 characters (mean 114), about 29% with non-ASCII text, present and absent sets drawn alike. Every library is checked for false negatives (none) and its false positives counted over all absent keys before any timing; the timed rounds must give the same answers. JavaScript libraries run side by side in one Node process per key count and corpus, taking turns; libbloom (C, compiled from bench/c/libbloom-bench.c with -O2) runs on the same keys right after, best of the same number of rounds; Guava runs in its own JVM on the synthetic keys only, twice (before and after the JavaScript process; per operation the better run is shown). *Keys packed beforehand*: the batch API on keys already packed in one buffer, as `splitRecords` gives them from a file of lines at no cost; *packing timed*: `packKeys` from the JavaScript strings inside the timed loop. `bits/key` counts the bit array only.',
    '',
    results.map((r) => table(r, ctx.fpp)).join('\n\n'),
    '',
    targets(results),
    '',
  ];
  return parts.join('\n');
}
