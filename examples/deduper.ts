/**
 * Deduper for a crawler's URL frontier: "have I queued this URL before?", remembered across runs
 * and crashes in one file.
 *
 * Crawls a made-up site of PAGES pages in which every page links to 10 others (so most links
 * were seen before), checkpointing every 5,000 new URLs; then opens the file again, as a restarted
 * crawler would, and checks that every URL queued before the last checkpoint is known. Prints the
 * duplicates dropped, the file size per URL and the expected false drops. The last line is the
 * same figures as JSON.
 *
 *   npx tsx examples/deduper.ts [state-file]     (default: a file in a new temporary folder)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deduper } from '../src/node.js'; // in your project: 'bloomkit/node'

const PAGES = Number(process.env.PAGES ?? 50_000);
const temp = process.argv[2] === undefined ? mkdtempSync(join(tmpdir(), 'dedup-')) : null;
const file = process.argv[2] ?? join(temp!, 'frontier.bloom');

const url = (page: number) => `https://shop.example/p/${page}`;
/** The pages page p links to (a fixed pseudo-random graph). */
const links = (p: number) =>
  Array.from({ length: 10 }, (_, i) => (Math.imul(p + 1, 2654435761 + i * 40503) >>> 0) % PAGES);

const dedup = await Deduper.open<string>(file, {
  capacity: PAGES,
  fpp: 1e-6,
  checkpointKeys: 5_000,
});
const frontier = [0];
const queued: number[] = [];
let linksSeen = 0;
let duplicates = 0;
dedup.seen(url(0));
while (frontier.length > 0) {
  const page = frontier.pop()!;
  queued.push(page);
  for (const next of links(page)) {
    linksSeen++;
    if (dedup.seen(url(next))) duplicates++;
    else frontier.push(next);
  }
  // A real crawler fetches the page here; checkpoint when the options say one is due.
  if (dedup.checkpointDue) await dedup.checkpoint();
}
await dedup.close(); // the final checkpoint

// A restarted crawler: every URL queued before the last checkpoint is known.
const again = await Deduper.open<string>(file);
const forgotten = queued.filter((p) => !again.seen(url(p))).length;
const bytes = statSync(file).size;
const { fresh, checkpoints, expectedFalseDrops } = dedup.stats;
console.log(
  `${linksSeen} links followed, ${fresh} new URLs queued, ${duplicates} duplicates dropped`,
);
console.log(
  `state file: ${bytes} bytes (${((8 * bytes) / fresh).toFixed(1)} bits per URL), ${checkpoints} checkpoints`,
);
console.log(
  `after a restart: ${forgotten} of ${queued.length} queued URLs forgotten; expected false drops ${expectedFalseDrops.toFixed(4)}`,
);
console.log(
  JSON.stringify({
    links: linksSeen,
    fresh,
    duplicates,
    bytes,
    checkpoints,
    forgotten,
    queued: queued.length,
    expectedFalseDrops,
  }),
);
if (temp !== null) rmSync(temp, { recursive: true, force: true });
