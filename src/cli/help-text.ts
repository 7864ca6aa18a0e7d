/** The overview and per-command help, built from the command table. */

import type { Command } from './command.js';

export function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `bloomkit: Bloom filters from the shell

Usage: bloomkit COMMAND [ARGS...]     (bloomkit help COMMAND for its options)

Commands:
${lines.join('\n')}

Inputs are files (plain or gzip) or standard input; records are lines (or NUL-terminated
with -0). Errors name the file and what is wrong; exit status 2 means an error (check exits
1 when no record was selected, as grep).
`;
}

/** The help of `name` (a command, or `redis VERB`), or null. */
export function commandHelp(commands: readonly Command[], name: string): string | null {
  const command = commands.find((c) => c.name === name.split(' ')[0]);
  if (command === undefined) return null;
  return `Usage: bloomkit ${command.usage}\n\n${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.\n\n${command.help}\n`;
}
