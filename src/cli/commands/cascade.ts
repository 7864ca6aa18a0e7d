import { FilterCascade } from '../../filters/cascade/filter.js';
import type { CascadeHash } from '../../filters/cascade/hashing.js';
import type { PackedKeys } from '../../filters/filter.js';
import { keyEnd } from '../../filters/packed.js';
import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { describeFilter, printFacts } from '../describe.js';
import { writeBytes } from '../filter-file.js';
import {
  flag,
  forceOption,
  INPUT_OPTIONS,
  jsonOption,
  RECORD_BYTES_HELP,
  stringOption,
} from '../options.js';
import { Interrupt, recordOptions, scanInputs } from '../scan.js';

/** Keys copied into one growing buffer (no object per key), iterated as views. */
class KeyStore {
  private bytes = new Uint8Array(1 << 16);
  private ends = new Uint32Array(1024);
  count = 0;
  private used = 0;

  addAll(keys: PackedKeys, count: number): void {
    for (let i = 0; i < count; i++) {
      const key = keys.bytes.subarray(keys.offsets[i]!, keyEnd(keys, i));
      if (this.used + key.length > this.bytes.length) {
        const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.used + key.length));
        grown.set(this.bytes.subarray(0, this.used));
        this.bytes = grown;
      }
      if (this.count === this.ends.length) {
        const grown = new Uint32Array(this.ends.length * 2);
        grown.set(this.ends);
        this.ends = grown;
      }
      this.bytes.set(key, this.used);
      this.used += key.length;
      this.ends[this.count++] = this.used;
    }
  }

  *[Symbol.iterator](): Generator<Uint8Array> {
    let start = 0;
    for (let i = 0; i < this.count; i++) {
      const end = this.ends[i]!;
      yield this.bytes.subarray(start, end);
      start = end;
    }
  }
}

const HASHES: readonly CascadeHash[] = ['murmur3', 'sha256l32', 'sha256ctr'];

function parseSalt(text: string | undefined): Uint8Array | undefined {
  if (text === undefined) return undefined;
  if (!/^(?:[0-9a-fA-F]{2}){1,255}$/.test(text)) {
    throw new CliError(`--salt must be 1 to 255 bytes in hex, got "${text}"`);
  }
  return Uint8Array.from(text.match(/../g)!, (h) => Number.parseInt(h, 16));
}

/** cascade's own options (before the input options), each declared once with its help line. */
const CASCADE_OPTIONS: OptionSpec = {
  include: {
    type: 'string',
    arg: 'FILE',
    help: 'the keys that must answer true ("-" for standard input)',
  },
  exclude: { type: 'string', arg: 'FILE', help: 'the keys that must answer false' },
  format: { type: 'string', arg: 'F', help: 'native (default) | mlbf (version 2)' },
  hash: { type: 'string', arg: 'H', help: `${HASHES.join(' | ')} (default murmur3)` },
  salt: {
    type: 'string',
    arg: 'HEX',
    help: 'a salt for the sha256 hashes, in hex (at most 255 bytes)',
  },
  ...forceOption('OUT'),
  ...jsonOption("print the cascade's facts as JSON"),
};

export const cascade: Command = {
  name: 'cascade',
  summary: 'build an exact filter cascade (Mozilla MLBF or native) from include and exclude lists',
  usage:
    'cascade build --include FILE --exclude FILE OUT [--format mlbf|native] [--hash H] [--salt HEX] [-0] [--json]',
  help: `Builds a filter cascade (CRLite's layout, as Firefox ships certificate revocations): a
lookup of any record of the --include file answers true, of any record of the --exclude file
false; records and keys are read as said below.
OUT is written atomically, as an MLBF file (Mozilla's format, read by rust-cascade and Python's
filtercascade) or in bloomkit's native format (default), which "bloomkit info" and "check" read.

${optionHelp(CASCADE_OPTIONS)}

Records of the --include and --exclude files (gzip is detected):
${optionHelp(INPUT_OPTIONS)}

${RECORD_BYTES_HELP}

Exit status: 0 when written, 2 on an error (a record in both files, a bad option).

Examples:
  bloomkit cascade build --include revoked.txt --exclude valid.txt.gz \\
    crlite.mlbf --format mlbf
  bloomkit cascade build --include blocked.txt --exclude allowed.txt \\
    blocklist.bloom`,
  options: { ...CASCADE_OPTIONS, ...INPUT_OPTIONS },
  positionals: { min: 2, max: 2 },
  async run({ args, options, io }) {
    const [verb, out] = args as [string, string];
    if (verb !== 'build') throw new CliError(`cascade: unknown verb "${verb}" (only "build")`);
    const includePath = stringOption(options, 'include');
    const excludePath = stringOption(options, 'exclude');
    if (includePath === undefined || excludePath === undefined) {
      throw new CliError('cascade build needs --include FILE and --exclude FILE');
    }
    const format = stringOption(options, 'format') ?? 'native';
    if (format !== 'native' && format !== 'mlbf') {
      throw new CliError(`--format must be native or mlbf, got "${format}"`);
    }
    const hash = (stringOption(options, 'hash') ?? 'murmur3') as CascadeHash;
    if (!HASHES.includes(hash)) {
      throw new CliError(`--hash must be one of ${HASHES.join(', ')}, got "${hash}"`);
    }
    const salt = parseSalt(stringOption(options, 'salt'));
    const interrupt = new Interrupt();
    try {
      const sets: KeyStore[] = [];
      for (const [path, label] of [
        [includePath, 'include'],
        [excludePath, 'exclude'],
      ] as const) {
        const store = new KeyStore();
        await scanInputs(
          [path],
          recordOptions(options, 'bytes'),
          io,
          options,
          label,
          interrupt,
          (b) => {
            store.addAll(b.keys, b.count);
            return true;
          },
        );
        if (interrupt.signal !== null) return interrupt.exitCode;
        sets.push(store);
      }
      let built: FilterCascade<Uint8Array>;
      try {
        built = FilterCascade.build({
          include: sets[0]!,
          exclude: sets[1]!,
          excludeSize: sets[1]!.count,
          funnel: 'bytes',
          hash,
          salt,
        });
      } catch (error) {
        if (error instanceof RangeError) throw new CliError(`cascade build: ${error.message}`);
        throw error;
      }
      // A line's bytes are its UTF-8 key: the cascade answers 'string' keys (the same bytes).
      const result = new FilterCascade<string>({ ...built, funnel: 'string' });
      const bytes = format === 'mlbf' ? result.toMlbf() : result.toBytes();
      await writeBytes(out, bytes, flag(options, 'force'));
      printFacts(io, [{ file: out, format, ...describeFilter(result) }], flag(options, 'json'));
      return 0;
    } finally {
      interrupt.dispose();
    }
  },
};
