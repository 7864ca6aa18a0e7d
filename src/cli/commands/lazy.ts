/**
 * The command table as `main` uses it: each command's module is loaded only when that command
 * runs, so `bloomkit add` does not parse and compile the code of `info`, `calc`, `redis`... at
 * start-up (the whole table cost about 25 ms of CPU and 6 MiB more per run). The full table
 * (`./index.js`, for `help` and the tests) lists the same commands; test/cli.test.ts checks that
 * both name the same ones.
 */

import type { Command } from '../command.js';
import { COMMAND_ALIASES } from './aliases.js';

const LOADERS = new Map<string, () => Promise<Command>>([
  ['create', async () => (await import('./create.js')).create],
  ['add', async () => (await import('./add.js')).add],
  ['check', async () => (await import('./check.js')).check],
  ['dedup', async () => (await import('./dedup.js')).dedup],
  ['info', async () => (await import('./info.js')).info],
  ['merge', async () => (await import('./merge.js')).merge],
  ['convert', async () => (await import('./convert.js')).convert],
  ['calc', async () => (await import('./calc.js')).calc],
  ['cascade', async () => (await import('./cascade.js')).cascade],
  ['which', async () => (await import('./which.js')).which],
  ['redis', async () => (await import('./redis.js')).redis],
  ['serve', async () => (await import('./serve.js')).serve],
  ['help', async () => (await import('./help.js')).help],
]);

/**
 * The command called `name` or one of its aliases (its module loaded now), or undefined when
 * there is none.
 */
export async function loadCommand(name: string): Promise<Command | undefined> {
  return LOADERS.get(COMMAND_ALIASES.get(name) ?? name)?.();
}

/** Every command (all modules loaded): for the overview and `help`. */
export async function allCommands(): Promise<readonly Command[]> {
  return (await import('./index.js')).COMMANDS;
}
