/**
 * The page's shared state: the view shown and the calculator's inputs as typed. Both live in
 * the URL's fragment (`#calculator?type=blocked&n=1e6&p=1%`), so a link reproduces the page and
 * nothing is sent to a server (a fragment never is).
 */

import { KINDS, type KindId } from './kinds.js';

export type ViewId = 'calculator' | 'plots' | 'live' | 'inspector';
export const VIEWS: readonly ViewId[] = ['calculator', 'plots', 'live', 'inspector'];

export interface CalcText {
  type: KindId;
  n: string;
  p: string;
  m: string;
  k: string;
}

export const DEFAULT_CALC: CalcText = { type: 'classic', n: '1,000,000', p: '1%', m: '', k: '' };

/** The view and, when the fragment carries them, the calculator inputs (null otherwise). */
export function readHash(hash: string): { view: ViewId; calc: CalcText | null } {
  const body = hash.replace(/^#/, '');
  const q = body.indexOf('?');
  const name = q < 0 ? body : body.slice(0, q);
  const view = (VIEWS as readonly string[]).includes(name) ? (name as ViewId) : 'calculator';
  if (q < 0) return { view, calc: null };
  // A link carries every input it uses: a missing one is empty, not the default.
  const calc: CalcText = { type: DEFAULT_CALC.type, n: '', p: '', m: '', k: '' };
  {
    const params = new URLSearchParams(body.slice(q + 1));
    const type = params.get('type');
    if (type !== null && KINDS.some((k) => k.id === type)) calc.type = type as KindId;
    for (const key of ['n', 'p', 'm', 'k'] as const) {
      const v = params.get(key);
      if (v !== null) calc[key] = v;
    }
  }
  return { view, calc };
}

export function writeHash(view: ViewId, calc: CalcText): string {
  const params = new URLSearchParams();
  params.set('type', calc.type);
  for (const key of ['n', 'p', 'm', 'k'] as const)
    if (calc[key].trim() !== '') params.set(key, calc[key]);
  return `#${view}?${params.toString()}`;
}

type Listener = (calc: CalcText) => void;

/** The calculator inputs, shared by the calculator and the plots. */
export class Store {
  calc: CalcText;
  view: ViewId;
  private readonly listeners: Listener[] = [];

  constructor(hash: string) {
    const s = readHash(hash);
    this.calc = s.calc ?? { ...DEFAULT_CALC };
    this.view = s.view;
  }

  subscribe(fn: Listener): void {
    this.listeners.push(fn);
  }

  update(patch: Partial<CalcText>): void {
    this.calc = { ...this.calc, ...patch };
    this.syncUrl();
    for (const fn of this.listeners) fn(this.calc);
  }

  /** Writes the view and inputs into the address bar (no history entry, no reload). */
  syncUrl(): void {
    history.replaceState(null, '', writeHash(this.view, this.calc));
  }

  link(): string {
    return `${location.href.split('#')[0]}${writeHash('calculator', this.calc)}`;
  }
}
