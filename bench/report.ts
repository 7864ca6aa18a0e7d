/** Renders the benchmark results as BENCHMARKS.md: tables of ops/s, ratios, FPR and targets. */
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
    `### ${size.n.toLocaleString('en-US')} keys, fpp ${fpp}`,
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
    `Ratios at ${size.n.toLocaleString('en-US')} keys (bloomkit ops/s ÷ peer ops/s, same run; add / has present / has absent):`,
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

function targets(results: SizeResult[]): string {
  const lines = ['## Targets (issue 5), in the same run', ''];
  const check = (label: string, value: number, goal: number, unit = '×'): void => {
    const ok = value >= goal;
    const miss = ok ? '' : ` — missed by ${(((goal - value) / goal) * 100).toFixed(1)}%`;
    lines.push(
      `- ${label}: ${value.toFixed(2)}${unit} (target ≥ ${goal}${unit}) ${ok ? '✓' : '✗'}${miss}`,
    );
  };
  for (const size of results) {
    const by = (id: string) => size.js.find((r) => r.id === id);
    const blocked = by('blocked');
    const classic = by('classic');
    const peer = by('bloomfilter');
    const n = size.n.toLocaleString('en-US');
    for (const [id, label] of [
      ['blocked', 'blocked has'],
      ['blocked-batch', 'blocked hasMany'],
    ] as const) {
      const ours = by(id);
      if (ours === undefined || peer === undefined) continue;
      for (const op of ['hasPresent', 'hasAbsent'] as const) {
        const what = `${label} (${op === 'hasPresent' ? 'present' : 'absent'})`;
        check(`${n}: ${what} ÷ bloomfilter`, ours[op] / peer[op], 2);
        if (size.guava) check(`${n}: ${what} ÷ Guava`, ours[op] / size.guava[op], 1.5);
      }
    }
    if (classic && peer) {
      for (const [op, label] of OPS)
        check(`${n}: classic ${label} ÷ bloomfilter`, classic[op] / peer[op], 1);
    }
    if (blocked) {
      const fpr = blocked.falsePositives / blocked.keys;
      lines.push(
        `- ${n}: blocked measured FPR ${pct(fpr)} (target ≤ 1.000%) ${fpr <= 0.01 ? '✓' : '✗'}, ${(blocked.bits / blocked.keys).toFixed(2)} bits/key (target ≤ 10.5) ${blocked.bits / blocked.keys <= 10.5 ? '✓' : '✗'}`,
      );
    }
  }
  return lines.join('\n');
}

export function renderReport(results: SizeResult[], ctx: ReportContext): string {
  const parts = [
    '# Benchmarks',
    '',
    `Command: \`${ctx.command}\` (${ctx.rounds} timed rounds per library after a checked warm-up pass; the best round is shown).`,
    '',
    `Machine: ${ctx.machine}. 1-minute load average between ${ctx.load[0].toFixed(2)} and ${ctx.load[1].toFixed(2)} during the run (sampled between processes)${ctx.load[1] > 1 ? '; other work shared the 2 cores, so expect noise: compare the medians too' : ''}.`,
    '',
    'Keys: `https://example.com/item/<i>` added and probed (present), `https://example.com/other/<i>` probed (absent), flat one-byte strings. Every library is checked for false negatives (none) and its false positives counted over all absent keys before any timing; the timed rounds must give the same answers. JavaScript libraries run side by side in one Node process per key count, taking turns; Guava runs in its own JVM, timed inside it after a warm-up round, twice (before and after the JavaScript process; per operation the better run is shown, and within a run its best round). `bits/key` counts the bit array only.',
    '',
    results.map((r) => table(r, ctx.fpp)).join('\n\n'),
    '',
    targets(results),
    '',
  ];
  return parts.join('\n');
}
