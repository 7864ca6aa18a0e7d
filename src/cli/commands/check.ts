import { type Command, type OptionSpec, type OptionValues, optionHelp } from '../command.js';
import { readQueryable } from '../filter-file.js';
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
import { Output } from '../output.js';
import type { RecordBatch } from '../records.js';
import { Interrupt, inputList, recordOptions, scanInputs } from '../scan.js';

/** check's options on what it prints, each declared once with its help line. */
export const CHECK_OUTPUT_OPTIONS: OptionSpec = {
  invert: {
    type: 'boolean',
    short: 'v',
    help: 'print the records that are certainly NOT in the filter',
  },
  count: { type: 'boolean', short: 'c', help: 'print only the number of records selected' },
  quiet: {
    type: 'boolean',
    short: 'q',
    help: 'print nothing; stop at the first record selected',
  },
  ...jsonOption('with -c: print {"records", "selected"}'),
};

/** check's options on how keys are read and tested (after the input options). */
const CHECK_KEY_OPTIONS: OptionSpec = {
  ...FUNNEL_READ_OPTION,
  ...threadsOption(
    'test the keys on N worker threads, each with its own copy of the filter; the output is the same, in the same order; pays for large inputs (each thread costs about 0.1 s to start and one copy of the filter)',
  ),
};

export const check: Command = {
  name: 'check',
  summary: 'print the records that may be in a filter (like grep)',
  usage: 'check FILE [INPUT...] [-v] [-c] [-q] [-0] [-d DELIM -f FIELDS] [--threads N] [--json]',
  help: `Prints each record of the inputs whose key may be in the filter in FILE ("maybe": a
Bloom filter has false positives at its rate, never false negatives), in input order, as it was
read (fields selected with -f are the key; the whole record is printed).

${optionHelp(CHECK_OUTPUT_OPTIONS)}
${INPUT_HELP}
${optionHelp(CHECK_KEY_OPTIONS)}

${RECORD_BYTES_HELP}

Exit status (as grep): 0 if any record was selected, 1 if none, 2 on an error.

Examples:
  bloomkit check seen.bloom todo.txt > maybe-seen.txt
  bloomkit check -v seen.bloom todo.txt > new.txt
  bloomkit check -q blocklist.bloom <<< "$ip" && echo blocked`,
  options: { ...CHECK_OUTPUT_OPTIONS, ...INPUT_OPTIONS, ...CHECK_KEY_OPTIONS },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  async run({ args, options, io }) {
    const [file, ...inputs] = args as [string, ...string[]];
    const funnelText = stringOption(options, 'funnel');
    const filter = await readQueryable(
      file,
      funnelText === undefined ? undefined : parseFunnel(funnelText, 'string'),
    );
    const want = flag(options, 'invert') ? 0 : 1;
    const quiet = flag(options, 'quiet');
    const countOnly = flag(options, 'count');
    const print = !quiet && !countOnly;
    const threads = parseThreads(options);
    const recordOpts = recordOptions(options, filter.funnel);
    const sep = recordOpts.separator;
    // The worker pool's code loads only when threads are asked for.
    const pool =
      threads > 1
        ? await (await import('../threads.js')).ThreadedFilter.start(filter, threads, 'has', file)
        : null;
    const interrupt = new Interrupt();
    // Standard output is made at the first record printed (none on empty input); a signal ends
    // any wait for its reader.
    const output = new Output(() => io.stdout, interrupt.arrived);
    let flags = new Uint8Array(0);
    let selected = 0;
    /** Counts or prints the selected records of `batch`; false once no more is wanted. */
    const emit = async (batch: RecordBatch, answers: Uint8Array): Promise<boolean> => {
      const { data, starts, ends, count } = batch;
      if (!print) {
        for (let i = 0; i < count; i++) if (answers[i] === want) selected++;
        return !(quiet && selected > 0);
      }
      selected += output.records(data, starts, ends, count, answers, want, sep);
      await output.flush();
      return !output.closed;
    };
    try {
      let more = true;
      const records = await scanInputs(
        inputList(inputs),
        recordOpts,
        io,
        options,
        'check',
        interrupt,
        async (batch) => {
          if (pool !== null) {
            for (const done of await pool.push(batch)) {
              if (more) more = await emit(done.batch, done.flags);
            }
            return more;
          }
          if (flags.length < batch.count) flags = new Uint8Array(batch.count * 2);
          filter.hasBatch(batch.keys, flags);
          return emit(batch, flags);
        },
      );
      if (pool !== null) {
        for (const done of await pool.drain()) if (more) more = await emit(done.batch, done.flags);
      }
      return await endCheck(output, options, records, selected, interrupt);
    } finally {
      interrupt.dispose();
      await pool?.close();
    }
  },
};

/**
 * The end of a check (`check`, `redis check`): the count with `--count` (JSON with `--json`),
 * the output flushed; exit 0 if a record was selected, 1 if none, or the interrupt's code.
 */
export async function endCheck(
  output: Output,
  options: OptionValues,
  records: number,
  selected: number,
  interrupt: Interrupt,
): Promise<number> {
  if (flag(options, 'count')) {
    output.text(
      flag(options, 'json') ? `${JSON.stringify({ records, selected })}\n` : `${selected}\n`,
    );
  }
  await output.end();
  if (interrupt.signal !== null) return interrupt.exitCode;
  return selected > 0 ? 0 : 1;
}
