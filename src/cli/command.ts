/**
 * What one `bloomkit` command is: its name, its help text, its options (in the shape Node's
 * `util.parseArgs` takes) and what it does. Every command is one file in `commands/` that exports
 * one `Command`, listed in `commands/index.ts` (the whole table: `help` and the tests read it)
 * and in `commands/lazy.ts` (how `main.ts` loads only the command it runs), so a new command is
 * one file plus one line in each.
 */

import type { ParseArgsConfig } from 'node:util';

/** One option as `util.parseArgs` takes it. */
type ParseArgsOption = NonNullable<ParseArgsConfig['options']>[string];

/**
 * One option: what `util.parseArgs` takes (it ignores the rest), and, declared with it, its
 * help line: the placeholder of its value (`arg`) and what it does (`help`, lines joined by
 * `\n`). A command whose options all have `help` prints their lines with {@link optionHelp}, so
 * each option is declared once.
 */
export type OptionDecl = ParseArgsOption & { readonly arg?: string; readonly help?: string };

/** The options table of one command. */
export type OptionSpec = Record<string, OptionDecl>;

/** Help text is at most this wide (a terminal's classic width). */
export const HELP_COLUMNS = 80;

/** The longest option head (`  -d, --delimiter CHAR`) that has its text on the same line. */
const HEAD_MAX = 22;

/** The column where every option's text starts, in every command (55 columns of text remain). */
export const OPTION_TEXT_COLUMN = HEAD_MAX + 3;

/**
 * `text` with its words filled into lines of at most `width` characters (greedy: as many words
 * as fit; a word longer than `width` stands alone). A `\n` in `text` always breaks the line.
 */
export function wrapWords(text: string, width: number): string[] {
  return text.split('\n').flatMap((part) => {
    const lines: string[] = [];
    for (const word of part.split(' ').filter((w) => w !== '')) {
      const last = lines.length - 1;
      if (last >= 0 && lines[last]!.length + 1 + word.length <= width) lines[last] += ` ${word}`;
      else lines.push(word);
    }
    return lines.length === 0 ? [''] : lines;
  });
}

/**
 * The help lines of `options`, generated from their declarations, in declaration order:
 * `  -n, --capacity N         what it does`, the text filled to {@link HELP_COLUMNS} from
 * {@link OPTION_TEXT_COLUMN} in every command and option group (so groups printed apart line
 * up); a head longer than {@link HEAD_MAX} (`--checkpoint-every N`) stands on its own line, its
 * text on the next ones.
 */
export function optionHelp(options: OptionSpec): string {
  const indent = ' '.repeat(OPTION_TEXT_COLUMN);
  return Object.entries(options)
    .map(([name, o]) => {
      const short = o.short === undefined ? '    ' : `-${o.short}, `;
      const head = `  ${short}--${name}${o.arg === undefined ? '' : ` ${o.arg}`}`;
      const lines = wrapWords(o.help ?? '', HELP_COLUMNS - OPTION_TEXT_COLUMN);
      if (head.length > HEAD_MAX) return [head, ...lines.map((l) => indent + l)].join('\n');
      const [first = '', ...more] = lines;
      return [head.padEnd(OPTION_TEXT_COLUMN) + first, ...more.map((l) => indent + l)].join('\n');
    })
    .join('\n');
}

/** Parsed option values (string, boolean, or arrays of them for `multiple` options). */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** What a command's `run` receives. */
export interface Invocation {
  /** The positional arguments, in order. */
  readonly args: readonly string[];
  /** The option values (long names). */
  readonly options: OptionValues;
  /** Where output goes: standard output and standard error (streams or test doubles). */
  readonly io: CliIo;
  /**
   * The command table for `help`, which lists it (passed in, so no command imports the table);
   * any other command gets only itself (the rest is not loaded).
   */
  readonly commands: readonly Command[];
}

/**
 * The process's streams and environment, injectable so that tests run `main` in their own
 * process. Standard input is read with `read(2)` on `stdin.fd` when that descriptor is a regular
 * file (`< file`), else as the stream; a test double without `fd` is always a stream. The
 * command passes its streams as getters, read only when a run uses them (making one loads Node's
 * stream code: a run that prints nothing makes no standard output).
 */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { fd?: number; isTTY?: boolean; destroy?(): void };
  /**
   * Standard input's descriptor (0 for the process), so that a run can see what it is without
   * making `stdin`; left out (a test's stream), `stdin.fd` is asked.
   */
  readonly stdinFd?: number;
  /** The environment (`BLOOMKIT_DEBUG`); `process.env` when left out. */
  readonly env?: NodeJS.ProcessEnv;
}

export interface Command {
  /** The word after `bloomkit` (`redis` is one command with sub-verbs). */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The synopsis, without the leading `bloomkit`: `add FILE [INPUT...]`. */
  readonly usage: string;
  /** The rest of `bloomkit help CMD`: what it does, each option, exit status, examples. */
  readonly help: string;
  /** Its options (shared sets come from `options.ts`). */
  readonly options: OptionSpec;
  /** Smallest and largest number of positional arguments (`max` Infinity for "any"). */
  readonly positionals: { readonly min: number; readonly max: number };
  /** Does the work; resolves to the exit status. */
  run(invocation: Invocation): Promise<number>;
}

/**
 * A failure to report in one line without a stack trace: bad arguments, a missing or damaged file.
 * `exitCode` is 2 (usage or data error, as grep uses it) unless said otherwise.
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}
