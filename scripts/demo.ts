/**
 * `npm start`: bloomkit's main job on the bundled sample data (samples/urls.txt, 20,000 URLs):
 * URL dedup, as in the source documents. Builds a Guava-sized Bloom filter for the list, checks
 * that every URL answers "maybe present", measures the false positive rate on 1,000,000 URLs that
 * are not in the list beside the rate the formula predicts, and reports throughput.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BloomFilter, falsePositiveRate } from '../src/index.js';

const file = fileURLToPath(new URL('../samples/urls.txt', import.meta.url));
const urls = readFileSync(file, 'utf8')
  .split('\n')
  .filter((line) => line.length > 0);
const fpp = Number(process.argv[2] ?? 0.01);

/** Best of `rounds` timings of `fn`, in seconds (the machine may be busy: the best is steadiest). */
function best(rounds: number, fn: () => void): number {
  let min = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    fn();
    min = Math.min(min, (performance.now() - t) / 1000);
  }
  return min;
}

let filter = BloomFilter.create({ capacity: urls.length, fpp });
let duplicates = 0;
for (const url of urls) if (!filter.add(url)) duplicates++;

// Throughput: the best of 20 rounds, each into a fresh filter (the first rounds warm the JIT).
const addSeconds = best(20, () => {
  filter = BloomFilter.create({ capacity: urls.length, fpp });
  for (const url of urls) filter.add(url);
});
let falseNegatives = 0;
for (const url of urls) if (!filter.has(url)) falseNegatives++;
const hasSeconds = best(20, () => {
  for (const url of urls) if (!filter.has(url)) throw new Error(`false negative: ${url}`);
});

const probes = 1_000_000;
// Flattened strings (as read from a file), so that rope flattening is not timed.
const absent = Array.from({ length: probes }, (_, i) =>
  JSON.parse(JSON.stringify(`${urls[i % urls.length]}#not-seen-${i}`)),
) as string[];
let falsePositives = 0;
for (const url of absent) if (filter.has(url)) falsePositives++;
const absentSeconds = best(3, () => {
  for (const url of absent) filter.has(url);
});

const measured = falsePositives / probes;
const theory = falsePositiveRate(urls.length, filter.bitSize, filter.hashes);
const sigma = Math.sqrt((theory * (1 - theory)) / probes);
const rate = (n: number, s: number): string => `${(n / s / 1e6).toFixed(2)} M ops/s`;

console.log(`bloomkit demo: URL dedup over ${file}`);
console.log(
  `  keys              ${urls.length} distinct URLs (${duplicates} false positives while adding: add() returned false)`,
);
console.log(`  requested fpp     ${fpp}`);
console.log(
  `  size              ${filter.bitSize} bits = ${filter.bitSize / 8} bytes, k = ${filter.hashes} hashes`,
);
console.log(`  bits per key      ${(filter.bitSize / urls.length).toFixed(2)}`);
console.log(`  false negatives   ${falseNegatives} (a Bloom filter never has any)`);
console.log(
  `  false positives   ${falsePositives} of ${probes} absent URLs = ${(measured * 100).toFixed(4)}%` +
    ` (theory (1-e^(-kn/m))^k = ${(theory * 100).toFixed(4)}%, ${((measured - theory) / sigma).toFixed(2)} sigma)`,
);
console.log(
  `  expectedFpp()     ${(filter.expectedFpp() * 100).toFixed(4)}% from the ${filter.bitCount} bits set`,
);
console.log(`  estimatedCount()  ${filter.estimatedCount()}`);
console.log(
  `  Guava writeTo     ${filter.toGuava().length} bytes (readable by BloomFilter.readFrom in Java)`,
);
console.log(
  `  throughput        add ${rate(urls.length, addSeconds)}, has(present) ${rate(urls.length, hasSeconds)}, has(absent) ${rate(probes, absentSeconds)}`,
);
if (falseNegatives > 0) process.exitCode = 1;
