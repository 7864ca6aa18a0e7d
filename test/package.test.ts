/**
 * The published shape: `npm run build` (tsup) produces ESM and CJS for every entry point, with
 * type declarations first in every `exports` condition, and both module systems load the package
 * by its own name (Node's self-reference through `exports`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('package', () => {
  beforeAll(() => {
    execFileSync('npx', ['tsup', '--silent'], { cwd: root, stdio: 'pipe' });
  }, 240_000);

  it('lists types first in every exports condition, and every target exists', () => {
    for (const [entry, conditions] of Object.entries(pkg.exports as Record<string, unknown>)) {
      if (typeof conditions === 'string') continue;
      for (const [kind, target] of Object.entries(
        conditions as Record<string, Record<string, string>>,
      )) {
        expect(Object.keys(target)[0], `${entry} ${kind}`).toBe('types');
        for (const file of Object.values(target)) {
          expect(existsSync(join(root, file)), `${entry} ${kind} ${file}`).toBe(true);
        }
      }
    }
    expect(pkg.type).toBe('module');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.files).toEqual(['dist']);
  });

  it('loads by name from ESM and from CommonJS', () => {
    const esm = `import { BloomFilter } from 'bloomkit'; import * as node from 'bloomkit/node';
const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 }); f.add('a');
if (!f.has('a') || typeof node.BloomFilter !== 'function') process.exit(1); console.log('esm ok');`;
    const cjs = `const { BloomFilter } = require('bloomkit'); const node = require('bloomkit/node');
const f = BloomFilter.create({ capacity: 1000, fpp: 0.01 }); f.add('a');
if (!f.has('a') || typeof node.BloomFilter !== 'function') process.exit(1); console.log('cjs ok');`;
    expect(
      execFileSync('node', ['--input-type=module', '-e', esm], { cwd: root }).toString(),
    ).toContain('esm ok');
    expect(
      execFileSync('node', ['--input-type=commonjs', '-e', cjs], { cwd: root }).toString(),
    ).toContain('cjs ok');
  });

  it('shares one copy of the core between entry points (instanceof holds across them)', () => {
    const esm = `import { BloomFilter } from 'bloomkit'; import * as node from 'bloomkit/node'; import * as redis from 'bloomkit/redis';
if (node.BloomFilter !== BloomFilter || redis.BloomFilter !== BloomFilter) process.exit(1); console.log('same');`;
    const cjs = `const { BloomFilter } = require('bloomkit'); const node = require('bloomkit/node'); const redis = require('bloomkit/redis');
if (node.BloomFilter !== BloomFilter || redis.BloomFilter !== BloomFilter) process.exit(1); console.log('same');`;
    expect(
      execFileSync('node', ['--input-type=module', '-e', esm], { cwd: root }).toString(),
    ).toContain('same');
    expect(
      execFileSync('node', ['--input-type=commonjs', '-e', cjs], { cwd: root }).toString(),
    ).toContain('same');
  });

  it('keeps the browser entry free of Node imports', () => {
    // dist/index.js and every chunk it imports, transitively.
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const js = readFileSync(join(root, 'dist', file), 'utf8');
      expect(js, file).not.toMatch(
        /from ['"]node:|require\(['"]node:|from ['"](fs|path|os|worker_threads|redis)['"]/,
      );
      for (const m of js.matchAll(/from ['"]\.\/([^'"]+)['"]/g)) visit(m[1]!);
    };
    visit('index.js');
    expect(seen.size).toBeGreaterThan(1);
  });
});
