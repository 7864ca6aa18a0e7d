/**
 * Each option of a command is declared once: its help line (`arg`, `help` beside `type` and
 * `short`) is generated from that declaration by `optionHelp`, shared option groups included,
 * so an option added, renamed or dropped changes its help line with it. For every command: each
 * declared option has exactly one option line in its help (with its short name), each option
 * line of the help is a declared option, and no line is wider than 80 columns or holds a control
 * character.
 */

import { describe, expect, it } from 'vitest';
import { type Command, optionHelp } from '../src/cli/command.js';
import { COMMANDS } from '../src/cli/commands/index.js';
import { commandHelp, overview } from '../src/cli/help-text.js';

/** An option line: `  -n, --capacity N   ...` or `      --force   ...` (its short and long name). */
const OPTION_LINE = /^ {2}(?:-(\S), | {4})--([a-z0-9][a-z0-9-]*)(?=\s|$)/;

function optionLines(help: string): { short: string | undefined; long: string }[] {
  return help.split('\n').flatMap((line) => {
    const m = OPTION_LINE.exec(line);
    return m === null ? [] : [{ short: m[1], long: m[2]! }];
  });
}

describe('option help generated from the declarations', () => {
  it('starts every text at one column and indents continuation lines to it', () => {
    expect(
      optionHelp({
        capacity: { type: 'string', short: 'n', arg: 'N', help: 'keys' },
        force: { type: 'boolean', help: 'replace it\nif it exists' },
      }),
    ).toBe(
      [
        '  -n, --capacity N       keys',
        '      --force            replace it',
        '                         if it exists',
      ].join('\n'),
    );
  });

  it('puts the text of a head longer than 22 columns on the next lines', () => {
    expect(
      optionHelp({
        quiet: { type: 'boolean', short: 'q', help: 'no summary' },
        'checkpoint-every': { type: 'string', arg: 'N', help: 'write the state\nevery N' },
      }),
    ).toBe(
      [
        '  -q, --quiet            no summary',
        '      --checkpoint-every N',
        '                         write the state',
        '                         every N',
      ].join('\n'),
    );
  });

  it('finds the option lines of a help text (and only those)', () => {
    expect(
      optionLines('  -n, --capacity N   keys\n      --force   x\n  create NAME --x\n'),
    ).toEqual([
      { short: 'n', long: 'capacity' },
      { short: undefined, long: 'force' },
    ]);
  });

  it('the list of commands fits in 80 columns and names every command', () => {
    const text = overview(COMMANDS);
    expect(text.split('\n').filter((l) => l.length > 80)).toEqual([]);
    for (const c of COMMANDS) expect(text).toContain(`  ${c.name} `);
  });

  for (const command of COMMANDS as readonly Command[]) {
    describe(command.name, () => {
      const help = commandHelp(COMMANDS, command.name)!;
      const lines = optionLines(help);

      it('declares a help line for every option', () => {
        const bare = Object.entries(command.options).filter(([, o]) => !o.help);
        expect(bare.map(([name]) => name)).toEqual([]);
      });

      it('prints every declared option exactly once, with its short name', () => {
        for (const [name, o] of Object.entries(command.options)) {
          expect(
            lines.filter((l) => l.long === name),
            `--${name}`,
          ).toEqual([{ short: o.short, long: name }]);
        }
      });

      it('prints no option line that is not declared', () => {
        const undeclared = lines.filter((l) => !Object.hasOwn(command.options, l.long));
        expect(undeclared).toEqual([]);
      });

      it('prints no control character but the newline (a "\\r" is written escaped)', () => {
        expect(help.split('\n').filter((l) => [...l].some((c) => c < ' ' || c === '\x7f'))).toEqual(
          [],
        );
      });

      it('fits every line in 80 columns', () => {
        const wide = help.split('\n').filter((l) => l.length > 80);
        expect(wide).toEqual([]);
      });
    });
  }
});
