/**
 * The live filter: a small real filter drawn cell by cell. Typing a key and pressing Enter adds
 * it and lights the cells it set; checking a key shows the cells `has` reads and why it answers
 * "certainly not" or "maybe".
 */

import type { MembershipFilter } from '../../src/index.js';
import { solve } from './calc.js';
import { fill, h, segmented } from './dom.js';
import {
  cellCount,
  describeShape,
  type KindId,
  LIVE_KINDS,
  liveCells,
  makeFilter,
  type Shape,
} from './kinds.js';
import { cells, explain, landing } from './live-model.js';
import { formatInt, formatRate, parseCount, parseRate } from './units.js';

/** The most cells drawn. */
const MAX_CELLS = 8192;
const WORDS = [
  'apple',
  'banana',
  'cherry',
  'date',
  'elder',
  'fig',
  'grape',
  'guava',
  'kiwi',
  'lemon',
  'lime',
  'mango',
  'melon',
  'olive',
  'peach',
  'pear',
  'plum',
  'quince',
  'berry',
  'yuzu',
];

export function liveView(root: HTMLElement): void {
  let kind: KindId = 'classic';
  let shape: Shape = { kind: 'classic', bits: 64, hashes: 1 };
  let filter: MembershipFilter = makeFilter(shape);
  const added = new Set<string>();
  let lit = new Set<number>();
  let checked = new Map<number, number>();
  let serial = 0;

  const nInput = h('input', {
    id: 'live-n',
    type: 'text',
    value: '100',
    inputmode: 'numeric',
    autocomplete: 'off',
  });
  const pInput = h('input', { id: 'live-p', type: 'text', value: '5%', autocomplete: 'off' });
  const keyInput = h('input', {
    id: 'live-key',
    type: 'text',
    placeholder: 'type a key, press Enter',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const checkInput = h('input', {
    id: 'live-check',
    type: 'text',
    placeholder: 'key to check',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const addButton = h('button', { type: 'submit' }, 'Add');
  const checkButton = h('button', { type: 'submit', class: 'secondary' }, 'Check');
  const randomButton = h('button', { type: 'button', class: 'secondary' }, 'Add 10 words');
  const clearButton = h('button', { type: 'button', class: 'secondary' }, 'Clear');
  const shapeLine = h('p', { class: 'muted', id: 'live-shape' });
  const stats = h('dl', { class: 'stats' });
  const grid = h('div', { class: 'cells', id: 'live-cells', role: 'img' });
  const why = h('p', { class: 'why', id: 'live-why', role: 'status', 'aria-live': 'polite' });
  const history = h('ul', { class: 'keys', 'aria-label': 'Keys added' });
  const error = h('p', { class: 'status error', role: 'alert' });

  const types = segmented(
    'live-type',
    'Filter type',
    LIVE_KINDS.map((k) => ({ value: k.id, label: k.label })),
    kind,
    (v) => {
      kind = v as KindId;
      rebuild();
    },
  );
  const addForm = h(
    'form',
    { class: 'inline-form' },
    h('label', { for: 'live-key' }, 'Add a key'),
    keyInput,
    addButton,
  );
  const checkForm = h(
    'form',
    { class: 'inline-form' },
    h('label', { for: 'live-check' }, 'Check a key'),
    checkInput,
    checkButton,
  );

  fill(
    root,
    h('h1', { id: 'h-live' }, 'Watch a filter fill'),
    h(
      'p',
      { class: 'lede' },
      'A real bloomkit filter, small enough to see. Each key sets the cells the library computes for it; a key that was never added can still find all its cells set.',
    ),
    h(
      'div',
      { class: 'live-grid' },
      h(
        'div',
        { class: 'card' },
        types,
        h(
          'div',
          { class: 'fields two' },
          h('div', { class: 'field' }, h('label', { for: 'live-n' }, 'Sized for keys'), nInput),
          h('div', { class: 'field' }, h('label', { for: 'live-p' }, 'at rate'), pInput),
        ),
        shapeLine,
        error,
        addForm,
        h('div', { class: 'buttons' }, randomButton, clearButton),
        checkForm,
        why,
        stats,
        history,
      ),
      h(
        'div',
        { class: 'card cells-card' },
        h(
          'div',
          { class: 'legend' },
          legendItem('on', 'set'),
          legendItem('on probe', 'last key added'),
          legendItem('on check set', 'checked: set'),
          legendItem('check zero', 'checked: 0'),
        ),
        grid,
      ),
    ),
  );

  const rebuild = (): void => {
    const n = parseCount(nInput.value);
    const p = parseRate(pInput.value);
    try {
      if (n === null) throw new RangeError('sized for: type a key count such as 100');
      if (p === null) throw new RangeError('rate: type a rate such as 5% or 0.05');
      const next = solve(kind, { n, p }).shape;
      const size = cellCount(next);
      if (size > MAX_CELLS)
        throw new RangeError(
          `that shape has ${formatInt(size)} cells; the live view draws up to ${formatInt(MAX_CELLS)}`,
        );
      shape = next;
      error.textContent = '';
    } catch (e) {
      error.textContent = (e as Error).message;
      return;
    }
    filter = makeFilter(shape);
    const keys = [...added];
    added.clear();
    lit = new Set();
    checked = new Map();
    // The explanation spoke of the previous filter's cells: it goes with them.
    why.textContent = '';
    delete why.dataset.answer;
    for (const key of keys) addKey(key, false);
    shapeLine.textContent = describeShape(shape)
      .map(([k, v]) => `${v} ${k}`)
      .join(' · ');
    grid.dataset.shape = JSON.stringify(shape);
    draw();
  };

  const addKey = (key: string, light: boolean): void => {
    try {
      filter.add(key);
    } catch (e) {
      error.textContent = (e as Error).message;
      return;
    }
    added.add(key);
    if (light) {
      const where = landing(shape, key);
      lit = new Set(where.kind === 'bits' ? where.positions : cuckooSlots(where.buckets, key));
      checked = new Map();
    }
  };

  /** The slots of the two buckets that now hold the key's fingerprint. */
  const cuckooSlots = (buckets: [number, number], key: string): number[] => {
    const where = landing(shape, key);
    const fp = where.kind === 'fingerprint' ? where.fingerprint : -1;
    const values = cells(filter, shape);
    const out: number[] = [];
    for (const b of buckets)
      for (let j = 0; j < 4; j++) if (values[b * 4 + j] === fp) out.push(b * 4 + j);
    return out;
  };

  const draw = (): void => {
    const values = cells(filter, shape);
    const live = liveCells(shape.kind);
    const frag = document.createDocumentFragment();
    const perRow = live.perRow;
    const groupRows = live.blockRows;
    grid.className = `cells kind-${shape.kind}`;
    grid.style.setProperty('--cols', String(perRow));
    let group: HTMLElement | null = null;
    for (let i = 0; i < values.length; i++) {
      const row = Math.floor(i / perRow);
      if (i % perRow === 0 && (group === null || (groupRows > 0 && row % groupRows === 0))) {
        group = h('div', { class: 'cell-group' });
        if (groupRows > 0)
          group.append(h('div', { class: 'group-label' }, `block ${row / groupRows}`));
        frag.append(group);
      }
      const v = values[i]!;
      const cell = h('span', {
        class: 'cell',
        'data-i': i,
        title: live.title(i, values[i]!),
      });
      if (v !== 0) cell.classList.add('on');
      if (live.unit === 'counter' && v !== 0) {
        cell.textContent = v.toString(16);
        cell.style.setProperty('--level', String(v / 15));
      }
      if (live.unit === 'slot') {
        cell.textContent = v === 0 ? '' : v.toString(16);
        if (i % 4 === 0) cell.dataset.bucket = String(i / 4);
      }
      if (lit.has(i)) cell.classList.add('probe');
      if (checked.has(i)) cell.classList.add('check', checked.get(i) === 0 ? 'zero' : 'set');
      group!.append(cell);
    }
    grid.replaceChildren(frag);
    const setCount = values.reduce((a, v) => a + (v !== 0 ? 1 : 0), 0);
    grid.setAttribute(
      'aria-label',
      `${formatInt(values.length)} cells, ${formatInt(setCount)} set`,
    );
    const f = filter as MembershipFilter & { expectedFpp(): number };
    fill(
      stats,
      h('dt', {}, 'keys added'),
      h('dd', { 'data-out': 'added' }, formatInt(added.size)),
      h('dt', {}, 'estimated count'),
      h('dd', { 'data-out': 'estimated' }, formatInt(filter.estimatedCount())),
      h('dt', {}, live.unit === 'slot' ? 'slots used' : 'cells set'),
      h(
        'dd',
        {},
        `${formatInt(setCount)} of ${formatInt(values.length)} (${((100 * setCount) / values.length).toFixed(1)}%)`,
      ),
      h('dt', {}, 'false positive rate now'),
      h('dd', { 'data-out': 'fpr', 'data-value': f.expectedFpp() }, formatRate(f.expectedFpp())),
    );
    fill(
      history,
      ...[...added]
        .slice(-24)
        .reverse()
        .map((k) => h('li', {}, k)),
    );
  };

  addForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = keyInput.value;
    if (key === '') return;
    addKey(key, true);
    why.textContent = `Added “${key}”: ${lit.size} ${liveCells(shape.kind).unit === 'slot' ? 'slot' : 'cell'}${lit.size === 1 ? '' : 's'} lit (${[...lit].join(', ')}).`;
    keyInput.value = '';
    draw();
  });
  checkForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = checkInput.value;
    if (key === '') return;
    const w = explain(filter, shape, key);
    checked = new Map(w.probes.map((p) => [p.position, p.value]));
    lit = new Set();
    const truth = added.has(key)
      ? 'It was added.'
      : w.answer
        ? 'It was never added: this is a false positive.'
        : '';
    why.textContent = `“${key}”: ${w.sentence} ${truth}`;
    why.dataset.answer = String(w.answer);
    draw();
  });
  randomButton.addEventListener('click', () => {
    for (let i = 0; i < 10; i++)
      addKey(`${WORDS[serial % WORDS.length]}-${Math.floor(serial++ / WORDS.length)}`, false);
    lit = new Set();
    checked = new Map();
    draw();
  });
  clearButton.addEventListener('click', () => {
    added.clear();
    filter = makeFilter(shape);
    lit = new Set();
    checked = new Map();
    why.textContent = '';
    draw();
  });
  nInput.addEventListener('change', rebuild);
  pInput.addEventListener('change', rebuild);
  rebuild();
}

function legendItem(cls: string, text: string): HTMLElement {
  return h(
    'span',
    { class: 'legend-item' },
    h('span', { class: `cell ${cls}`, 'aria-hidden': 'true' }),
    text,
  );
}
