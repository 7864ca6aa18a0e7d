import { CliError, type Command } from '../command.js';
import { commandHelp, overview } from '../help-text.js';
import { COMMAND_ALIASES } from './aliases.js';

export const help: Command = {
  name: 'help',
  summary: 'show the list of commands, or all about one: bloomkit help CMD',
  usage: 'help [CMD]',
  help: 'Prints the list of commands, or the full help of one command.',
  options: {},
  positionals: { min: 0, max: 2 },
  async run({ args, io, commands }) {
    if (args.length === 0) {
      io.stdout.write(overview(commands));
      return 0;
    }
    const [first, ...rest] = args;
    const name = [COMMAND_ALIASES.get(first!) ?? first, ...rest].join(' ');
    const text = commandHelp(commands, name);
    if (text === null)
      throw new CliError(`no command ${JSON.stringify(args.join(' '))} (see bloomkit help)`);
    io.stdout.write(text);
    return 0;
  },
};
