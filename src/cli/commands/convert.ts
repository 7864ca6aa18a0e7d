import type { MembershipFilter } from '../../filters/filter.js';
import { BloomFilter, CountingBloomFilter, SplitBlockBloomFilter } from '../../index.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { typeName } from '../describe.js';
import { readFilter, writeBytes, writeFilter } from '../filter-file.js';
import { FUNNEL_READ_OPTION, flag, forceOption, parseFunnel, stringOption } from '../options.js';

const TARGETS = ['native', 'guava', 'dcso', 'parquet-bitset'] as const;

/** convert's options, each declared once with its help line. */
const CONVERT_OPTIONS: OptionSpec = {
  to: {
    type: 'string',
    arg: 'FORMAT',
    help: 'the format of OUT: native, guava, dcso or parquet-bitset (below)',
  },
  ...FUNNEL_READ_OPTION,
  ...forceOption('OUT'),
};

export const convert: Command = {
  name: 'convert',
  summary: 'rewrite a filter in another format: native, guava, dcso, parquet-bitset',
  usage: 'convert IN OUT --to native|guava|dcso|parquet-bitset [--funnel F]',
  help: `Reads the filter in IN (any format "info" reads as one filter: native, Guava or DCSO) and
writes it to OUT, atomically, in the format --to names.

${optionHelp(CONVERT_OPTIONS)}

Formats:
  native           bloomkit's native format (every type)
  guava            Guava's BloomFilter.writeTo bytes, read in Java by
                   BloomFilter.readFrom(in, Funnels.stringFunnel(UTF_8))
                   (a classic filter; a counting filter is turned into the
                   classic filter of the same keys)
  dcso             the file format of DCSO's bloom tool (a filter made with
                   --type dcso or read from a bloom file: its hashing is
                   DCSO's own)
  parquet-bitset   what a Parquet writer stores at a column chunk's
                   bloom_filter_offset: the thrift header and the
                   split-block bitset (a split-block filter)

Examples:
  bloomkit create ids.bloom -n 1e6 -p 0.01 && bloomkit add ids.bloom ids.txt
  bloomkit convert ids.bloom ids.guava --to guava`,
  options: CONVERT_OPTIONS,
  positionals: { min: 2, max: 2 },
  async run({ args, options }) {
    const [input, output] = args as [string, string];
    const to = stringOption(options, 'to');
    if (to === undefined) {
      throw new CliError(`--to is required: the format to write, one of ${TARGETS.join(', ')}`);
    }
    if (!(TARGETS as readonly string[]).includes(to)) {
      throw new CliError(`--to must be one of ${TARGETS.join(', ')}, got ${JSON.stringify(to)}`);
    }
    const funnelText = stringOption(options, 'funnel');
    const { filter } = await readFilter(
      input,
      funnelText === undefined ? undefined : parseFunnel(funnelText, 'string'),
    );
    const force = flag(options, 'force');
    if (to === 'native') {
      await writeFilter(output, filter, 'native', force);
    } else if (to === 'guava') {
      await writeFilter(output, asClassic(input, filter), 'guava', force);
    } else if (to === 'dcso') {
      await writeFilter(output, filter, 'dcso', force);
    } else {
      if (!(filter instanceof SplitBlockBloomFilter)) {
        throw new CliError(
          `${input}: a Parquet bitset holds a split-block filter, not a ${typeName(filter)} filter (create one with --type split-block)`,
        );
      }
      await writeBytes(output, filter.toParquet(), force);
    }
    return 0;
  },
};

function asClassic(input: string, filter: MembershipFilter): BloomFilter {
  if (filter instanceof BloomFilter) return filter;
  if (filter instanceof CountingBloomFilter) return filter.toBloomFilter() as BloomFilter;
  throw new CliError(
    `${input}: Guava's format holds a classic Bloom filter, not a ${typeName(filter)} filter (create one with --type classic)`,
  );
}
