import { existsSync } from 'node:fs';
import { CliError, type Command } from '../command.js';
import { describeFilter, FORMAT_LABELS, printFacts } from '../describe.js';
import { writeFilter } from '../filter-file.js';
import { makeFilter, TYPE_NAMES } from '../filter-types.js';
import {
  flag,
  JSON_OPTION,
  parseCount,
  parseFunnel,
  parseProbability,
  stringOption,
} from '../options.js';

export const create: Command = {
  name: 'create',
  summary: 'make an empty filter file sized for a number of keys and a false positive rate',
  usage: 'create FILE -n CAPACITY -p FPP [--type TYPE] [--funnel FUNNEL] [--force] [--json]',
  help: `Makes an empty filter for CAPACITY keys at false positive rate FPP and writes it to FILE in
bloomkit's native format (written atomically: a temporary file, then a rename).

  -n, --capacity N    expected number of distinct keys (1000000, 1e6, 2.5M)
  -p, --fpp P         false positive rate at N keys (0.01, 1e-6, 1%)
  -t, --type TYPE     ${TYPE_NAMES.join(' | ')} (default classic: Guava's layout,
                      readable by Java after "convert --to guava")
      --funnel F      how keys become bytes: string (UTF-8, default) | utf16 | int | long | bytes
      --force         replace FILE if it exists
      --json          print the new filter's facts as JSON

Examples:
  bloomkit create urls.bloom -n 10M -p 0.001
  bloomkit create ids.bloom -n 1e6 -p 1% --type blocked --funnel long`,
  options: {
    capacity: { type: 'string', short: 'n' },
    fpp: { type: 'string', short: 'p' },
    type: { type: 'string', short: 't' },
    funnel: { type: 'string' },
    force: { type: 'boolean' },
    ...JSON_OPTION,
  },
  positionals: { min: 1, max: 1 },
  async run({ args, options, io }) {
    const file = args[0]!;
    const n = stringOption(options, 'capacity');
    const p = stringOption(options, 'fpp');
    if (n === undefined || p === undefined)
      throw new CliError('create needs -n CAPACITY and -p FPP');
    if (existsSync(file) && !flag(options, 'force')) {
      throw new CliError(`${file}: the file exists (use --force to replace it)`);
    }
    const filter = makeFilter(stringOption(options, 'type'), {
      capacity: parseCount('-n', n),
      fpp: parseProbability('-p', p),
      funnel: parseFunnel(stringOption(options, 'funnel'), 'string'),
    });
    await writeFilter(file, filter, 'native');
    const facts = { file, format: FORMAT_LABELS.native, ...describeFilter(filter) };
    printFacts(io, [facts], flag(options, 'json'));
    return 0;
  },
};
