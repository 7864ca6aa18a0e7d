/** The overview and per-command help, built from the command table. */

import { type Command, HELP_COLUMNS, wrapWords } from './command.js';

export function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  // Each summary filled to the help's width, continuation lines under its first word.
  const indent = ' '.repeat(width + 4);
  const lines = commands.map((c) =>
    wrapWords(c.summary, HELP_COLUMNS - indent.length)
      .map((l, i) => (i === 0 ? `  ${c.name.padEnd(width)}  ${l}` : indent + l))
      .join('\n'),
  );
  return `bloomkit: Bloom filters from the shell

Usage: bloomkit COMMAND [ARGS...]     (bloomkit help COMMAND for its options)

Commands:
${lines.join('\n')}

${fillParagraphs(`Inputs are files (plain or gzip) or standard input; records are lines (or NUL-terminated
with -0). Errors name the file and what is wrong; exit status 2 means an error (check exits
1 when no record was selected, as grep).`)}
`;
}

/**
 * `Usage: bloomkit USAGE`, wrapped to {@link HELP_COLUMNS} between words (a bracketed group such
 * as `[-d DELIM -f FIELDS]` stays whole), continuation lines indented under the first argument.
 */
function usageLines(name: string, usage: string): string {
  const lead = 'Usage: bloomkit ';
  const indent = ' '.repeat(lead.length + name.length + 1);
  const lines = [lead.slice(0, -1)];
  for (const word of usage.match(/\[[^\]]*\]|\S+/g) ?? []) {
    const last = lines.length - 1;
    if (lines[last]!.length + 1 + word.length <= HELP_COLUMNS) lines[last] += ` ${word}`;
    else lines.push(`${indent}${word}`);
  }
  return lines.join('\n');
}

/**
 * `text` with each prose paragraph (lines separated by blank lines, none of them indented) filled
 * to {@link HELP_COLUMNS}; a paragraph with an indented line (options, examples, a table) is
 * printed as written.
 */
export function fillParagraphs(text: string): string {
  return text
    .split('\n\n')
    .map((block) =>
      block.split('\n').some((line) => line.startsWith(' '))
        ? block
        : wrapWords(block.replaceAll('\n', ' '), HELP_COLUMNS).join('\n'),
    )
    .join('\n\n');
}

/** The help of `name` (a command, or `redis VERB`), or null. */
export function commandHelp(commands: readonly Command[], name: string): string | null {
  const command = commands.find((c) => c.name === name.split(' ')[0]);
  if (command === undefined) return null;
  return `${usageLines(command.name, command.usage)}\n\n${fillParagraphs(`${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`)}\n\n${fillParagraphs(command.help)}\n`;
}
