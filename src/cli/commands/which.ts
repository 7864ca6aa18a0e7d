import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SidecarSet } from '../../node/sidecar.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { asCliError } from '../filter-file.js';
import { flag, jsonOption } from '../options.js';

const SUFFIX = '.bloom';

/** which's options, each declared once with its help line. */
const WHICH_OPTIONS: OptionSpec = {
  ...jsonOption('{"keys": {"KEY": [files...]}, "unchecked": [{path, reason, detail}]}'),
};

export const which: Command = {
  name: 'which',
  summary: 'the data files in DIR whose sidecar filters say they may hold each key',
  usage: 'which DIR KEY... [--json]',
  help: `Lists the data files in DIR that may hold each KEY, by their sidecar filters (FILE.bloom
next to FILE, made by buildSidecar): a file whose sidecar says no certainly does not hold the
key and is skipped. A file whose sidecar is older than the file, or damaged, is always listed
(and named on stderr), so no file that holds the key is ever left out.

With one KEY, one file per line; with several, "KEY<tab>FILE" lines.

${optionHelp(WHICH_OPTIONS)}

Exit status: 0 if any file was listed, 1 if none, 2 on an error.

Example:
  bloomkit which logs/ user-4242`,
  options: WHICH_OPTIONS,
  positionals: { min: 2, max: Number.POSITIVE_INFINITY },
  async run({ args, options, io }) {
    const [dir, ...keys] = args as [string, ...string[]];
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      throw asCliError(dir, error);
    }
    const present = new Set(names);
    const data = names
      .filter((n) => n.endsWith(SUFFIX) && present.has(n.slice(0, -SUFFIX.length)))
      .map((n) => join(dir, n.slice(0, -SUFFIX.length)))
      .sort();
    if (data.length === 0)
      throw new CliError(`${dir}: no data file with a sidecar (FILE${SUFFIX}) here`);
    let set: SidecarSet;
    try {
      const { SidecarSet } = await import('../../node/sidecar.js');
      set = await SidecarSet.open(data);
    } catch (error) {
      throw asCliError(dir, error);
    }
    for (const u of set.unchecked) {
      io.stderr.write(
        `bloomkit which: ${u.path}: listed for every key (${u.reason}: ${u.detail})\n`,
      );
    }
    const found: Record<string, string[]> = {};
    let any = false;
    for (const key of keys) {
      found[key] = set.filesFor(key);
      if (found[key]!.length > 0) any = true;
    }
    if (flag(options, 'json')) {
      io.stdout.write(`${JSON.stringify({ keys: found, unchecked: set.unchecked })}\n`);
    } else {
      const lines = keys.flatMap((key) =>
        found[key]!.map((file) => (keys.length === 1 ? file : `${key}\t${file}`)),
      );
      if (lines.length > 0) io.stdout.write(`${lines.join('\n')}\n`);
    }
    return any ? 0 : 1;
  },
};
