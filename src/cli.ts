#!/usr/bin/env node
/**
 * The `bloomkit` command (package.json "bin"): see src/cli/main.ts, and `bloomkit help`.
 */

import { main } from './cli/main.js';

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bloomkit: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
