import { type Command, type OptionSpec, optionHelp } from '../command.js';
import { describeFilter, type Facts, FORMAT_LABELS, printFacts } from '../describe.js';
import { asCliError, readFilter, readQueryable, sniff, unknownFormat } from '../filter-file.js';
import { FUNNEL_READ_OPTION, flag, jsonOption, parseFunnel, stringOption } from '../options.js';

/** info's options, each declared once with its help line. */
const INFO_OPTIONS: OptionSpec = {
  ...jsonOption('one JSON object per file (an array for several files or column chunks)'),
  ...FUNNEL_READ_OPTION,
};

export const info: Command = {
  name: 'info',
  summary:
    'describe a filter file (native, Guava, DCSO, Parquet, sidecar, chunked): type, shape, fill, FPR',
  usage: 'info FILE... [--json] [--funnel F]',
  help: `Describes each filter file: its format and type, its shape (bits m, hashes k, blocks,
layers...), key encoding (funnel), bits set, estimated number of keys, its false positive rate
now (from the bits set) and as designed where the file says, and its size. The format is found
from the bytes: bloomkit native, a chunked filter file, a sidecar, Guava's writeTo bytes, a file
of DCSO's bloom tool, or a Parquet file (one entry per column chunk that has a Bloom filter).

${optionHelp(INFO_OPTIONS)}

Examples:
  bloomkit info urls.bloom
  bloomkit info --json part-0001.parquet`,
  options: INFO_OPTIONS,
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  async run({ args, options, io }) {
    const entries: Facts[] = [];
    for (const file of args) {
      try {
        entries.push(...(await describeFile(file, stringOption(options, 'funnel'))));
      } catch (error) {
        throw asCliError(file, error);
      }
    }
    printFacts(io, entries, flag(options, 'json'));
    return 0;
  },
};

async function describeFile(file: string, funnelText: string | undefined): Promise<Facts[]> {
  const sniffed = await sniff(file);
  const size = { fileBytes: sniffed.size };
  switch (sniffed.kind) {
    case 'native':
    case 'guava':
    case 'dcso':
    case 'dcso-gzip': {
      const funnel = funnelText === undefined ? undefined : parseFunnel(funnelText, 'string');
      const { filter, format } = await readFilter(
        file,
        sniffed.kind === 'native' ? undefined : funnel,
      );
      const version: Facts =
        format === 'native' ? { formatVersion: sniffed.head[4]! | (sniffed.head[5]! << 8) } : {};
      return [
        {
          file,
          format: FORMAT_LABELS[format],
          ...version,
          ...describeFilter(filter),
          ...size,
        },
      ];
    }
    case 'mlbf': {
      const funnel = funnelText === undefined ? undefined : parseFunnel(funnelText, 'string');
      const cascade = await readQueryable(file, funnel);
      return [{ file, format: 'Mozilla MLBF', ...describeFilter(cascade), ...size }];
    }
    case 'chunked': {
      const { ChunkedBloomFilter } = await import('../../node/chunked.js');
      const chunked = await ChunkedBloomFilter.open(file);
      try {
        const facts = chunked.info as unknown as Facts;
        return [{ file, format: 'bloomkit chunked', type: 'chunked', ...facts, ...size }];
      } finally {
        await chunked.close();
      }
    }
    case 'sidecar': {
      const { decodeSidecar } = await import('../../node/sidecar.js');
      const { readRegular } = await import('../../node/regular-file.js');
      const { info: meta, filter } = decodeSidecar(await readRegular(file));
      return [
        {
          file,
          format: 'bloomkit sidecar',
          ...describeFilter(filter),
          sidecar: meta as unknown as Facts,
          ...size,
        },
      ];
    }
    case 'parquet': {
      // Loaded when needed: the Parquet footer reader is the largest part of the command.
      const { readParquetBloomFilters } = await import('../../node/parquet.js');
      const filters = await readParquetBloomFilters(file);
      if (filters.length === 0)
        return [{ file, format: 'Parquet', columnChunksWithFilters: 0, ...size }];
      return filters.map(({ column, rowGroup, type, filter }) => ({
        file,
        format: 'Parquet',
        rowGroup,
        column,
        physicalType: type,
        ...describeFilter(filter),
      }));
    }
    default:
      throw unknownFormat(file, sniffed);
  }
}
