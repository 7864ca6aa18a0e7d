/**
 * The architecture, checked: no import cycles in src/ (type-only imports are erased and do not
 * count), imports point one way (the browser-safe core never imports Node, Redis, the CLI or the
 * node entry; filters never import the codec table), and source files stay small.
 * docs/ARCHITECTURE.md states the same rules in prose.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'src');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const FILES = sources(SRC);
const rel = (p: string): string => relative(SRC, p).split('\\').join('/');

/** Runtime imports of a file: `import x from`, `export ... from`, `import('...')`; not `import type`. */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re =
    /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const spec = m[4] ?? m[5] ?? m[6]!;
    if (m[2] !== undefined) continue; // import type / export type
    const clause = m[3] ?? '';
    // `import { type A, type B } from` is type-only too.
    const braces = /^\{([^}]*)\}$/.exec(clause.trim());
    if (braces) {
      const names = braces[1]!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue;
    }
    out.push(spec);
  }
  return out;
}

function resolveSpec(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const target = resolve(dirname(from), spec.replace(/\.js$/, '.ts'));
  return FILES.includes(target) ? target : null;
}

const GRAPH = new Map(
  FILES.map((f) => [
    f,
    runtimeImports(f)
      .map((s) => resolveSpec(f, s))
      .filter((x): x is string => x !== null),
  ]),
);

function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 1);
    stack.push(f);
    for (const g of GRAPH.get(f) ?? []) {
      if (state.get(g) === 1) found.push([...stack.slice(stack.indexOf(g)), g].map(rel));
      else if (state.get(g) === undefined) visit(g);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of FILES) if (state.get(f) === undefined) visit(f);
  return found;
}

/** The most lines a source file may have (files of roughly 100-400 lines, one concept each). */
const MAX_LINES = 400;

/** Lines as `wc -l` counts them: a final newline ends the last line, it does not start one. */
function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Everything `file` reaches at run time. */
function reach(file: string): Set<string> {
  const seen = new Set<string>();
  const todo = [file];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...(GRAPH.get(f) ?? []));
  }
  return seen;
}

describe('architecture', () => {
  it('has no import cycles in src/', () => {
    expect(cycles()).toEqual([]);
  });

  it('keeps the browser-safe core free of Node, Redis, the CLI and the node entry', () => {
    const core = reach(join(SRC, 'index.ts'));
    const bad: string[] = [];
    for (const f of core) {
      const r = rel(f);
      if (/^(node|redis|cli)\//.test(r) || r === 'node.ts' || r === 'redis.ts') bad.push(r);
      for (const spec of runtimeImports(f)) {
        if (spec.startsWith('node:') || spec === 'redis' || spec === 'ioredis') {
          bad.push(`${r} imports ${spec}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('keeps filters apart from the codec table (codecs know filters, not the reverse)', () => {
    const bad: string[] = [];
    for (const f of FILES) {
      const r = rel(f);
      if (!r.startsWith('filters/') || r.endsWith('/codec.ts')) continue;
      for (const g of reach(f)) {
        const t = rel(g);
        if (/^formats\/(registry|type-table|type-rows)\.ts$/.test(t) || t.endsWith('/codec.ts')) {
          bad.push(`${r} -> ${t}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it(`keeps source files near one concept each (at most ${MAX_LINES} lines)`, () => {
    const long = FILES.map((f) => [rel(f), lineCount(readFileSync(f, 'utf8'))] as const)
      .filter(([, n]) => n > MAX_LINES)
      .map(([r, n]) => `${r}: ${n} lines, more than ${MAX_LINES}: split it along a seam`);
    expect(long).toEqual([]);
  });
});
