/**
 * The plots view. (1) False positive rate against keys inserted, for every type sized for the
 * calculator's n and p: the model as a line, and the rate measured on real filters in a Web
 * Worker as points. (2) Bits per key against the rate for every type, with the lower bound.
 */

import uPlot from 'uplot';
import { lowerBoundBitsPerKey } from '../../src/index.js';
import { type CalcResult, solve } from './calc.js';
import { fill, h } from './dom.js';
import { GROWABLE_KINDS, KINDS, kindInfo, maxKeys, modelRate, type Shape } from './kinds.js';
import type { MeasuredPoint } from './measure.js';
import type { Store } from './state.js';
import { formatInt, formatRate, parseCount, parseRate } from './units.js';

/** Largest n measured in the page; larger inputs are scaled down to it at the same rate. */
export const MAX_MEASURED_KEYS = 100_000;
const GRID = 50;
const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

const AXIS = {
  stroke: '#8791a5',
  grid: { stroke: 'rgba(135,145,165,0.18)' },
  ticks: { stroke: 'rgba(135,145,165,0.3)' },
};

/** Absent keys per checkpoint: enough for ~300 expected positives at rate p, 5k to 100k. */
export function trialsFor(p: number): number {
  return Math.min(100_000, Math.max(5_000, Math.ceil(300 / p)));
}

export function plotsView(root: HTMLElement, store: Store): void {
  const summary = h('p', { class: 'lede' });
  const progress = h('progress', { max: 1, value: 0, 'aria-label': 'Measuring' });
  const progressText = h('span', { class: 'muted', role: 'status', 'aria-live': 'polite' });
  const again = h('button', { type: 'button' }, 'Measure again');
  const fprBox = h('div', { class: 'chart', id: 'chart-fpr' });
  const sizeBox = h('div', { class: 'chart', id: 'chart-size' });
  const table = h('table', { class: 'compare', id: 'measured' });
  fill(
    root,
    h('h1', { id: 'h-plots' }, 'How the rate grows'),
    summary,
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'False positive rate as keys go in'),
      h(
        'p',
        { class: 'muted' },
        'Lines: the model. Points: the rate of real filters built in a Web Worker, measured on keys never inserted. The counting filter probes the classic positions, so its line and points sit on the classic ones; a cuckoo series ends where its table is full.',
      ),
      h('div', { class: 'progress-row' }, progress, progressText, again),
      fprBox,
      h('details', {}, h('summary', {}, 'Measured points'), h('div', { class: 'scroll' }, table)),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Memory against rate'),
      h(
        'p',
        { class: 'muted' },
        'Bits per key each type needs for n keys at each rate; the dashed line is the lower bound log₂(1/p). Click a legend entry to show or hide it.',
      ),
      sizeBox,
    ),
  );

  let worker: Worker | null = null;
  let fprPlot: uPlot | null = null;
  let sizePlot: uPlot | null = null;
  let timer = 0;

  const inputs = (): { n: number; p: number; scaled: boolean } => {
    const n = parseCount(store.calc.n) ?? 1_000_000;
    const p = parseRate(store.calc.p) ?? 0.01;
    return { n: Math.min(n, MAX_MEASURED_KEYS), p, scaled: n > MAX_MEASURED_KEYS };
  };

  const run = (): void => {
    worker?.terminate();
    const { n, p, scaled } = inputs();
    const shapes: Shape[] = [];
    for (const kind of GROWABLE_KINDS) {
      try {
        shapes.push(solve(kind.id, { n, p }).shape);
      } catch {
        // a type that cannot be sized for these inputs is left out of the plot
      }
    }
    fill(
      summary,
      `Every type sized for n = ${formatInt(n)} keys at p = ${formatRate(p)}`,
      scaled
        ? ` (the calculator's n, scaled down to ${formatInt(MAX_MEASURED_KEYS)} so it measures quickly; the curves depend on keys per bit).`
        : '.',
    );
    const xs = Array.from({ length: 2 * GRID + 1 }, (_, j) => Math.round((j * n) / GRID));
    const checkpoints = xs.filter((_, j) => j > 0 && j % 10 === 0);
    const trials = trialsFor(p);
    const measured = new Map<string, MeasuredPoint>();
    const series: uPlot.Series[] = [{ label: 'keys' }];
    const data: (number | null)[][] = [xs];
    for (const shape of shapes) {
      const info = kindInfo(shape.kind);
      series.push({ label: info.label, stroke: info.color, width: 2, points: { show: false } });
      data.push(
        xs.map((x) => (x === 0 || x > maxKeys(shape) ? null : modelRate(shape, x) || null)),
      );
      series.push({
        label: `${info.label} measured`,
        stroke: info.color,
        fill: info.color,
        paths: () => null,
        points: { show: true, size: 8, fill: info.color, stroke: '#fff', width: 1 },
      });
      data.push(xs.map(() => null));
    }
    fprPlot?.destroy();
    fprPlot = new uPlot(
      {
        width: chartWidth(fprBox),
        height: 340,
        series,
        scales: { x: { time: false }, y: { distr: 3, range: () => [p / 1000, 1] } },
        axes: [
          {
            ...AXIS,
            label: 'keys inserted',
            values: (_u, ticks) => ticks.map((t) => (t == null ? '' : COMPACT.format(t))),
          },
          {
            ...AXIS,
            label: 'false positive rate',
            size: 70,
            splits: decades,
            values: (_u, ticks) => ticks.map((t) => (t == null ? '' : axisRate(t))),
          },
        ],
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
      },
      data as uPlot.AlignedData,
      fprBox,
    );
    progress.value = 0;
    progressText.textContent = 'Measuring…';
    root.dataset.measure = 'running';
    const rows: HTMLTableRowElement[] = [];
    const redrawTable = (): void => {
      fill(
        table,
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Type', 'Keys', 'Trials', 'Positives', 'Measured', 'Model'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        h('tbody', {}, ...rows),
      );
    };
    redrawTable();
    try {
      worker = new Worker('measure-worker.js');
    } catch (e) {
      progressText.textContent = `Cannot start the measuring worker (${(e as Error).message}); serve the page over HTTP, e.g. with \`bloomkit serve\`.`;
      return;
    }
    worker.onmessage = (e: MessageEvent) => {
      const msg = e.data as
        | { type: 'point'; point: MeasuredPoint }
        | { type: 'progress'; done: number; total: number }
        | { type: 'done' }
        | { type: 'error'; message: string };
      if (msg.type === 'progress') {
        progress.value = msg.done / msg.total;
        progressText.textContent = `${Math.round((100 * msg.done) / msg.total)}%`;
      } else if (msg.type === 'point') {
        const pt = msg.point;
        measured.set(`${pt.kind}:${pt.keys}`, pt);
        const idx = shapes.findIndex((s) => s.kind === pt.kind);
        const col = data[2 + 2 * idx]!;
        const rate = pt.positives / pt.trials;
        col[xs.indexOf(pt.keys)] = rate > 0 ? rate : null;
        fprPlot?.setData(data as uPlot.AlignedData, false);
        fprPlot?.redraw();
        rows.push(
          h(
            'tr',
            {
              'data-kind': pt.kind,
              'data-keys': pt.keys,
              'data-trials': pt.trials,
              'data-positives': pt.positives,
              'data-model': pt.model,
            },
            h('th', { scope: 'row' }, kindInfo(pt.kind).label),
            h('td', {}, formatInt(pt.keys)),
            h('td', {}, formatInt(pt.trials)),
            h('td', {}, formatInt(pt.positives)),
            h('td', {}, formatRate(rate)),
            h('td', {}, formatRate(pt.model)),
          ),
        );
        redrawTable();
      } else if (msg.type === 'done') {
        progressText.textContent = `Done: ${formatInt(trials)} absent keys per point.`;
        root.dataset.measure = 'done';
        worker?.terminate();
        worker = null;
      } else {
        progressText.textContent = `Error: ${msg.message}`;
        root.dataset.measure = 'error';
      }
    };
    worker.postMessage({ shapes, checkpoints, trials });
    drawSizes(n);
  };

  const drawSizes = (n: number): void => {
    const ps = Array.from({ length: 61 }, (_, i) => 10 ** (-1 - i / 12));
    const series: uPlot.Series[] = [{ label: 'p' }];
    const data: (number | null)[][] = [ps.slice().reverse()];
    const xs = data[0]! as number[];
    for (const kind of KINDS) {
      series.push({
        label: kind.label,
        stroke: kind.color,
        width: 2,
        show: kind.id !== 'counting',
        points: { show: false },
      });
      data.push(
        xs.map((p) => {
          try {
            const r: CalcResult = solve(kind.id, { n, p });
            return r.bitsPerKey;
          } catch {
            return null;
          }
        }),
      );
    }
    series.push({
      label: 'lower bound',
      stroke: '#8791a5',
      width: 2,
      dash: [6, 6],
      points: { show: false },
    });
    data.push(xs.map((p) => lowerBoundBitsPerKey(p)));
    sizePlot?.destroy();
    sizePlot = new uPlot(
      {
        width: chartWidth(sizeBox),
        height: 340,
        series,
        scales: {
          x: { time: false, distr: 3, dir: -1 },
          y: { range: (_u, _min, max) => [0, Math.ceil(max / 5) * 5] },
        },
        axes: [
          {
            ...AXIS,
            label: 'false positive rate (smaller →)',
            splits: decades,
            values: (_u, ticks) => ticks.map((t) => (t == null ? '' : axisRate(t))),
          },
          { ...AXIS, label: 'bits per key', size: 50 },
        ],
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
      },
      data as uPlot.AlignedData,
      sizeBox,
    );
  };

  again.addEventListener('click', run);
  store.subscribe(() => {
    if (root.hidden) {
      stale = true;
      return;
    }
    clearTimeout(timer);
    timer = window.setTimeout(run, 400);
  });
  let stale = false;
  new MutationObserver(() => {
    if (!root.hidden && stale) {
      stale = false;
      run();
    }
  }).observe(root, { attributes: true, attributeFilter: ['hidden'] });
  window.addEventListener('resize', () => {
    fprPlot?.setSize({ width: chartWidth(fprBox), height: 340 });
    sizePlot?.setSize({ width: chartWidth(sizeBox), height: 340 });
  });
  run();
}

/** `10%`, `1%`, `0.1%`, then `1e-4`, `1e-5`. */
function axisRate(t: number): string {
  return t >= 0.001 ? `${Number((t * 100).toPrecision(3))}%` : `1e${Math.round(Math.log10(t))}`;
}

/** Tick at each power of ten inside [min, max] (log axes). */
function decades(_u: uPlot, _axis: number, min: number, max: number): number[] {
  const out: number[] = [];
  for (let e = Math.ceil(Math.log10(min) - 1e-9); e <= Math.floor(Math.log10(max) + 1e-9); e++)
    out.push(10 ** e);
  return out;
}

function chartWidth(box: HTMLElement): number {
  return Math.max(
    280,
    Math.floor(box.getBoundingClientRect().width || box.parentElement?.clientWidth || 600),
  );
}
