/**
 * Option sets shared by several commands, and the parsers that turn option text into checked
 * values. Every parser throws a `CliError` naming the option and the text it got.
 */

import type { Funnel } from '../index.js';
import { CliError, type OptionSpec, type OptionValues, optionHelp } from './command.js';

/**
 * `--json`: machine-readable output. What it prints differs by command, so each command gives
 * the help line (the option itself is declared here once).
 */
export function jsonOption(help: string): OptionSpec {
  return { json: { type: 'boolean', help } };
}

/**
 * `--threads N` for `add`, `check` and `dedup` (the pool itself, threads.ts, loads on demand).
 * What the threads do differs by command, so each command gives the help line.
 */
export function threadsOption(help: string): OptionSpec {
  return { threads: { type: 'string', short: 'T', arg: 'N', help } };
}

/** `--funnel F` for the commands that read Guava or DCSO files (whose bytes do not say it). */
export const FUNNEL_READ_OPTION: OptionSpec = {
  funnel: {
    type: 'string',
    arg: 'F',
    help: 'for a Guava or DCSO file only (its bytes do not say): string (default), utf16, int, long or bytes',
  },
};

/** `--force`: replace the output file (its name is the command's, so each gives the line). */
export function forceOption(file: string): OptionSpec {
  return { force: { type: 'boolean', help: `replace ${file} if it exists` } };
}

/** How input is cut into records and keys (add, check, dedup, cascade, redis), with help. */
export const INPUT_OPTIONS: OptionSpec = {
  null: {
    type: 'boolean',
    short: '0',
    help: 'records end with a NUL byte instead of a newline',
  },
  delimiter: {
    type: 'string',
    short: 'd',
    arg: 'CHAR',
    help: 'field delimiter for -f (default: tab); one byte, "\\t" for tab',
  },
  fields: {
    type: 'string',
    short: 'f',
    arg: 'LIST',
    help: 'key = these fields of each record, joined by the delimiter (numbered from 1 as in cut: "2", "1,3", "2-4"); the whole record is still what is printed',
  },
  'keep-cr': {
    type: 'boolean',
    help: 'keep a carriage return before a newline in the key (see below)',
  },
  'no-progress': {
    type: 'boolean',
    help: 'no progress bar (there is one on stderr only when stderr is a terminal)',
  },
};

/** The input options' heading and generated lines, for the commands that read INPUT files. */
export const INPUT_HELP = `Input (files, or standard input when none is given or for "-"; gzip
is detected):
${optionHelp(INPUT_OPTIONS)}`;

/**
 * How a record becomes a key (the commands that hash records as bytes: add, check, dedup),
 * said once, after a command's options.
 */
export const RECORD_BYTES_HELP = `Records and keys: a record ends at a newline (or a NUL byte with -0). A carriage return
just before the newline is not part of the key, so "a\\r\\n" and "a\\n" are one key (CRLF and LF
files give the same keys; awk and sort -u keep them apart); the record is still printed as
read, CR included. With --keep-cr the key is every byte before the newline. Otherwise a key
is the record's bytes as they are, not decoded: invalid UTF-8 is hashed as the bytes it is.`;

/** `--funnel`: how a record's text becomes key bytes. */
export const FUNNELS: readonly Funnel[] = ['string', 'utf16', 'int', 'long', 'bytes'];

export function stringOption(options: OptionValues, name: string): string | undefined {
  const value = options[name];
  if (Array.isArray(value)) return stringOption({ [name]: value.at(-1) }, name);
  return typeof value === 'string' ? value : undefined;
}

export function flag(options: OptionValues, name: string): boolean {
  return options[name] === true;
}

const SUFFIX: Record<string, number> = {
  '': 1,
  k: 1e3,
  m: 1e6,
  g: 1e9,
  t: 1e12,
};

/** A positive integer count: `1000000`, `1_000_000`, `1e6`, `2.5M`, `10k`. */
export function parseCount(name: string, text: string): number {
  const match = /^([0-9][0-9_]*(?:\.[0-9]+)?(?:e[0-9]+)?)([kmgt]?)$/i.exec(text.trim());
  const value = match
    ? Number(match[1]!.replaceAll('_', '')) * SUFFIX[match[2]!.toLowerCase()]!
    : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new CliError(
      `${name} must be a positive whole number (like 1000000, 1e6 or 2.5M), got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** A probability in (0, 1): `0.01`, `1e-6`, or a percentage `1%`. */
export function parseProbability(name: string, text: string): number {
  const t = text.trim();
  const value = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
  if (t === '' || !(value > 0 && value < 1)) {
    throw new CliError(
      `${name} must be a probability in (0, 1) (like 0.01, 1e-6 or 1%), got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

const BYTE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
};

/** A size in bits: a plain number of bits, or bytes with a unit (`64MiB`, `1.5GB`, `512KiB`). */
export function parseBits(name: string, text: string): number {
  const match = /^([0-9][0-9_]*(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match?.[2]?.toLowerCase() ?? '';
  const number = match ? Number(match[1]!.replaceAll('_', '')) : Number.NaN;
  const bits =
    unit === '' || unit === 'bits' ? number : number * (BYTE_UNITS[unit] ?? Number.NaN) * 8;
  if (!Number.isSafeInteger(bits) || bits < 1) {
    throw new CliError(
      `${name} must be a number of bits or a size like 64MiB, got ${JSON.stringify(text)}`,
    );
  }
  return bits;
}

/** A positive integer at most `max` (hash counts). */
export function parseInteger(name: string, text: string, max: number): number {
  const value = Number(text);
  if (!/^[0-9]+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new CliError(
      `${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

export function parseFunnel(text: string | undefined, fallback: Funnel): Funnel {
  if (text === undefined) return fallback;
  if (!(FUNNELS as readonly string[]).includes(text)) {
    throw new CliError(
      `--funnel must be one of ${FUNNELS.join(', ')}, got ${JSON.stringify(text)}`,
    );
  }
  return text as Funnel;
}

/** A one-byte delimiter: a character below U+0080, or `\t`, `\0`, `\n`. */
export function parseDelimiter(text: string): number {
  const named: Record<string, number> = { '\\t': 9, '\\0': 0, '\\n': 10, tab: 9 };
  const value = named[text] ?? (text.length === 1 ? text.charCodeAt(0) : -1);
  if (value < 0 || value > 0x7f) {
    throw new CliError(
      `--delimiter must be one ASCII character (or \\t), got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** A field list as cut takes it, numbered from 1: `2`, `1,3`, `2-4`; returned 0-based, in order. */
export function parseFields(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const match = /^([0-9]+)(?:-([0-9]+))?$/.exec(part.trim());
    const from = match ? Number(match[1]) : 0;
    const to = match?.[2] !== undefined ? Number(match[2]) : from;
    if (!match || from < 1 || to < from || to > 65536) {
      throw new CliError(
        `--fields must be field numbers from 1 (like 2, 1,3 or 2-4), got ${JSON.stringify(text)}`,
      );
    }
    for (let f = from; f <= to; f++) out.push(f - 1);
  }
  return out;
}

/** `--threads N`: an integer in [1, 64] (default 1: no worker threads). */
export function parseThreads(options: OptionValues): number {
  const text = stringOption(options, 'threads');
  if (text === undefined) return 1;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text.trim()) || !Number.isInteger(n) || n < 1 || n > 64) {
    throw new CliError(
      `--threads must be a whole number from 1 to 64, got ${JSON.stringify(text)}`,
    );
  }
  return n;
}
