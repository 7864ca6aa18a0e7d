/**
 * The calculator view: type, any two of n / p / m (and k), the shape and every number that
 * follows, a comparison of all types for the same inputs, and a link that reproduces it.
 */

import { type CalcInputs, type CalcResult, solve } from './calc.js';
import { field, fill, h, segmented, tile } from './dom.js';
import { describeShape, KINDS, type KindId, kindInfo } from './kinds.js';
import type { CalcText, Store } from './state.js';
import {
  formatBytes,
  formatInt,
  formatNumber,
  formatRate,
  oneIn,
  parseCount,
  parseRate,
  parseSize,
  parseSmallInt,
} from './units.js';

/** Parses the typed inputs; `errors` names each field that has text but no valid value. */
export function parseInputs(text: CalcText): { input: CalcInputs; errors: (keyof CalcText)[] } {
  const input: CalcInputs = {};
  const errors: (keyof CalcText)[] = [];
  const read = <T>(key: 'n' | 'p' | 'm' | 'k', parse: (s: string) => T | null): T | undefined => {
    if (text[key].trim() === '') return undefined;
    const v = parse(text[key]);
    if (v === null) errors.push(key);
    return v ?? undefined;
  };
  input.n = read('n', parseCount);
  input.p = read('p', parseRate);
  input.m = read('m', parseSize);
  input.k = read('k', (s) => parseSmallInt(s, 255));
  return { input, errors };
}

/** What each input takes, for the message when it cannot be read. */
const INPUT_RULES: Record<'n' | 'p' | 'm' | 'k', string> = {
  n: 'n must be a whole number of keys of at least 1 (1000000, 1e6, 10M)',
  p: 'p must be a rate between 0 and 1, both excluded (0.01, 1%, 1/1000)',
  m: 'm must be a size of at least 1 bit (9600, 1.2 KB, 64 MiB)',
  k: 'k must be a whole number of hashes from 1 to 255',
};

export function calculatorView(root: HTMLElement, store: Store): void {
  const fields = {
    n: field('calc-n', 'Keys (n)', 'e.g. 1000000, 1e6, 10M'),
    p: field('calc-p', 'False positive rate (p)', 'e.g. 0.01, 1%, 1/1000'),
    m: field('calc-m', 'Size (m)', 'bits, or 64 MiB, 1.2 MB'),
    k: field('calc-k', 'Hashes (k)', 'optional'),
  };
  for (const [key, f] of Object.entries(fields) as [keyof typeof fields, (typeof fields)['n']][]) {
    f.input.value = store.calc[key];
    f.input.addEventListener('input', () => store.update({ [key]: f.input.value }));
  }
  const types = segmented(
    'calc-type',
    'Filter type',
    KINDS.map((k) => ({ value: k.id, label: k.label })),
    store.calc.type,
    (value) => store.update({ type: value as KindId }),
  );
  const blurb = h('p', { class: 'blurb' });
  const tiles = {
    bytes: tile('bytes', 'Memory'),
    bitsPerKey: tile('bitsPerKey', 'Bits per key'),
    p: tile('p', 'False positive rate'),
    n: tile('n', 'Keys'),
    k: tile('k', 'Hashes'),
  };
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const bound = h('div', { class: 'bound' });
  const shapeTable = h('table', { class: 'kv', 'aria-label': 'Shape' });
  const compare = h('table', { class: 'compare', id: 'compare' });
  const link = h('input', {
    id: 'calc-link',
    type: 'text',
    readonly: true,
    'aria-label': 'Link to these inputs',
  });
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy link');
  copy.addEventListener('click', async () => {
    link.select();
    try {
      await navigator.clipboard.writeText(link.value);
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Press Ctrl+C';
    }
    setTimeout(() => {
      copy.textContent = 'Copy link';
    }, 1500);
  });

  fill(
    root,
    h('h1', { id: 'h-calculator' }, 'Size a filter'),
    h(
      'p',
      { class: 'lede' },
      'Give any two of n, p and m (k is optional); the rest follows from the same sizing code as ',
      h('code', {}, 'create({ capacity, fpp })'),
      '.',
    ),
    h(
      'div',
      { class: 'calc-grid' },
      h(
        'div',
        { class: 'card inputs' },
        types,
        blurb,
        h('div', { class: 'fields' }, fields.n.wrap, fields.p.wrap, fields.m.wrap, fields.k.wrap),
        h('div', { class: 'share' }, link, copy),
      ),
      h(
        'div',
        { class: 'card results', 'aria-live': 'polite' },
        h('div', { class: 'tiles' }, ...Object.values(tiles).map((t) => t.el)),
        bound,
        shapeTable,
        status,
      ),
    ),
    h('h2', {}, 'Every type, same inputs'),
    h('div', { class: 'card scroll' }, compare),
  );

  const render = (text: CalcText): void => {
    const { input, errors } = parseInputs(text);
    for (const [key, f] of Object.entries(fields) as [
      keyof typeof fields,
      (typeof fields)['n'],
    ][]) {
      if (f.input.value !== text[key] && document.activeElement !== f.input)
        f.input.value = text[key];
    }
    for (const radio of types.querySelectorAll('input')) radio.checked = radio.value === text.type;
    for (const [key, f] of Object.entries(fields)) {
      f.input.setAttribute('aria-invalid', String(errors.includes(key as keyof CalcText)));
    }
    blurb.textContent = kindInfo(text.type).blurb;
    link.value = store.link();
    let result: CalcResult | null = null;
    try {
      if (errors.length > 0) {
        throw new RangeError(
          errors
            .map(
              (key) => `${INPUT_RULES[key as keyof typeof INPUT_RULES]}, got “${text[key].trim()}”`,
            )
            .join('; '),
        );
      }
      result = solve(text.type, input);
    } catch (e) {
      status.textContent = (e as Error).message;
      status.classList.add('error');
    }
    root.dataset.state = result === null ? 'error' : 'ok';
    if (result !== null) {
      status.classList.remove('error');
      status.textContent = [`Solved from ${result.from}.`, ...result.notes].join(' ');
      showResult(result);
    } else {
      for (const t of Object.values(tiles)) t.set('—', null);
      bound.replaceChildren();
      shapeTable.replaceChildren();
    }
    renderCompare(input, errors.length === 0, text.type);
  };

  const showResult = (r: CalcResult): void => {
    tiles.bytes.set(formatBytes(r.bytes), r.bytes, `${formatInt(r.bits)} bits`);
    // At a rate of 0 or 1 there is no lower bound (NaN): said in words, as calc leaves it out.
    const bounded = Number.isFinite(r.lowerBound);
    tiles.bitsPerKey.set(
      formatNumber(r.bitsPerKey, 4),
      r.bitsPerKey,
      bounded ? `lower bound ${formatNumber(r.lowerBound, 3)}` : 'no lower bound at this rate',
    );
    tiles.p.set(formatRate(r.p), r.p, oneIn(r.p));
    tiles.n.set(
      formatInt(r.n),
      r.n,
      r.from.startsWith('m') ? 'most keys at this rate' : 'keys inserted',
    );
    tiles.k.set(
      r.k === null ? '—' : String(r.k),
      r.k,
      r.k === null ? 'fingerprints instead' : 'bits probed per key',
    );
    if (!bounded) {
      fill(
        bound,
        h('div', { class: 'bound-text' }, `A rate of ${formatRate(r.p)} has no lower bound.`),
      );
    } else {
      const ratio = r.bitsPerKey / r.lowerBound;
      const pct = Math.min(100, (r.lowerBound / r.bitsPerKey) * 100);
      fill(
        bound,
        h(
          'div',
          { class: 'bound-text' },
          h('strong', {}, `${formatNumber(ratio, 3)}×`),
          ' the information-theoretic minimum of ',
          h('strong', {}, `${formatNumber(r.lowerBound, 3)} bits/key`),
          ` (log₂ 1/p) for this rate.`,
        ),
        h(
          'div',
          {
            class: 'bar',
            role: 'img',
            'aria-label': `lower bound is ${pct.toFixed(0)}% of the size`,
          },
          h('span', { class: 'bar-min', style: `width:${pct}%` }),
        ),
        h(
          'div',
          { class: 'bar-legend' },
          h('span', {}, `minimum ${formatNumber(r.lowerBound, 3)}`),
          h('span', {}, `overhead ${formatNumber(r.bitsPerKey - r.lowerBound, 3)} bits/key`),
        ),
      );
    }
    fill(
      shapeTable,
      h('caption', {}, 'Shape'),
      ...describeShape(r.shape).map(([k, v]) =>
        h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v)),
      ),
    );
    shapeTable.dataset.shape = JSON.stringify(r.shape);
  };

  const renderCompare = (input: CalcInputs, ok: boolean, current: KindId): void => {
    const head = h(
      'tr',
      {},
      ...['Type', 'Memory', 'Bits/key', '× bound', 'k', 'p at n', 'Keys'].map((t) =>
        h('th', { scope: 'col' }, t),
      ),
    );
    const rows = KINDS.map((kind) => {
      let r: CalcResult | null = null;
      let why = '';
      try {
        if (!ok) throw new RangeError('bad input');
        r = solve(kind.id, input);
      } catch (e) {
        why = (e as Error).message;
      }
      const name = h(
        'th',
        { scope: 'row' },
        h('span', { class: 'dot', style: `background:${kind.color}` }),
        kind.label,
      );
      const tr =
        r === null
          ? h('tr', { 'data-kind': kind.id }, name, h('td', { colspan: 6, class: 'muted' }, why))
          : h(
              'tr',
              {
                'data-kind': kind.id,
                'data-shape': JSON.stringify(r.shape),
                'data-p': r.p,
                'data-n': r.n,
              },
              name,
              h('td', {}, formatBytes(r.bytes)),
              h('td', {}, formatNumber(r.bitsPerKey, 4)),
              h('td', {}, formatNumber(r.bitsPerKey / r.lowerBound, 3)),
              h('td', {}, r.k === null ? '—' : String(r.k)),
              h('td', {}, formatRate(r.p)),
              h('td', {}, formatInt(r.n)),
            );
      if (kind.id === current) tr.classList.add('current');
      return tr;
    });
    fill(compare, h('thead', {}, head), h('tbody', {}, ...rows));
  };

  store.subscribe(render);
  render(store.calc);
}
