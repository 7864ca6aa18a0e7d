import { FilterFullError } from '../../errors.js';
import type { FilterBase } from '../../filters/base.js';
import { BitFilter } from '../../filters/bit-filter.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { readFilter, updatesFile, writeFilter } from '../filter-file.js';
import {
  FUNNEL_READ_OPTION,
  flag,
  INPUT_HELP,
  INPUT_OPTIONS,
  jsonOption,
  parseFunnel,
  parseThreads,
  RECORD_BYTES_HELP,
  stringOption,
  threadsOption,
} from '../options.js';
import { saturationJson, saturationWarning } from '../saturation.js';
import { Interrupt, inputList, recordOptions, scanInputs } from '../scan.js';

/** add's own options (after the input options), each declared once with its help line. */
const ADD_OPTIONS: OptionSpec = {
  ...FUNNEL_READ_OPTION,
  ...threadsOption(
    'split, hash and add on N threads (classic, blocked and split-block filters): this one and N - 1 workers (N with -f or a number funnel), each worker with its own copy of the filter, OR-ed in at the end: the same file as one thread; pays for large inputs only, with idle cores (each worker costs about 0.1 s of CPU to start and one copy of the filter)',
  ),
  ...jsonOption(
    'print {"records", "new", "estimatedCount"} when done (with --threads, "new" counts per thread: a key whose bits another thread set also counts)',
  ),
};

// One update of FILE at a time: a second add (or dedup --state) waits for this one's lock.
export const add: Command = updatesFile({
  name: 'add',
  summary: 'add each record of the inputs to a filter file',
  usage: 'add FILE [INPUT...] [-0] [-d DELIM -f FIELDS] [--funnel F] [--threads N] [--json]',
  help: `Adds each record (line) of the inputs to the filter in FILE and writes it back in the
format it was read in (bloomkit native, Guava or DCSO bloom), atomically. On Ctrl-C the records
read so far are kept: the filter is saved whole, then the command exits with status 130.
A run that changes nothing leaves FILE as it was, not rewritten: no record read, or no new key
in a classic, blocked or split-block filter. "insert" is another name for this command (as in
DCSO's bloom).

${INPUT_HELP}
${optionHelp(ADD_OPTIONS)}

${RECORD_BYTES_HELP}

A filter filled far past the keys it was made for answers "maybe" for more and more keys
never added: when an add that reads any record finds its rate past 10 times the rate it was
sized for, add says so on stderr (and "saturated": true in --json); see bloomkit info for its
fill.

While it runs, FILE is locked (FILE.lock): a second add or dedup --state on it waits for this
one, up to BLOOMKIT_LOCK_WAIT seconds (default 60), then exits 2 without changing it.

Exit status: 0 when done, 2 on an error (the file is then left as it was).

Examples:
  bloomkit add urls.bloom crawled-*.txt.gz
  cut -f2 access.log | bloomkit add ips.bloom
  bloomkit add users.bloom -d , -f 1 users.csv`,
  options: { ...INPUT_OPTIONS, ...ADD_OPTIONS },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  async run({ args, options, io }) {
    const [file, ...inputs] = args as [string, ...string[]];
    const funnelText = stringOption(options, 'funnel');
    const threads = parseThreads(options);
    // The worker pool's code loads only when threads are asked for; its threads start loading
    // bloomkit now, while this one reads the filter.
    const threaded = threads > 1 ? await import('../threads.js') : null;
    threaded?.warmThreads(threads - 1);
    const { filter, format } = await readFilter(
      file,
      funnelText === undefined ? undefined : parseFunnel(funnelText, 'string'),
    );
    const recordOpts = recordOptions(options, filter.funnel);
    const split = threaded?.splitsInWorkers(recordOpts) === true;
    const pool =
      threaded !== null && !split
        ? await threaded.ThreadedFilter.start(filter, threads, 'add', file)
        : null;
    const interrupt = new Interrupt();
    let fresh = 0;
    try {
      const onThreads =
        threaded !== null && split
          ? await threaded.addOnThreads(filter, file, threads, inputList(inputs), recordOpts, {
              io,
              options,
              interrupt,
            })
          : null;
      fresh += onThreads?.fresh ?? 0;
      const records =
        onThreads?.records ??
        (await scanInputs(
          inputList(inputs),
          recordOpts,
          io,
          options,
          'add',
          interrupt,
          async (batch) => {
            if (pool !== null) {
              for (const done of await pool.push(batch)) fresh += await done.done;
              return true;
            }
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
        ));
      if (pool !== null) {
        for (const done of await pool.drain()) fresh += await done.done;
        await pool.mergeInto(filter);
      }
      // Nothing changed, nothing written: no record read, or (a filter over one bit array,
      // where a key is new exactly when it sets a bit) no new key. The file then stays as it
      // is, byte for byte, without a rewrite and an fsync of the whole filter.
      const changed = records > 0 && !(fresh === 0 && filter instanceof BitFilter);
      if (changed) await writeFilter(file, filter, format);
      const json = flag(options, 'json');
      // The types that know their design point (all that `add` writes but chunked files). The
      // figure counts the filter's bits, a pass over all of it (5 ms for 2.4 MB at a run's
      // start): asked for when this run read a record, or for --json. A run with records but no
      // new key still warns: a saturated filter takes new keys for old ones, which is exactly
      // when "0 new" needs the warning beside it.
      const figure =
        records > 0 || json
          ? (filter as Partial<Pick<FilterBase, 'saturation'>>).saturation?.()
          : undefined;
      if (figure?.saturated) {
        io.stderr.write(
          saturationWarning(
            'add',
            file,
            figure,
            'it answers "maybe" for more and more keys never added',
            'Make a larger filter (bloomkit create with a larger -n) and add the keys to it.',
          ),
        );
      }
      if (json) {
        const estimatedCount = Math.round(filter.estimatedCount());
        const more = figure === undefined ? {} : saturationJson(figure);
        io.stdout.write(`${JSON.stringify({ records, new: fresh, estimatedCount, ...more })}\n`);
      }
      return interrupt.signal === null ? 0 : interrupt.exitCode;
    } finally {
      interrupt.dispose();
      await pool?.close();
    }
  },
});
