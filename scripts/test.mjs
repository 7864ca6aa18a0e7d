/**
 * `npm test`: the type check (scripts/typecheck.mjs), the lint (biome check .) and the tests
 * (vitest run, with any arguments given: `npm test -- test/bloom.test.ts`), all three at once;
 * fails if any of them fails.
 *
 * The tests do not keep two cores busy all the time (files wait on Redis, PostgreSQL, the JVM,
 * Chromium), so the type check and the lint run beside them at the lowest CPU priority: they take
 * the idle time instead of adding about 25 s before the first test starts, and never slow a test.
 * Vitest prints as it goes; the type check's and the lint's output is held and printed after it,
 * each under its own heading, with a last line per step saying whether it passed.
 * Plain JavaScript, so it runs before anything is compiled.
 */
import { spawn } from 'node:child_process';
import { constants, setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;

/**
 * Runs `args` with node; resolves to its exit status and, when `held`, its output. A `low` child
 * gets the lowest CPU priority at once, before it starts anything of its own (biome's launcher
 * starts the native linter, whose threads inherit the priority).
 */
function run(name, args, held, low = false) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(node, args, {
      cwd: root,
      stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: held ? { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' } : process.env,
    });
    if (low && child.pid !== undefined) {
      try {
        setPriority(child.pid, constants.priority.PRIORITY_LOW);
      } catch {
        // Not permitted here: the lint runs at normal priority.
      }
    }
    const out = [];
    if (held) {
      child.stdout.on('data', (b) => out.push(b));
      child.stderr.on('data', (b) => out.push(b));
    }
    child.on('error', (err) => out.push(Buffer.from(`${err.stack ?? err}\n`)));
    child.on('close', (code, signal) => {
      const ok = code === 0 && signal === null;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      resolve({ name, ok, seconds, output: Buffer.concat(out).toString(), code, signal });
    });
  });
}

const background = [
  run('typecheck', [join(root, 'scripts', 'typecheck.mjs'), '--background'], true),
  run(
    'lint',
    [join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'check', '.'],
    true,
    true,
  ),
];
const tests = await run(
  'vitest',
  [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)],
  false,
);
const results = [...(await Promise.all(background)), tests];
for (const r of results.slice(0, 2)) {
  const output = r.output.trimEnd();
  if (output !== '') process.stdout.write(`\n── ${r.name} ──\n${output}\n`);
}
process.stdout.write('\n');
for (const r of results) {
  const how = r.ok ? 'passed' : `FAILED (${r.signal ?? `exit ${r.code}`})`;
  process.stdout.write(`${r.name}: ${how} in ${r.seconds} s\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
