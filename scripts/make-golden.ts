/**
 * Writes the golden fixtures of `scripts/golden-cases.ts` to test/fixtures/golden/.
 *
 *   npx tsx scripts/make-golden.ts           writes the fixtures that do not exist yet
 *   npx tsx scripts/make-golden.ts --force   rewrites every fixture (a format change: bump the
 *                                            format version instead, and keep the old files)
 *
 * Fixtures are built from fixed keys only, so running it twice writes the same bytes.
 */

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GOLDEN_CASES } from './golden-cases.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'golden');
const force = process.argv.includes('--force');
await mkdir(dir, { recursive: true });
for (const c of GOLDEN_CASES) {
  const path = join(dir, c.file);
  if (existsSync(path) && !force) {
    console.log(`kept    ${c.file}`);
    continue;
  }
  const bytes = await c.build();
  await writeFile(path, bytes);
  console.log(`wrote   ${c.file} (${bytes.length} bytes)`);
}
