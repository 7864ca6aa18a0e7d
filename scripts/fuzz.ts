/**
 * `npm run fuzz [-- --runs N --seed S --only NAME]`: the fuzz table of test/fuzz/readers.ts with a
 * large budget (default 20,000 inputs per reader). Prints, per reader: inputs tried, accepted,
 * rejected, the slowest input and the largest allocation seen across one call; exits non-zero on
 * the first input that breaks the property (fast-check prints it, shrunk, with the seed to replay).
 */
import {
  ALLOCATION_BASE,
  ALLOCATION_PER_BYTE,
  type FuzzStats,
  fuzz,
  TIME_LIMIT_MS,
} from '../test/fuzz/engine.js';
import { FUZZ_READERS } from '../test/fuzz/readers.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

const runs = Number(option('runs', '20000'));
const seed = Number(option('seed', '20261201'));
const only = option('only', '');
if (!Number.isSafeInteger(runs) || runs < 1)
  throw new RangeError(`--runs must be a positive integer, got ${runs}`);
if (!Number.isSafeInteger(seed)) throw new RangeError(`--seed must be an integer, got ${seed}`);

console.log(
  `fuzzing ${runs} inputs per reader, seed ${seed}; bounds per input: ${TIME_LIMIT_MS} ms, ` +
    `${ALLOCATION_BASE / 2 ** 20} MiB + ${ALLOCATION_PER_BYTE} bytes per input byte`,
);
const rows: FuzzStats[] = [];
for (const reader of FUZZ_READERS) {
  if (only !== '' && !reader.name.includes(only)) continue;
  const started = performance.now();
  const stats = await fuzz(reader, runs, seed);
  rows.push(stats);
  console.log(
    `${stats.reader}: ${stats.tried} tried, ${stats.accepted} accepted, ${stats.rejected} rejected, ` +
      `slowest ${stats.slowestMs.toFixed(2)} ms, largest allocation ${stats.largestAllocation} bytes ` +
      `(${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
}
console.log(
  '\n| reader | inputs tried | accepted | rejected (FormatError) | slowest | largest allocation |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const s of rows) {
  const kib = (s.largestAllocation / 1024).toFixed(1);
  console.log(
    `| ${s.reader} | ${s.tried.toLocaleString('en-US')} | ${s.accepted.toLocaleString('en-US')} | ${s.rejected.toLocaleString('en-US')} | ${s.slowestMs.toFixed(1)} ms | ${kib} KiB |`,
  );
}
