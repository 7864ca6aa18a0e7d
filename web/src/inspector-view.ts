/**
 * The inspector view: drop (or choose) a filter file, see its shape, fill, estimated count and
 * rate, a fill map and per-part table, and check keys against it. Files are read with
 * `File.arrayBuffer()` and never sent anywhere.
 */

import { BloomFilter, type Key, ScalableBloomFilter } from '../../src/index.js';
import { fill, h } from './dom.js';
import { GUAVA_FUNNELS, type GuavaFunnel, type Inspection, inspect, parseKey } from './inspect.js';
import { readParquet } from './optional.js';
import { formatBytes, formatInt, formatRate, oneIn } from './units.js';

export function inspectorView(root: HTMLElement): void {
  let bytes: Uint8Array | null = null;
  let name = '';
  let current: Inspection | null = null;

  const fileInput = h('input', { type: 'file', id: 'inspect-file', class: 'visually-hidden' });
  const chooser = h('label', { for: 'inspect-file', class: 'button' }, 'Choose a file');
  const drop = h(
    'div',
    {
      class: 'drop',
      id: 'drop',
      tabindex: 0,
      role: 'button',
      'aria-label': 'Drop a filter file here, or press Enter to choose one',
    },
    h('strong', {}, 'Drop a filter file here'),
    h(
      'span',
      { class: 'muted' },
      readParquet === null
        ? 'bloomkit native (any type), Guava writeTo bytes or a DCSO bloom file'
        : 'bloomkit native (any type), Guava writeTo bytes, a Parquet file or filter, an MLBF cascade, a DCSO bloom file',
    ),
    chooser,
  );
  const funnel = h(
    'select',
    { id: 'inspect-funnel' },
    ...GUAVA_FUNNELS.map((f) => h('option', { value: f }, f)),
  );
  const column = h('select', { id: 'inspect-column' });
  const columnRow = h(
    'div',
    { class: 'field inline', hidden: true },
    h('label', { for: 'inspect-column' }, 'Column'),
    column,
  );
  const funnelLabel = h('label', { for: 'inspect-funnel' }, 'Guava funnel');
  const funnelRow = h('div', { class: 'field inline', hidden: true }, funnelLabel, funnel);
  const samples = h(
    'div',
    { class: 'buttons' },
    h('span', { class: 'muted' }, 'or try:'),
    sampleButton('classic, 10,000 keys', () => sample('classic')),
    sampleButton('scalable, 3 layers', () => sample('scalable')),
    sampleButton('Guava bytes', () => sample('guava')),
  );
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const result = h('div', { id: 'inspect-result' });
  const keys = h('textarea', {
    id: 'inspect-keys',
    rows: 5,
    placeholder: 'one key per line',
    spellcheck: 'false',
  });
  const checkButton = h('button', { type: 'submit' }, 'Check');
  const answers = h('ul', { class: 'answers', id: 'inspect-answers', 'aria-live': 'polite' });
  const checkForm = h(
    'form',
    { class: 'card', hidden: true },
    h('h2', {}, h('label', { for: 'inspect-keys' }, 'Check keys')),
    keys,
    h('div', { class: 'buttons' }, checkButton),
    answers,
  );

  fill(
    root,
    h('h1', { id: 'h-inspector' }, 'Look inside a filter file'),
    h('p', { class: 'lede' }, 'The file is read by the library in this page; nothing is uploaded.'),
    h('div', { class: 'card' }, drop, fileInput, samples, funnelRow, columnRow, status),
    result,
    checkForm,
  );

  const load = (data: Uint8Array, label: string): void => {
    bytes = data;
    name = label;
    void analyse();
  };

  const analyse = async (): Promise<void> => {
    if (bytes === null) return;
    try {
      current = await inspect(bytes, funnel.value as GuavaFunnel, name);
      // Guava's and MLBF bytes do not say how keys were encoded: the selector says it, for them only.
      funnelRow.hidden = current.format !== 'guava' && current.format !== 'mlbf';
      funnelLabel.textContent =
        current.format === 'mlbf' ? 'Key encoding (MLBF files do not say)' : 'Guava funnel';
      status.textContent = `${name}: ${formatBytes(bytes.length)}, read as ${FORMAT_NAMES[current.format]}.`;
      fill(column, ...current.columns.map((c) => h('option', { value: c }, c)));
      columnRow.hidden = current.columns.length === 0;
      status.classList.remove('error');
      render(current);
      checkForm.hidden = false;
      root.dataset.state = 'ok';
    } catch (e) {
      current = null;
      funnelRow.hidden = true;
      columnRow.hidden = true;
      status.textContent = `${name}: ${(e as Error).message}`;
      status.classList.add('error');
      result.replaceChildren();
      checkForm.hidden = true;
      root.dataset.state = 'error';
    }
  };

  const render = (r: Inspection): void => {
    const canvas = h('canvas', {
      class: 'fillmap',
      width: 512,
      height: 40,
      role: 'img',
      'aria-label': `fill map: ${(100 * r.fill).toFixed(1)}% set overall`,
    });
    const tiles = h(
      'div',
      { class: 'tiles' },
      stat('Type', r.type, 'type'),
      stat('Size', formatBytes(r.bytes), 'bytes', r.bytes),
      stat('Fill', Number.isFinite(r.fill) ? `${(100 * r.fill).toFixed(1)}%` : '—', 'fill', r.fill),
      stat(
        r.format === 'parquet' ? 'Distinct values (sum)' : 'Estimated keys',
        formatInt(r.estimatedCount),
        'estimated',
        r.estimatedCount,
      ),
      stat(
        r.format === 'parquet' ? 'Mean rate per chunk' : 'False positive rate',
        formatRate(r.fpr),
        'fpr',
        r.fpr,
        oneIn(r.fpr),
      ),
    );
    const shape = h(
      'table',
      { class: 'kv' },
      h('caption', {}, 'Shape'),
      ...r.shape.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v))),
    );
    const parts =
      r.parts.length === 0
        ? null
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              { class: 'compare', id: 'inspect-parts' },
              h('thead', {}, h('tr', {}, ...r.partHeader.map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                ...r.parts.map((p) =>
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'row' }, p.label),
                    ...p.cells.map((c) => h('td', {}, c)),
                  ),
                ),
              ),
            ),
          );
    fill(
      result,
      h(
        'div',
        { class: 'card' },
        tiles,
        h('h2', {}, 'Where the set cells are'),
        canvas,
        shape,
        parts,
      ),
    );
    drawFillMap(canvas, r.density);
  };

  const check = (): void => {
    if (current === null) return;
    const lines = keys.value.split('\n').filter((l) => l !== '');
    const filter = current.filter as { has(key: Key): boolean };
    fill(
      answers,
      ...lines.map((line) => {
        try {
          const yes = filter.has(parseKey(current!.funnel, line));
          return h(
            'li',
            { class: yes ? 'maybe' : 'no', 'data-key': line, 'data-answer': String(yes) },
            h('span', { class: 'badge' }, yes ? 'maybe' : 'no'),
            h('code', {}, line),
          );
        } catch (e) {
          return h(
            'li',
            { class: 'no' },
            h('span', { class: 'badge' }, 'error'),
            (e as Error).message,
          );
        }
      }),
    );
  };

  const sample = (kind: 'classic' | 'scalable' | 'guava'): void => {
    if (kind === 'scalable') {
      const s = ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01 });
      for (let i = 0; i < 6000; i++) s.add(`user:${i}`);
      load(s.toBytes(), 'sample-scalable.blmk');
    } else {
      const b = BloomFilter.create({ capacity: 10_000, fpp: 0.01 });
      for (let i = 0; i < 10_000; i++) b.add(`user:${i}`);
      load(
        kind === 'guava' ? b.toGuava() : b.toBytes(),
        kind === 'guava' ? 'sample-guava.bin' : 'sample-classic.blmk',
      );
    }
    keys.value = 'user:1\nuser:42\nnot-a-user';
  };

  fileInput.addEventListener('change', async () => {
    const file = fileInput.files?.[0];
    if (file) load(new Uint8Array(await file.arrayBuffer()), file.name);
  });
  drop.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      fileInput.click();
    }
  });
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const file = e.dataTransfer?.files[0];
    if (file) load(new Uint8Array(await file.arrayBuffer()), file.name);
  });
  funnel.addEventListener('change', () => void analyse());
  checkForm.addEventListener('submit', (e) => {
    e.preventDefault();
    check();
  });
}

const FORMAT_NAMES: Record<Inspection['format'], string> = {
  native: "bloomkit's native format",
  guava: "Guava's writeTo bytes",
  parquet: 'a Parquet file (the Bloom filters of its column chunks)',
  'parquet-bloom': 'a Parquet Bloom filter (header and bitset)',
  mlbf: 'an MLBF filter cascade',
  dcso: "a file of DCSO's bloom tool",
  unknown: 'unknown bytes',
};

function sampleButton(label: string, onClick: () => void): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'secondary' }, label);
  b.addEventListener('click', onClick);
  return b;
}

function stat(label: string, value: string, out: string, raw?: number, sub = ''): HTMLElement {
  return h(
    'div',
    { class: 'tile' },
    h('div', { class: 'tile-label' }, label),
    h('div', { class: 'tile-value', 'data-out': out, 'data-value': raw ?? value }, value),
    h('div', { class: 'tile-sub' }, sub),
  );
}

/** One column per run of cells, shaded by the fraction set (darker = fuller). */
function drawFillMap(canvas: HTMLCanvasElement, density: Float32Array): void {
  const ctx = canvas.getContext('2d');
  if (ctx === null || density.length === 0) return;
  const w = canvas.width / density.length;
  for (let i = 0; i < density.length; i++) {
    const d = density[i]!;
    ctx.fillStyle = `hsl(${235 - 15 * d}, 70%, ${95 - 60 * d}%)`;
    ctx.fillRect(Math.floor(i * w), 0, Math.ceil(w), canvas.height);
  }
}
