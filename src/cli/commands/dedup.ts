import { stat } from 'node:fs/promises';
import type { FilterBase, Saturation } from '../../filters/base.js';
import { typeNamed, typesWith } from '../../formats/registry.js';
import { DEFAULT_DEDUPER_TYPE, Deduper, type DeduperType } from '../../node/deduper.js';
import { describeState, stateMismatch } from '../../node/deduper-shape.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { asCliError, updatesFile } from '../filter-file.js';
import {
  flag,
  INPUT_HELP,
  INPUT_OPTIONS,
  jsonOption,
  parseCount,
  parseProbability,
  parseThreads,
  RECORD_BYTES_HELP,
  stringOption,
  threadsOption,
} from '../options.js';
import { Output } from '../output.js';
import { aboutCount, saturationJson, saturationWarning } from '../saturation.js';
import { Interrupt, inputList, recordOptions, scanInputs } from '../scan.js';

const DEFAULT_FPP = 1e-6;

/** dedup's own options (before the input options), each declared once with its help line. */
const DEDUP_OPTIONS: OptionSpec = {
  capacity: {
    type: 'string',
    short: 'n',
    arg: 'N',
    help: 'expected distinct keys: a fixed-size filter (fastest); without it the filter is scalable and grows as needed',
  },
  fpp: { type: 'string', short: 'p', arg: 'P', help: `false drop rate (default ${DEFAULT_FPP})` },
  type: {
    type: 'string',
    arg: 'T',
    help: `with -n: the filter, ${DEFAULT_DEDUPER_TYPE} (default: one cache line per key, the fastest), classic (Guava's layout, about 3/4 of the memory) or split-block (Parquet's); a --state file keeps the type it was made with`,
  },
  state: {
    type: 'string',
    arg: 'FILE',
    help: 'remember the keys across runs in FILE: read at the start if it exists (then -n, -p and --type may be left out; given, they must match it), written at the end, atomically (also on Ctrl-C, unless some output was never read: then it stays at its last checkpoint), and every --checkpoint-every records that were new',
  },
  'checkpoint-every': {
    type: 'string',
    arg: 'N',
    help: 'write the state after every N new records (default: only at the end)',
  },
  quiet: {
    type: 'boolean',
    short: 'q',
    help: 'no summary on stderr (warnings and errors are still printed)',
  },
  ...jsonOption('print the summary on stderr as JSON'),
  ...threadsOption(
    "only 1: each record's answer depends on every record before it, so one thread updates the filter in input order; what other threads could take over (hashing, about a tenth of the time) costs about as much to hand over as it saves",
  ),
};

// One update of the --state file at a time: a second dedup (or add) on it waits for this one.
export const dedup: Command = updatesFile(
  {
    name: 'dedup',
    summary: "print each record the first time it is seen (awk '!seen[$0]++' in fixed memory)",
    usage:
      'dedup [INPUT...] [-n CAPACITY] [-p FPP] [--type T] [--state FILE] [-0] [-d DELIM -f FIELDS]',
    help: `Prints each record of the inputs the first time its key is seen, in input order, like
awk '!seen[$0]++' or a crawl frontier, in the memory of a Bloom filter instead of every key.
A new key is taken for a repeat (dropped) with probability about FPP: the summary on stderr
says how many such false drops to expect. A filter with -n that holds far more keys drops
more and more new ones: once its rate passes 10 times the rate it was sized for (about FPP),
dedup warns on stderr, and again at the end ("saturated": true in --json). Without -n the
filter grows and never saturates.

${optionHelp(DEDUP_OPTIONS)}

${INPUT_HELP}

${RECORD_BYTES_HELP}

Exit status: 0 when done, 2 on an error, 130 after Ctrl-C (the state is saved first, as above).

Examples:
  bloomkit dedup urls.txt > unique.txt
  bloomkit dedup --state frontier.bloom new-links-*.gz | fetch-pages
  bloomkit dedup -d , -f 2 events.csv`,
    options: { ...DEDUP_OPTIONS, ...INPUT_OPTIONS },
    positionals: { min: 0, max: Number.POSITIVE_INFINITY },
    async run({ args, options, io }) {
      const capacityText = stringOption(options, 'capacity');
      const fppText = stringOption(options, 'fpp');
      const state = stringOption(options, 'state') ?? null;
      const everyText = stringOption(options, 'checkpoint-every');
      if (everyText !== undefined && state === null) {
        throw new CliError('--checkpoint-every needs --state FILE');
      }
      const type = parseDedupType(stringOption(options, 'type'), capacityText !== undefined);
      if (parseThreads(options) > 1) {
        throw new CliError(
          '--threads: dedup runs on one thread (each record is new or not depending on every record before it, so the filter is updated in input order; see bloomkit help dedup)',
        );
      }
      const capacity = capacityText === undefined ? undefined : parseCount('-n', capacityText);
      const fpp = fppText === undefined ? DEFAULT_FPP : parseProbability('-p', fppText);
      const existed = state !== null && (await stat(state).catch(() => null)) !== null;
      let deduper: Deduper;
      try {
        deduper = await Deduper.open(state, {
          capacity,
          type,
          fpp,
          checkpointKeys:
            everyText === undefined ? undefined : parseCount('--checkpoint-every', everyText),
          // Held by updatesFile (at the end) since before this open: a lock of its own would wait
          // for it.
          lock: false,
        });
      } catch (error) {
        throw asCliError(state ?? '--state', error);
      }
      if (existed && (capacityText !== undefined || fppText !== undefined)) {
        const other = stateMismatch(deduper.state, { capacity, fpp, type });
        if (other !== null) {
          await deduper.release(); // nothing was changed: let the next run have the file
          throw new CliError(
            `--state ${state} holds ${describeState(deduper.state)}; ${[
              capacityText === undefined ? '' : `-n ${capacityText}`,
              fppText === undefined ? '' : `-p ${fppText}`,
            ]
              .filter((x) => x !== '')
              .join(' ')} would make ${other}. Leave out -n and -p to go on with the file, or ` +
              'give another --state file.',
          );
        }
      }
      const quiet = flag(options, 'quiet');
      const warnIfSaturated = (s: Saturation = deduper.saturation): boolean => {
        if (!s.saturated) return false;
        io.stderr.write(
          saturationWarning(
            'dedup',
            state === null ? 'the filter' : `the --state file ${state}`,
            s,
            'new records are dropped as repeats',
            state !== null
              ? 'Start a new --state file (without -n its filter grows as needed).'
              : 'Give a larger -n, or leave out -n for a filter that grows as needed.',
          ),
        );
        return true;
      };
      let warned = false;
      let batchesSinceWarning = 0;
      const recordOpts = recordOptions(options, deduper.state.funnel);
      const sep = recordOpts.separator;
      const interrupt = new Interrupt();
      // A signal ends any wait for the reader (see end() below for what the state then keeps).
      const output = new Output(io.stdout, interrupt.arrived);
      let flags = new Uint8Array(0);
      let printed = 0;
      try {
        const records = await scanInputs(
          inputList(args),
          recordOpts,
          io,
          options,
          'dedup',
          interrupt,
          async (batch) => {
            if (flags.length < batch.count) flags = new Uint8Array(batch.count * 2);
            deduper.seenBatch(batch.keys, flags);
            if (warned) batchesSinceWarning++;
            else warned = warnIfSaturated();
            const { data, starts, ends, count } = batch;
            // flags[i] is 1 for a record seen before: the zeros are printed.
            printed += output.records(data, starts, ends, count, flags, 0, sep);
            await output.flush();
            // Checkpoint only after the records it acknowledges were handed to the output.
            if (deduper.checkpointDue && (await output.end())) await deduper.checkpoint();
            return !output.closed;
          },
        );
        // Output that a reader went away from (`| head`), or that a signal cut short (a reader
        // that stopped reading), was not all handed over: the state is then not saved past its
        // last checkpoint, so that no record is taken for seen that was never handed over (the
        // next run prints those records again rather than lose them).
        const handedOver = await output.end();
        // The end's figure is the state's own (its bits, as add and info read the file), not the
        // O(1) model the run used per batch (the block filters' Poisson load model, which after
        // 3,000 keys in a 1,000-key blocked state said 0.30 where the bits say 0.38).
        const final = exactSaturation(deduper.state) ?? deduper.saturation;
        if (!handedOver && state !== null) {
          io.stderr.write(
            `dedup: standard output was not read to the end; ${state} is left as at its last checkpoint\n`,
          );
        } else {
          try {
            await deduper.close();
          } catch (error) {
            throw asCliError(state ?? '--state', error);
          }
        }
        const stats = deduper.stats;
        const summary = {
          records,
          printed,
          dropped: records - printed,
          expectedFalseDrops: Number(stats.expectedFalseDrops.toPrecision(3)),
          fpp: Number(final.currentFpp.toPrecision(3)),
          ...saturationJson(final),
          state,
        };
        // Said again at the end, where a reader of the summary looks.
        if (batchesSinceWarning > 0) warnIfSaturated(final);
        if (flag(options, 'json')) io.stderr.write(`${JSON.stringify(summary)}\n`);
        else if (!quiet) {
          io.stderr.write(
            `dedup: ${records} records, ${printed} printed, ${records - printed} dropped as repeats ` +
              // Past saturation the expectation (of keys answered new) undercounts: say so instead.
              (summary.saturated
                ? '(the filter is saturated: many of them may be new keys)'
                : `(of which ${aboutCount(stats.expectedFalseDrops)} new keys dropped by a ` +
                  'false positive)') +
              `${state === null || !handedOver ? '' : `; state saved to ${state}`}\n`,
          );
        }
        return interrupt.signal === null ? 0 : interrupt.exitCode;
      } finally {
        interrupt.dispose();
        await deduper.release(); // after an error (close released it otherwise)
      }
    },
  },
  ({ options }) => stringOption(options, 'state') ?? null,
);

/** The types a Deduper keeps its keys in (the codec table's `deduper` rows), the default first. */
const DEDUP_TYPES: readonly string[] = [
  DEFAULT_DEDUPER_TYPE,
  ...typesWith('deduper').filter((t) => t !== DEFAULT_DEDUPER_TYPE),
];

/** `--type`: one of the Deduper's types (or an alias: `bloom` is `classic`); needs `-n`. */
function parseDedupType(text: string | undefined, sized: boolean): DeduperType {
  if (text === undefined) return DEFAULT_DEDUPER_TYPE;
  let name: string;
  try {
    name = typeNamed(text, 'deduper').name;
  } catch {
    throw new CliError(
      `--type must be one of ${DEDUP_TYPES.join(', ')}, got ${JSON.stringify(text)}`,
    );
  }
  if (!sized) {
    throw new CliError(
      '--type needs -n CAPACITY (without a capacity the state is a scalable filter that grows)',
    );
  }
  return name;
}

/** The state filter's `saturation()` from its bits (O(m/32), once), where it has one. */
function exactSaturation(state: object): Saturation | undefined {
  return (state as Partial<Pick<FilterBase, 'saturation'>>).saturation?.();
}
