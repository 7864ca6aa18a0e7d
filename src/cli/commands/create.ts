import { existsSync } from 'node:fs';
import { DcsoBloomFilter } from '../../filters/dcso/filter.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { describeFilter, FORMAT_LABELS, printFacts } from '../describe.js';
import { writeFilter } from '../filter-file.js';
import { makeFilter, TYPE_NAMES } from '../filter-types.js';
import { flag, parseCount, parseFunnel, parseProbability, stringOption } from '../options.js';

/** create's options, each declared once with its help line. */
const CREATE_OPTIONS: OptionSpec = {
  capacity: {
    type: 'string',
    short: 'n',
    arg: 'N',
    help: 'expected number of distinct keys (1000000, 1e6, 2.5M)',
  },
  fpp: {
    type: 'string',
    short: 'p',
    arg: 'P',
    help: 'false positive rate at N keys (0.01, 1e-6, 1%)',
  },
  type: {
    type: 'string',
    short: 't',
    arg: 'TYPE',
    help: `${TYPE_NAMES.join(' | ')}\n(default classic: Guava's layout, readable by Java after "convert --to guava")`,
  },
  funnel: {
    type: 'string',
    arg: 'F',
    help: 'how keys become bytes: string (UTF-8, default) | utf16 | int | long | bytes',
  },
  force: { type: 'boolean', help: 'replace FILE if it exists' },
  json: { type: 'boolean', help: "print the new filter's facts as JSON" },
};

export const create: Command = {
  name: 'create',
  summary: 'make an empty filter file sized for a number of keys and a false positive rate',
  usage: 'create FILE -n CAPACITY -p FPP [--type TYPE] [--funnel FUNNEL] [--force] [--json]',
  help: `Makes an empty filter for CAPACITY keys at false positive rate FPP and writes it to FILE in
bloomkit's native format (written atomically: a temporary file, then a rename); --type dcso
writes the file format of DCSO's bloom tool instead (what "bloom create -n N -p P" writes).

${optionHelp(CREATE_OPTIONS)}

Examples:
  bloomkit create urls.bloom -n 10M -p 0.001
  bloomkit create ids.bloom -n 1e6 -p 1% --type blocked --funnel long`,
  options: CREATE_OPTIONS,
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
    const format = filter instanceof DcsoBloomFilter ? 'dcso' : 'native';
    await writeFilter(file, filter, format, flag(options, 'force'));
    const facts = { file, format: FORMAT_LABELS[format], ...describeFilter(filter) };
    printFacts(io, [facts], flag(options, 'json'));
    return 0;
  },
};
