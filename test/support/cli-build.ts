/**
 * The `bloomkit` command built with esbuild (tsup's engine), once for all test files, kept under
 * node_modules/.cache/bloomkit-cli while what it is built from (src/, the lock file,
 * the build scripts, this file) is unchanged (test/support/build-cache.ts).
 */

import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { hotPathChunk } from '../../scripts/cli-chunks.js';
import { commandAsCommonJs } from '../../scripts/cli-commonjs.js';
import { cachedBuild, newestOf, ROOT, SPLIT_NODE_BUILD } from './build-cache.js';

/**
 * What the build reads: a change to any of these makes a cached build stale. Not package.json:
 * the command reads its version from it when run, and `npm pack` (test/package.test.ts) rewrites
 * it for a moment during the run, which made test files starting then build the command again.
 */
const INPUTS = [
  'src',
  'package-lock.json',
  'scripts/cli-chunks.ts',
  'scripts/cli-commonjs.ts',
  fileURLToPath(import.meta.url),
];
/**
 * The folder holding the built command (cli.cjs and its CommonJS files, as in dist/) and the ES
 * module build they are made from (main.js, commands.js and node.js for tests that import them,
 * and their shared chunks), fresh for the
 * current sources: built now unless a test file already built these sources.
 */
export async function cliBuild(): Promise<string> {
  return cachedBuild('bloomkit-cli', `v5-${newestOf(INPUTS)}`, async (temp) => {
    await build({
      ...SPLIT_NODE_BUILD,
      // cli.js: the command. main.js and commands.js: its main() and command table, for tests
      // that run it in their own process. cli-worker.js: what the command's worker threads
      // (--threads) load, as in dist/. node.js: bloomkit/node, for child scripts.
      entryPoints: {
        cli: 'src/cli.ts',
        main: 'src/cli/main.ts',
        commands: 'src/cli/commands/index.ts',
        node: 'src/node.ts',
        'cli-worker': 'src/node/parallel-worker.ts',
      },
      outdir: temp,
      outExtension: { '.js': '.js' },
      // As tsup leaves them out of dist/ (peer dependencies): loaded from node_modules.
      external: ['redis', 'ioredis'],
      // As dist/cli.cjs is cut (tsup.config.ts): the code of a plain add or check in one file.
      plugins: [
        hotPathChunk({ root: ROOT, entry: 'src/cli.ts', apart: ['src/node/parallel-worker.ts'] }),
      ],
    });
    // The command as dist/ ships it: each file also as CommonJS (scripts/cli-commonjs.ts).
    await commandAsCommonJs(temp, temp, { sourcemap: false, removeFrom: false });
    chmodSync(join(temp, 'cli.cjs'), 0o755); // as installed: run by its #! line
  });
}
