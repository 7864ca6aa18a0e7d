/**
 * Each option of a command is declared once: a command whose options all carry their help
 * (`arg`, `help` beside `type` and `short`) prints exactly the lines `optionHelp` generates from
 * those declarations, so an option added, renamed or dropped changes its help line with it.
 */

import { describe, expect, it } from 'vitest';
import { type Command, optionHelp } from '../src/cli/command.js';
import { COMMANDS } from '../src/cli/commands/index.js';
import { commandHelp } from '../src/cli/help-text.js';

const declared = (COMMANDS as readonly Command[]).filter((c) =>
  Object.values(c.options).every((o) => o.help !== undefined),
);

describe('option help generated from the declarations', () => {
  it('aligns the lines and indents continuation lines to the text', () => {
    expect(
      optionHelp({
        capacity: { type: 'string', short: 'n', arg: 'N', help: 'keys' },
        force: { type: 'boolean', help: 'replace it\nif it exists' },
      }),
    ).toBe(
      [
        '  -n, --capacity N   keys',
        '      --force        replace it',
        '                     if it exists',
      ].join('\n'),
    );
  });

  it('covers calc and create', () => {
    expect(declared.map((c) => c.name)).toEqual(expect.arrayContaining(['calc', 'create']));
  });

  for (const command of declared) {
    it(`${command.name}: its help prints the generated line of every option`, () => {
      const help = commandHelp(COMMANDS, command.name)!;
      expect(help).toContain(optionHelp(command.options));
      for (const name of Object.keys(command.options)) expect(help).toContain(`--${name}`);
    });
  }
});
