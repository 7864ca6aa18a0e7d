import { CliError, type Command } from '../command.js';
import { commandHelp, overview } from '../help-text.js';

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
    const text = commandHelp(commands, args.join(' '));
    if (text === null)
      throw new CliError(`no command ${JSON.stringify(args.join(' '))} (see bloomkit help)`);
    io.stdout.write(text);
    return 0;
  },
};
