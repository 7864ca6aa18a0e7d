/**
 * Runs a command's work over every input in turn, batch by batch, with the progress bar and
 * Ctrl-C handled once for all commands: an interrupt stops reading at the next batch (so the
 * command can still save its filter whole and flush what it printed) and the command then exits
 * with status 130, as shells expect.
 */

import type { Funnel } from '../index.js';
import type { CliIo, OptionValues } from './command.js';
import { type ByteSource, checkInputs, openInputOf } from './input.js';
import { flag, parseDelimiter, parseFields, parseFunnel, stringOption } from './options.js';
import { Progress } from './progress.js';
import { type RecordBatch, type RecordOptions, RecordReader } from './records.js';

/** The inputs named on the command line: `-` (standard input) when none. */
export function inputList(args: readonly string[]): string[] {
  return args.length === 0 ? ['-'] : [...args];
}

/** Record options from `-0`, `-d`, `-f` for a filter whose funnel is `funnel`. */
export function recordOptions(options: OptionValues, funnel: Funnel): RecordOptions {
  const fieldsText = stringOption(options, 'fields');
  const delimiterText = stringOption(options, 'delimiter');
  return {
    separator: flag(options, 'null') ? 0 : 0x0a,
    fields: fieldsText === undefined ? null : parseFields(fieldsText),
    delimiter: delimiterText === undefined ? 9 : parseDelimiter(delimiterText),
    funnel: parseFunnel(undefined, funnel),
    keepCr: flag(options, 'keep-cr'),
  };
}

/** Set once Ctrl-C (SIGINT) or SIGTERM arrived: the scan stops at the next batch. */
export class Interrupt {
  signal: string | null = null;
  /** Resolves when the signal comes (to stop waiting for input that may never come). */
  readonly arrived: Promise<null>;
  private wake: () => void = () => {};
  private readonly handler = (name: string) => {
    this.signal = name;
    this.wake();
  };

  constructor() {
    this.arrived = new Promise<null>((resolve) => {
      this.wake = () => resolve(null);
    });
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  get exitCode(): number {
    return this.signal === 'SIGTERM' ? 143 : 130;
  }

  /**
   * `work`'s value, or null if the signal comes first (a wait for input, a server or a writer
   * ends with it). Work that settles after the signal is left to itself: a late value goes to
   * `late` (say, to close a source opened too late), a late rejection is dropped.
   */
  async before<T>(work: Promise<T>, late?: (value: T) => void): Promise<T | null> {
    work.catch(() => {});
    const first = await Promise.race([work, this.arrived]);
    if (first === null && this.signal !== null && late !== undefined) {
      work.then(late, () => {});
    }
    return first;
  }

  dispose(): void {
    process.off('SIGINT', this.handler);
    process.off('SIGTERM', this.handler);
  }
}

/**
 * Calls `each` with every batch of every input, in order. Returns the number of records read;
 * stops early (without error) once `interrupt.signal` is set or `each` returns false.
 */
export async function scanInputs(
  inputs: readonly string[],
  recordOpts: RecordOptions,
  io: CliIo,
  options: OptionValues,
  label: string,
  interrupt: Interrupt,
  each: (
    batch: RecordBatch,
    source: ByteSource,
  ) => Promise<boolean | undefined> | boolean | undefined,
): Promise<number> {
  // Made at the first batch: an empty run does not look at standard error (see CliIo).
  let progress: Progress | null | undefined;
  let records = 0;
  let readBefore = 0;
  checkInputs(inputs);
  try {
    for (const name of inputs) {
      // Opening may wait for a writer's first bytes (standard input's or a FIFO's: the gzip
      // magic); a signal ends that wait too, and a source opened after it is closed then.
      const source = await interrupt.before(openInputOf(name, io), (late) => late.close());
      if (source === null) return records;
      const reader = new RecordReader(source, recordOpts);
      try {
        for (;;) {
          if (interrupt.signal !== null) return records;
          const batch = await interrupt.before(reader.next());
          if (interrupt.signal !== null) return records;
          if (batch === null) break;
          records += batch.count;
          if ((await each(batch, source)) === false) return records;
          progress ??= Progress.create(io, options, label);
          progress?.update(records, readBefore + source.position(), source.size);
        }
        readBefore += source.position();
      } finally {
        await source.close();
      }
    }
    return records;
  } finally {
    progress?.done();
  }
}
