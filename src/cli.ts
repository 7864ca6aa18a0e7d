#!/usr/bin/env node
/**
 * The `bloomkit` command (package.json "bin"): see src/cli/main.ts, and `bloomkit help`.
 */

import { main } from './cli/main.js';

// Getters: Node makes a standard stream when it is first read, and a run makes only those it
// uses (see CliIo).
main(process.argv.slice(2), {
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
  get stdin() {
    return process.stdin;
  },
  stdinFd: 0,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bloomkit: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
