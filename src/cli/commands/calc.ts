import { cuckooSafeCapacity, nextPow2 } from '../../filters/cuckoo/sizing.js';
import {
  blockedFalsePositiveRate,
  blockedSize,
  bloomSize,
  cuckooFingerprintBits,
  falsePositiveRate,
  lowerBoundBitsPerKey,
  optimalNumOfHashFunctions,
  splitBlockFalsePositiveRate,
  splitBlockSize,
} from '../../index.js';
import { CliError, type Command } from '../command.js';
import {
  flag,
  JSON_OPTION,
  parseBits,
  parseCount,
  parseInteger,
  parseProbability,
  stringOption,
} from '../options.js';

const LN2 = Math.LN2;

/** The classic filter's (n, m, k, p) from any two of them (Guava's rounding where it sizes). */
export function solveClassic(given: { n?: number; p?: number; m?: number; k?: number }): {
  n: number;
  m: number;
  k: number;
  p: number;
} {
  let { n, p, m, k } = given;
  if (n !== undefined && p !== undefined && m === undefined && k === undefined) {
    const size = bloomSize(n, p);
    return { n, m: size.bits, k: size.hashes, p: falsePositiveRate(n, size.bits, size.hashes) };
  }
  if (m !== undefined) m = Math.ceil(m / 64) * 64; // Guava keeps whole 64-bit words
  if (n !== undefined && m !== undefined) k ??= optimalNumOfHashFunctions(n, m);
  else if (n !== undefined && k !== undefined) m = Math.ceil((k * n) / LN2 / 64) * 64;
  else if (p !== undefined && m !== undefined) {
    n = Math.max(1, Math.floor((-m * LN2 * LN2) / Math.log(p)));
    k = optimalNumOfHashFunctions(n, m);
  } else if (m !== undefined && k !== undefined) n = Math.max(1, Math.floor((m * LN2) / k));
  else if (p !== undefined && k !== undefined) {
    throw new CliError('-p and -k alone do not fix a size: add -n or -m');
  }
  if (n === undefined || m === undefined || k === undefined) {
    throw new CliError('give two of -n, -p, -m, -k');
  }
  if (p !== undefined && given.n !== undefined && given.m !== undefined) {
    throw new CliError('give only two of -n, -p, -m, -k');
  }
  return { n, m, k, p: falsePositiveRate(n, m, k) };
}

interface Row {
  type: string;
  bits: number;
  bitsPerKey: number;
  shape: string;
  fpp: number;
  model: string;
}

function rows(n: number, p: number, classic: { m: number; k: number; p: number }): Row[] {
  const out: Row[] = [];
  const bpk = (bits: number) => Number((bits / n).toFixed(2));
  out.push({
    type: 'classic',
    bits: classic.m,
    bitsPerKey: bpk(classic.m),
    shape: `m=${classic.m} k=${classic.k}`,
    fpp: classic.p,
    model: '(1-e^(-kn/m))^k',
  });
  const attempt = (make: () => Row) => {
    try {
      out.push(make());
    } catch {
      // a type that cannot hold these figures is left out of the table
    }
  };
  attempt(() => {
    const b = blockedSize(n, p);
    return {
      type: 'blocked',
      bits: b.blocks * 512,
      bitsPerKey: bpk(b.blocks * 512),
      shape: `blocks=${b.blocks} k=${b.hashes}`,
      fpp: blockedFalsePositiveRate(n / b.blocks, b.hashes),
      model: 'Poisson mix over 512-bit blocks',
    };
  });
  attempt(() => {
    const s = splitBlockSize(n, p);
    return {
      type: 'split-block',
      bits: s.blocks * 256,
      bitsPerKey: bpk(s.blocks * 256),
      shape: `blocks=${s.blocks} (Parquet)`,
      fpp: splitBlockFalsePositiveRate(n / s.blocks),
      model: 'Poisson mix over 256-bit blocks, k=8',
    };
  });
  out.push({
    type: 'counting',
    bits: classic.m * 4,
    bitsPerKey: bpk(classic.m * 4),
    shape: `counters=${classic.m} (4-bit) k=${classic.k}`,
    fpp: classic.p,
    model: 'as classic',
  });
  attempt(() => {
    const f = cuckooFingerprintBits(p);
    let buckets = nextPow2(Math.ceil(n / 4));
    while (cuckooSafeCapacity(buckets) < n) buckets *= 2;
    return {
      type: 'cuckoo',
      bits: buckets * 4 * f,
      bitsPerKey: bpk(buckets * 4 * f),
      shape: `buckets=${buckets} fingerprint=${f} bits`,
      fpp: Math.min(1, (2 * 4 * (n / (buckets * 4))) / 2 ** f),
      model: '2b·load/2^f',
    };
  });
  return out;
}

export const calc: Command = {
  name: 'calc',
  summary: 'sizes and false positive rates: any two of -n, -p, -m, -k give the rest',
  usage: 'calc [-n CAPACITY] [-p FPP] [-m BITS|SIZE] [-k HASHES] [--json]',
  help: `Any two of n (keys), p (false positive rate), m (bits, or a size like 64MiB) and k
(hashes) give the others for a classic Bloom filter (Guava's sizing: m rounded up to whole
64-bit words, k = round(m/n·ln 2)); p is then (1-e^(-kn/m))^k. With n and p known, a table
gives every type's size for them, each with its own model of the rate: the blocked and
split-block filters' Poisson mixtures, the cuckoo filter's 2b·load/2^f.

  -n, --capacity N   keys (1000000, 1e6, 2.5M)
  -p, --fpp P        false positive rate (0.01, 1e-6, 1%)
  -m, --bits M       bits (8388608) or bytes with a unit (64MiB, 1GB)
  -k, --hashes K     hash functions (1 to 255)
      --json         the same as JSON

Examples:
  bloomkit calc -n 10M -p 0.001
  bloomkit calc -m 64MiB -p 1e-6       # how many keys fit
  bloomkit calc -n 1e6 -m 1MiB         # what rate that gives`,
  options: {
    capacity: { type: 'string', short: 'n' },
    fpp: { type: 'string', short: 'p' },
    bits: { type: 'string', short: 'm' },
    hashes: { type: 'string', short: 'k' },
    ...JSON_OPTION,
  },
  positionals: { min: 0, max: 0 },
  async run({ options, io }) {
    const text = (name: string) => stringOption(options, name);
    const given = {
      n: text('capacity') === undefined ? undefined : parseCount('-n', text('capacity')!),
      p: text('fpp') === undefined ? undefined : parseProbability('-p', text('fpp')!),
      m: text('bits') === undefined ? undefined : parseBits('-m', text('bits')!),
      k: text('hashes') === undefined ? undefined : parseInteger('-k', text('hashes')!, 255),
    };
    if (Object.values(given).filter((v) => v !== undefined).length !== 2) {
      throw new CliError('give exactly two of -n, -p, -m, -k');
    }
    let classic: ReturnType<typeof solveClassic>;
    try {
      classic = solveClassic(given);
    } catch (error) {
      if (error instanceof RangeError) throw new CliError(error.message);
      throw error;
    }
    const target = given.p ?? classic.p;
    const table = rows(classic.n, target, classic);
    const result = {
      n: classic.n,
      m: classic.m,
      k: classic.k,
      p: classic.p,
      bytes: classic.m / 8,
      bitsPerKey: Number((classic.m / classic.n).toFixed(3)),
      lowerBoundBitsPerKey: Number(lowerBoundBitsPerKey(target).toFixed(3)),
      types: table,
    };
    if (flag(options, 'json')) {
      io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    const lines = [
      `n = ${classic.n.toLocaleString('en-US')} keys`,
      `m = ${classic.m.toLocaleString('en-US')} bits (${humanBytes(classic.m / 8)}), ${result.bitsPerKey} bits per key`,
      `k = ${classic.k} hashes`,
      `p = ${classic.p.toPrecision(4)} (classic Bloom filter; the lower bound for any filter at this rate is ${result.lowerBoundBitsPerKey} bits per key)`,
      '',
      `Every type for n = ${classic.n.toLocaleString('en-US')} keys at p = ${target.toPrecision(4)}:`,
      `  ${'type'.padEnd(12)}${'size'.padStart(12)}${'bits/key'.padStart(10)}  ${'rate'.padEnd(11)}shape`,
      ...table.map(
        (r) =>
          `  ${r.type.padEnd(12)}${humanBytes(r.bits / 8).padStart(12)}${String(r.bitsPerKey).padStart(10)}  ${r.fpp.toPrecision(3).padEnd(11)}${r.shape}  [${r.model}]`,
      ),
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};

function humanBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 2 ** 20) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  return `${(n / 2 ** 30).toFixed(2)} GiB`;
}
