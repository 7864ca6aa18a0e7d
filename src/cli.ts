#!/usr/bin/env node
/**
 * The `bloomkit` command (package.json "bin"): see src/cli/main.ts, and `bloomkit help`.
 */

import { main } from './cli/main.js';

/**
 * After Ctrl-C (130) or SIGTERM (143) the command has saved what it keeps; it then exits as
 * soon as nothing is left to do, and at the latest this many ms later: output still queued for
 * a reader that stopped reading (a full pipe) must not hold the process past the signal.
 */
const SIGNAL_EXIT_GRACE_MS = 500;

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
    if (code === 130 || code === 143) {
      setTimeout(() => process.exit(code), SIGNAL_EXIT_GRACE_MS).unref();
    }
  },
  (error: unknown) => {
    process.stderr.write(`bloomkit: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
