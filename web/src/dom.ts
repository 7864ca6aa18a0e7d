/**
 * A few lines of DOM building: `h('p', { class: 'x' }, 'text', child)`. Text is always set as
 * text (never parsed as HTML), so keys and file contents cannot inject markup.
 */

export type Child = Node | string | number | null | undefined | false;

export type Attrs = Record<string, string | number | boolean | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A labelled text input with a hint line; returns the input. */
export function field(
  id: string,
  label: string,
  hint: string,
  attrs: Attrs = {},
): { wrap: HTMLElement; input: HTMLInputElement } {
  const input = h('input', {
    id,
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': `${id}-hint`,
    ...attrs,
  });
  const wrap = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    input,
    h('small', { id: `${id}-hint`, class: 'hint' }, hint),
  );
  return { wrap, input };
}

/** A row of radio buttons styled as a segmented control. */
export function segmented(
  name: string,
  legend: string,
  options: readonly { value: string; label: string }[],
  selected: string,
  onChange: (value: string) => void,
): HTMLFieldSetElement {
  const set = h('fieldset', { class: 'segmented' }, h('legend', {}, legend));
  for (const o of options) {
    const id = `${name}-${o.value}`;
    const radio = h('input', { type: 'radio', name, id, value: o.value });
    radio.checked = o.value === selected;
    radio.addEventListener('change', () => {
      if (radio.checked) onChange(o.value);
    });
    set.append(radio, h('label', { for: id }, o.label));
  }
  return set;
}

/** A result tile: a label, a big value and a small line; `data-out` names it for tests. */
export function tile(
  name: string,
  label: string,
): {
  el: HTMLElement;
  set(value: string, raw: number | string | null, sub?: string): void;
} {
  const big = h('div', { class: 'tile-value', 'data-out': name });
  const small = h('div', { class: 'tile-sub' });
  const el = h('div', { class: 'tile' }, h('div', { class: 'tile-label' }, label), big, small);
  return {
    el,
    set(value, raw, sub = '') {
      big.textContent = value;
      big.dataset.value = raw === null ? '' : String(raw);
      small.textContent = sub;
    },
  };
}
