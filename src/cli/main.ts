/**
 * `bloomkit` itself: finds the command in the table, parses its options with Node's
 * `util.parseArgs`, runs it, and turns every failure into one line on stderr that names the file
 * and what is wrong (no stack trace; `BLOOMKIT_DEBUG=1` shows one) and an exit status: the
 * command's own, 2 for an error, 130 after Ctrl-C.
 */

import { parseArgs } from 'node:util';
import { FormatError, IncompatibleFiltersError } from '../errors.js';
import { CliError, type CliIo, type OptionValues } from './command.js';
import { allCommands, loadCommand } from './commands/lazy.js';
import { commandHelp, overview } from './help-text.js';

/** The package's version (node:module is loaded for `--version` only, not by every run). */
async function version(): Promise<string> {
  try {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    return (require('../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Runs `bloomkit ...argv`; resolves to the exit status. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr.write(overview(await allCommands()));
    return 2;
  }
  if (name === '--help' || name === '-h') {
    io.stdout.write(overview(await allCommands()));
    return 0;
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`bloomkit ${await version()}\n`);
    return 0;
  }
  // Only the command asked for is loaded (see commands/lazy.ts).
  const command = await loadCommand(name);
  if (command === undefined) {
    io.stderr.write(`bloomkit: no command ${JSON.stringify(name)} (bloomkit help lists them)\n`);
    return 2;
  }
  try {
    let parsed: { values: OptionValues; positionals: string[] };
    try {
      parsed = parseArgs({
        args: [...rest],
        options: { ...command.options, help: { type: 'boolean', short: 'h' } },
        allowPositionals: true,
        strict: true,
      }) as { values: OptionValues; positionals: string[] };
    } catch (error) {
      const message = (error as Error).message.split('. To specify a positional')[0]!;
      throw new CliError(`${message} (bloomkit help ${command.name})`);
    }
    if (parsed.values.help === true) {
      io.stdout.write(commandHelp([command], command.name)!);
      return 0;
    }
    const { min, max } = command.positionals;
    const count = parsed.positionals.length;
    if (count < min || count > max) {
      throw new CliError(`usage: bloomkit ${command.usage}`);
    }
    return await command.run({
      args: parsed.positionals,
      options: parsed.values,
      io,
      // The whole table only for `help`, which lists it.
      commands: command.name === 'help' ? await allCommands() : [command],
    });
  } catch (error) {
    return report(command.name, error, io);
  }
}

function report(name: string, error: unknown, io: CliIo): number {
  if ((io.env ?? process.env).BLOOMKIT_DEBUG)
    io.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  if (error instanceof CliError) {
    io.stderr.write(`bloomkit ${name}: ${error.message}\n`);
    return error.exitCode;
  }
  if (
    error instanceof FormatError ||
    error instanceof IncompatibleFiltersError ||
    error instanceof RangeError ||
    error instanceof TypeError
  ) {
    io.stderr.write(`bloomkit ${name}: ${error.message}\n`);
    return 2;
  }
  const code = (error as { code?: string })?.code;
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`bloomkit ${name}: ${code === undefined ? '' : `${code}: `}${message}\n`);
  return 2;
}
