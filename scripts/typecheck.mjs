/**
 * `npm run typecheck`: the three TypeScript projects, two at a time (one per core of a small
 * machine), failing if any fails. The checker is TypeScript 7, the native compiler (the
 * `typescript-7` dev dependency): the whole check takes about 6 s of CPU against about 30 s with
 * TypeScript 5.9, which stays the `typescript` dependency because the declaration build (tsup)
 * and the API docs (typedoc) use its JavaScript API (so the sources are also compiled by 5.9
 * when their declarations are built). The projects:
 * - tsconfig.json: the browser-safe core alone, with neither Node's nor the DOM's types;
 * - tsconfig.node.json: everything with Node's types (sources, tests and type tests, benchmarks,
 *   scripts);
 * - web/tsconfig.json: the page, with the DOM's types.
 * Each project is checked incrementally (tsc --incremental, its state in
 * node_modules/.cache/bloomkit-typecheck/): a run after a small edit re-checks only what the edit
 * can affect (the first run in a fresh clone checks everything, as before).
 * Each compiler checks on one thread (--singleThreaded): the projects already run two at a time,
 * and TypeScript 7's parallel checkers repeat work between them (measured on a fresh clone: the
 * whole check 7.4 s of CPU with them, 5.3 s without, in the same wall time).
 * With --background (how scripts/test.mjs runs it beside the tests) it and its compilers run at
 * the lowest CPU priority, so they use only the time the tests leave idle.
 * Plain JavaScript, so it runs before anything is compiled.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { availableParallelism, constants, setPriority } from 'node:os';
import { dirname, join } from 'node:path';

const tsc = join(
  dirname(createRequire(import.meta.url).resolve('typescript-7/package.json')),
  'bin',
  'tsc',
);
// The largest first, so that the two small ones share the other core.
const projects = ['tsconfig.node.json', 'tsconfig.json', 'web/tsconfig.json'];
const slots = Math.max(1, Math.min(2, availableParallelism()));
// Children inherit the priority: set it before the first compiler starts.
if (process.argv.includes('--background')) setPriority(constants.priority.PRIORITY_LOW);

const cache = join('node_modules', '.cache', 'bloomkit-typecheck');

function check(project) {
  const state = join(cache, `${project.replace(/[/\\]/g, '_')}.tsbuildinfo`);
  const args = [
    tsc,
    '-p',
    project,
    '--pretty',
    '--incremental',
    '--tsBuildInfoFile',
    state,
    '--singleThreaded',
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code === 0 && signal === null));
  });
}

let failed = false;
const queue = [...projects];
await Promise.all(
  Array.from({ length: slots }, async () => {
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      if (!(await check(p))) {
        console.error(`typecheck: ${p} has errors`);
        failed = true;
      }
    }
  }),
);
process.exit(failed ? 1 : 0);
