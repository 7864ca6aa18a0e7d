/**
 * The page's entry point: one view per tab, chosen by the URL fragment. Each view is built the
 * first time it is shown.
 */

import 'uplot/dist/uPlot.min.css';
import '../styles.css';
import { calculatorView } from './calc-view.js';
import { inspectorView } from './inspector-view.js';
import { liveView } from './live-view.js';
import { plotsView } from './plots-view.js';
import { readHash, Store, VIEWS, type ViewId } from './state.js';

const store = new Store(location.hash);
const built = new Set<ViewId>();
const builders: Record<ViewId, (root: HTMLElement) => void> = {
  calculator: (root) => calculatorView(root, store),
  plots: (root) => plotsView(root, store),
  live: (root) => liveView(root),
  inspector: (root) => inspectorView(root),
};

function show(view: ViewId): void {
  store.view = view;
  for (const v of VIEWS) {
    const root = document.getElementById(`view-${v}`)!;
    root.hidden = v !== view;
    if (v === view && !built.has(v)) {
      built.add(v);
      builders[v](root);
    }
  }
  for (const a of document.querySelectorAll<HTMLAnchorElement>('.tabs a')) {
    if (a.dataset.view === view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.body.dataset.view = view;
}

window.addEventListener('hashchange', () => {
  const { view, calc } = readHash(location.hash);
  show(view);
  if (calc !== null && JSON.stringify(calc) !== JSON.stringify(store.calc)) store.update(calc);
  else store.syncUrl();
  document.getElementById('main')?.focus({ preventScroll: true });
});

show(store.view);
