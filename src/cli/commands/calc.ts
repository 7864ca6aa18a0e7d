/**
 * `bloomkit calc`: the library's one solver (`solveSize`, each type's size model in the codec
 * table) as a command, so it prints exactly the numbers the web page's calculator shows.
 */

import { type SizeAnswer, type SizeInputs, solveSize, typeNamed, typesWith } from '../../index.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import {
  flag,
  parseBits,
  parseCount,
  parseInteger,
  parseProbability,
  stringOption,
} from '../options.js';

/** `solveSize` with its `RangeError` as the command's error. */
function solve(type: string, given: SizeInputs): SizeAnswer {
  try {
    return solveSize(type, given);
  } catch (error) {
    if (error instanceof RangeError) throw new CliError(error.message);
    throw error;
  }
}

interface Row {
  type: string;
  bits: number;
  /** What a filter of the shape allocates (`SizeAnswer.bytes`), the size the table prints. */
  bytes: number;
  bitsPerKey: number;
  shape: string;
  fpp: number;
}

/** The shape's numbers as `name=value` pairs (`bits=9585088 hashes=7`). */
function shapeText(shape: SizeAnswer['shape']): string {
  return Object.entries(shape)
    .filter(([name]) => name !== 'kind')
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}

/** Every type with a size model, sized for n keys at rate p (a type that cannot is left out). */
function rows(n: number, p: number): Row[] {
  const out: Row[] = [];
  for (const type of typesWith('model')) {
    let r: SizeAnswer;
    try {
      r = solveSize(type, { n, p });
    } catch {
      continue; // a type that cannot hold these figures is left out of the table
    }
    out.push({
      type,
      bits: r.bits,
      bytes: r.bytes,
      bitsPerKey: Number(r.bitsPerKey.toFixed(2)),
      shape: shapeText(r.shape),
      fpp: r.p,
    });
  }
  return out;
}

/** calc's options, each declared once with its help line. */
const CALC_OPTIONS: OptionSpec = {
  capacity: { type: 'string', short: 'n', arg: 'N', help: 'keys (1000000, 1e6, 2.5M)' },
  fpp: { type: 'string', short: 'p', arg: 'P', help: 'false positive rate (0.01, 1e-6, 1%)' },
  bits: {
    type: 'string',
    short: 'm',
    arg: 'M',
    help: 'bits (8388608) or bytes with a unit (64MiB, 1GB)',
  },
  hashes: { type: 'string', short: 'k', arg: 'K', help: 'hash functions (1 to 255)' },
  type: {
    type: 'string',
    short: 't',
    arg: 'TYPE',
    help: `${typesWith('model').join(' | ')}\n(default classic)`,
  },
  json: { type: 'boolean', help: 'the same as JSON' },
};

export const calc: Command = {
  name: 'calc',
  summary: 'sizes and false positive rates: any two of -n, -p, -m, -k give the rest',
  usage: 'calc [-n CAPACITY] [-p FPP] [-m BITS|SIZE] [-k HASHES] [-t TYPE] [--json]',
  help: `Any two of n (keys), p (false positive rate), m (bits, or a size like 64MiB) and k
(hashes) give the others for a filter type (classic by default: Guava's sizing, m rounded up
to whole 64-bit words, k = round(m/n·ln 2), p = (1-e^(-kn/m))^k). With more than two, (n, m)
wins, then (n, p), (m, p), (n, k), (m, k). A table then gives every type's size for those n
keys at that rate, each with its own model of the rate: the blocked and split-block filters'
Poisson mixtures, the cuckoo filter's 1-(1-1/(2^f-1))^(8·load), the binary fuse filter's
2^-f. The web page's calculator gives the same numbers for the same inputs.

${optionHelp(CALC_OPTIONS)}

Examples:
  bloomkit calc -n 10M -p 0.001
  bloomkit calc -m 64MiB -p 1e-6       # how many keys fit
  bloomkit calc -n 1e6 -m 1MiB         # what rate that gives
  bloomkit calc -t cuckoo -m 1MiB -p 1%   # the same for a cuckoo filter`,
  options: CALC_OPTIONS,
  positionals: { min: 0, max: 0 },
  async run({ options, io }) {
    const text = (name: string) => stringOption(options, name);
    const given = {
      n: text('capacity') === undefined ? undefined : parseCount('-n', text('capacity')!),
      p: text('fpp') === undefined ? undefined : parseProbability('-p', text('fpp')!),
      m: text('bits') === undefined ? undefined : parseBits('-m', text('bits')!),
      k: text('hashes') === undefined ? undefined : parseInteger('-k', text('hashes')!, 255),
    };
    let type: string;
    try {
      type = typeNamed(text('type') ?? 'classic', 'model', '--type').name;
    } catch (error) {
      throw new CliError((error as Error).message);
    }
    const r = solve(type, given);
    const target = given.p ?? r.p;
    // A rate of exactly 0 or 1 (a size far too small or too large for n) has no table of types
    // sized for it, and no lower bound (the solver's NaN): null and left out, never an error.
    const table = target > 0 && target < 1 ? rows(r.n, target) : [];
    // The bound at the rate printed (r.p, what the page shows), not at the -p asked for: for
    // n = 1 at -p 0.5 the filter's rate is 0.0155, whose bound is 6.01 bits per key, not 1.
    const lowerBound = Number.isFinite(r.lowerBound) ? Number(r.lowerBound.toFixed(3)) : null;
    const result = {
      type,
      n: r.n,
      m: r.bits,
      k: r.k,
      p: r.p,
      bytes: r.bytes,
      bitsPerKey: Number(r.bitsPerKey.toFixed(3)),
      lowerBoundBitsPerKey: lowerBound,
      shape: r.shape,
      from: r.from,
      notes: r.notes,
      types: table,
    };
    if (flag(options, 'json')) {
      io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    const lines = [
      `n = ${r.n.toLocaleString('en-US')} keys`,
      `m = ${r.bits.toLocaleString('en-US')} bits (${humanBytes(r.bytes)}), ${result.bitsPerKey} bits per key`,
      ...(r.k === null ? [] : [`k = ${r.k} hashes`]),
      `p = ${rateText(r.p)} (${type} filter: ${shapeText(r.shape)}${lowerBound === null ? '' : `; the lower bound for any filter at this rate is ${lowerBound} bits per key`})`,
      ...r.notes.map((note) => `(${note})`),
      ...(table.length === 0
        ? []
        : [
            '',
            `Every type for n = ${r.n.toLocaleString('en-US')} keys at p = ${target.toPrecision(4)}:`,
            `  ${'type'.padEnd(12)}${'size'.padStart(12)}${'bits/key'.padStart(10)}  ${'rate'.padEnd(11)}shape`,
            ...table.map(
              (row) =>
                `  ${row.type.padEnd(12)}${humanBytes(row.bytes).padStart(12)}${String(row.bitsPerKey).padStart(10)}  ${row.fpp.toPrecision(3).padEnd(11)}${row.shape}`,
            ),
          ]),
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};

/** A rate to 4 significant digits; exactly 0 and 1 as they are (not `1.000`). */
function rateText(p: number): string {
  return p === 0 || p === 1 ? String(p) : p.toPrecision(4);
}

function humanBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 2 ** 20) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  return `${(n / 2 ** 30).toFixed(2)} GiB`;
}
