import type { MembershipFilter } from '../../filters/filter.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { typeName } from '../describe.js';
import { readFilter, writeFilter } from '../filter-file.js';
import { FUNNEL_READ_OPTION, flag, forceOption, parseFunnel, stringOption } from '../options.js';

type Combinable = MembershipFilter & {
  clone(): Combinable;
  union?(other: unknown): unknown;
  intersect?(other: unknown): unknown;
};

/** merge's options, each declared once with its help line. */
const MERGE_OPTIONS: OptionSpec = {
  intersect: { type: 'boolean', help: 'intersection instead of union' },
  ...FUNNEL_READ_OPTION,
  ...forceOption('OUT'),
};

export const merge: Command = {
  name: 'merge',
  summary: 'union (or --intersect) of filters of the same shape into OUT',
  usage: 'merge OUT IN... [--intersect] [--funnel F]',
  help: `Writes to OUT the union of the filters IN... (a key that may be in any of them may be in
OUT), or with --intersect their intersection (bitwise AND: a key in all of them stays; the
rate of the result is at most that of each). The filters must have the same type and shape
(bits, hashes, funnel): filters made by the same "create" command. OUT is written atomically,
in the format of the first IN.

${optionHelp(MERGE_OPTIONS)}

Examples:
  bloomkit merge all.bloom day-*.bloom
  bloomkit merge --intersect both.bloom a.bloom b.bloom`,
  options: MERGE_OPTIONS,
  positionals: { min: 2, max: Number.POSITIVE_INFINITY },
  async run({ args, options }) {
    const [out, ...inputs] = args as [string, ...string[]];
    const funnelText = stringOption(options, 'funnel');
    const funnel = funnelText === undefined ? undefined : parseFunnel(funnelText, 'string');
    const op = flag(options, 'intersect') ? 'intersect' : 'union';
    const first = await readFilter(inputs[0]!, funnel);
    const result = first.filter as Combinable;
    if (typeof result[op] !== 'function') {
      throw new CliError(
        `${inputs[0]}: a ${typeName(result)} filter cannot be merged (${op} needs a classic, blocked or split-block filter)`,
      );
    }
    for (const path of inputs.slice(1)) {
      const { filter } = await readFilter(path, funnel);
      if (filter.constructor !== result.constructor) {
        throw new CliError(
          `${path}: a ${typeName(filter)} filter cannot be merged with ${inputs[0]}, a ` +
            `${typeName(result)} filter: merge ${op === 'union' ? 'ORs' : 'ANDs'} the bits of ` +
            'filters of one type and shape, and filters of two types place keys differently ' +
            '(make them with the same "bloomkit create" options)',
        );
      }
      try {
        result[op]!(filter);
      } catch (error) {
        throw new CliError(
          `${path}: cannot ${op} it with ${inputs[0]}: ${(error as Error).message}`,
        );
      }
    }
    await writeFilter(out, result, first.format, flag(options, 'force'));
    return 0;
  },
};
