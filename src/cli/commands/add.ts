import { FilterFullError } from '../../index.js';
import { CliError, type Command } from '../command.js';
import { readFilter, writeFilter } from '../filter-file.js';
import {
  flag,
  INPUT_HELP,
  INPUT_OPTIONS,
  JSON_OPTION,
  parseFunnel,
  stringOption,
} from '../options.js';
import { Interrupt, inputList, recordOptions, scanInputs } from '../scan.js';

export const add: Command = {
  name: 'add',
  summary: 'add each record of the inputs to a filter file',
  usage: 'add FILE [INPUT...] [-0] [-d DELIM -f FIELDS] [--funnel F] [--json]',
  help: `Adds each record (line) of the inputs to the filter in FILE and writes it back in the
format it was read in (bloomkit native or Guava), atomically. On Ctrl-C the records read so far
are kept: the filter is saved whole, then the command exits with status 130.

${INPUT_HELP}
      --funnel F        for a Guava file only (its bytes do not say): string (default),
                        utf16, int, long or bytes
      --json            print {"records", "new", "estimatedCount"} when done

Exit status: 0 when done, 2 on an error (the file is then left as it was).

Examples:
  bloomkit add urls.bloom crawled-*.txt.gz
  cut -f2 access.log | bloomkit add ips.bloom
  bloomkit add users.bloom -d , -f 1 users.csv`,
  options: { ...INPUT_OPTIONS, funnel: { type: 'string' }, ...JSON_OPTION },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  async run({ args, options, io }) {
    const [file, ...inputs] = args as [string, ...string[]];
    const funnelText = stringOption(options, 'funnel');
    const { filter, format } = await readFilter(
      file,
      funnelText === undefined ? undefined : parseFunnel(funnelText, 'string'),
    );
    const interrupt = new Interrupt();
    let fresh = 0;
    try {
      const records = await scanInputs(
        inputList(inputs),
        recordOptions(options, filter.funnel),
        io,
        options,
        'add',
        interrupt,
        (batch) => {
          try {
            fresh += filter.addBatch(batch.keys);
          } catch (error) {
            if (error instanceof FilterFullError) {
              throw new CliError(
                `${file}: the filter is full (${error.message}); nothing was saved`,
              );
            }
            throw error;
          }
          return true;
        },
      );
      await writeFilter(file, filter, format);
      if (flag(options, 'json')) {
        io.stdout.write(
          `${JSON.stringify({ records, new: fresh, estimatedCount: Math.round(filter.estimatedCount()) })}\n`,
        );
      }
      return interrupt.signal === null ? 0 : interrupt.exitCode;
    } finally {
      interrupt.dispose();
    }
  },
};
