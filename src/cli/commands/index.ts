/**
 * THE table of `bloomkit` commands: `help` and the tests read it; `main` loads the one command it
 * runs through `lazy.ts`. A new command is one file in this folder plus one line here and one in
 * `lazy.ts`.
 */

import type { Command } from '../command.js';
import { add } from './add.js';
import { calc } from './calc.js';
import { cascade } from './cascade.js';
import { check } from './check.js';
import { convert } from './convert.js';
import { create } from './create.js';
import { dedup } from './dedup.js';
import { help } from './help.js';
import { info } from './info.js';
import { merge } from './merge.js';
import { redis } from './redis.js';
import { serve } from './serve.js';
import { which } from './which.js';

export const COMMANDS: readonly Command[] = [
  create,
  add,
  check,
  dedup,
  info,
  merge,
  convert,
  calc,
  cascade,
  which,
  redis,
  serve,
  help,
];
