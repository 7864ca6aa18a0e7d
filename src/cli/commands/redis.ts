import type { RedisBloomFilter } from '../../redis/bloom.js';
import {
  CliError,
  type Command,
  type OptionSpec,
  type OptionValues,
  optionHelp,
} from '../command.js';
import { NO_NUMBER } from '../describe.js';
import {
  flag,
  INPUT_HELP,
  INPUT_OPTIONS,
  jsonOption,
  parseCount,
  parseFunnel,
  parseProbability,
  stringOption,
} from '../options.js';
import { Output } from '../output.js';
import {
  closeRedis,
  connectRedis,
  DEFAULT_REDIS_TIMEOUT_S,
  redisTarget,
  shownUrl,
} from '../redis-connect.js';
import { saturationJson, saturationWarning } from '../saturation.js';
import { Interrupt, inputList, recordOptions, scanInputs } from '../scan.js';
import { CHECK_OUTPUT_OPTIONS, endCheck } from './check.js';

const VERBS = ['create', 'add', 'check', 'info'] as const;

/** redis's own options (before the input options), each declared once with its help line. */
const REDIS_OPTIONS: OptionSpec = {
  url: {
    type: 'string',
    arg: 'URL',
    help: 'the server (default: the REDIS_URL environment variable)',
  },
  durability: {
    type: 'string',
    arg: 'strict|best-effort',
    help: 'strict (default): refuse a server on which a crash can lose acknowledged adds (anything but appendonly yes with appendfsync always, or a server whose CONFIG cannot be read); best-effort: accept it',
  },
  timeout: {
    type: 'string',
    arg: 'S',
    help: `give up after S seconds without an answer from the server, when connecting and at each step (default ${DEFAULT_REDIS_TIMEOUT_S}); exit status 2`,
  },
  capacity: {
    type: 'string',
    short: 'n',
    arg: 'N',
    help: 'create: expected number of distinct keys',
  },
  fpp: { type: 'string', short: 'p', arg: 'P', help: 'create: false positive rate at N keys' },
  funnel: {
    type: 'string',
    arg: 'F',
    help: 'create: how keys become bytes, string (UTF-8, default) | utf16 | int | long | bytes',
  },
  // The check verb takes the check command's options; its help lines say which verb.
  ...Object.fromEntries(
    Object.entries(CHECK_OUTPUT_OPTIONS).map(([name, o]) => [
      name,
      { ...o, help: `check: ${o.help}` },
    ]),
  ),
  ...jsonOption(
    'print the result as JSON: create and info their facts, add {"records", "new", "estimatedCount", "saturation", "saturated"} (the first two only after a signal), check with -c {"records", "selected"}',
  ),
};

export const redis: Command = {
  name: 'redis',
  summary: 'create, add to, check and describe a Bloom filter kept in Redis',
  usage: 'redis create|add|check|info NAME [INPUT...] --url redis://HOST:PORT [options]',
  help: `The same verbs on a classic Bloom filter kept in Redis (RedisBloomFilter: sharded bit
strings, plain Redis or Redis Cluster), shared by every process that opens NAME.

  create NAME -n CAPACITY -p FPP [--funnel F]
                         create it (or open it if it exists alike)
  add NAME [INPUT...]    add each record
  check NAME [INPUT...] [-v] [-c] [-q]
                         print the records that may be in it (as check)
  info NAME [--json]     its shape, estimated count, rate now and the server's
                         persistence

${optionHelp(REDIS_OPTIONS)}
${INPUT_HELP}

Records and keys: a record ends at a newline (or a NUL byte with -0); a carriage return just
before the newline is not part of the key unless --keep-cr is given. Keys are sent as text:
a record's bytes are read as UTF-8, and invalid bytes become U+FFFD (so two records that
differ only in invalid bytes are one key).

Exit status: check as grep (0 selected, 1 none); 2 on an error.

Example:
  bloomkit redis create seen -n 1e6 -p 0.001 --url redis://127.0.0.1:6379
  bloomkit redis add seen urls.txt --url redis://127.0.0.1:6379`,
  options: { ...REDIS_OPTIONS, ...INPUT_OPTIONS },
  positionals: { min: 2, max: Number.POSITIVE_INFINITY },
  async run({ args, options, io }) {
    const [verb, name, ...inputs] = args as [string, string, ...string[]];
    if (!(VERBS as readonly string[]).includes(verb)) {
      throw new CliError(
        `the verb must be one of ${VERBS.join(', ')}, got ${JSON.stringify(verb)}`,
      );
    }
    const durability = stringOption(options, 'durability') ?? 'strict';
    if (durability !== 'strict' && durability !== 'best-effort') {
      throw new CliError(
        `--durability must be strict or best-effort, got ${JSON.stringify(durability)}`,
      );
    }
    const { RedisBloomFilter } = await import('../../redis/bloom.js');
    const { url, timeoutMs } = redisTarget(options);
    const client = await connectRedis(url, timeoutMs);
    const bound = { timeout: timeoutMs, durability } as const;
    try {
      if (verb === 'create') {
        const n = stringOption(options, 'capacity');
        const p = stringOption(options, 'fpp');
        if (n === undefined || p === undefined)
          throw new CliError('create needs -n CAPACITY and -p FPP');
        const filter = await RedisBloomFilter.create(client, name, {
          capacity: parseCount('-n', n),
          fpp: parseProbability('-p', p),
          funnel: parseFunnel(stringOption(options, 'funnel'), 'string'),
          ...bound,
        });
        if (flag(options, 'json')) io.stdout.write(`${JSON.stringify(facts(filter))}\n`);
        return 0;
      }
      const filter = (await RedisBloomFilter.open(client, name, bound)) as RedisBloomFilter<string>;
      if (verb === 'info') {
        const f = {
          ...facts(filter),
          estimatedCount: Math.round(await filter.estimatedCount()),
          // The rate the bits imply now, to 6 digits as info prints a file's.
          expectedFpp: Number((await filter.expectedFpp()).toPrecision(6)),
          persistence: filter.persistence?.mode ?? 'unknown',
        };
        io.stdout.write(
          flag(options, 'json')
            ? `${JSON.stringify(f)}\n`
            : `${Object.entries(f)
                .map(
                  ([k, v]) =>
                    `${k}: ${typeof v === 'number' && !Number.isFinite(v) ? NO_NUMBER : v}`,
                )
                .join('\n')}\n`,
        );
        return 0;
      }
      if (filter.funnel !== 'string') {
        throw new CliError(`${name}: keys of funnel ${filter.funnel}; the command sends text keys`);
      }
      return await addOrCheck(verb as 'add' | 'check', name, filter, inputs, options, io);
    } catch (error) {
      if (error instanceof CliError) throw error;
      // The library names its option; the command has a flag for it.
      const message = (error as Error).message.replace(
        "durability: 'best-effort'",
        '--durability best-effort',
      );
      throw new CliError(`${shownUrl(url)}: ${message}`);
    } finally {
      closeRedis(client);
    }
  },
};

function facts(filter: RedisBloomFilter<string>): Record<string, string | number> {
  return {
    name: filter.name,
    type: 'redis classic (sharded)',
    funnel: filter.funnel,
    hashes: filter.hashes,
    shards: filter.shards,
    capacity: filter.shape.capacity,
    designFpp: filter.shape.fpp,
  };
}

async function addOrCheck(
  verb: 'add' | 'check',
  name: string,
  filter: RedisBloomFilter<string>,
  inputs: string[],
  options: OptionValues,
  io: Parameters<Command['run']>[0]['io'],
): Promise<number> {
  const decoder = new TextDecoder();
  const recordOpts = recordOptions(options, 'bytes');
  const interrupt = new Interrupt();
  const output = new Output(io.stdout, interrupt.arrived);
  const want = !flag(options, 'invert');
  let selected = 0;
  let added = 0;
  try {
    const records = await scanInputs(
      inputList(inputs),
      recordOpts,
      io,
      options,
      `redis ${verb}`,
      interrupt,
      async (batch) => {
        const { bytes, offsets } = batch.keys;
        const keys: string[] = [];
        for (let i = 0; i < batch.count; i++) {
          const end = batch.keys.ends ? batch.keys.ends[i]! : offsets[i + 1]!;
          keys.push(decoder.decode(bytes.subarray(offsets[i]!, end)));
        }
        // A batch waits for the server up to --timeout; a signal ends that wait. The batch's
        // keys may then be partly added (adding a key twice changes nothing: run the add again).
        if (verb === 'add') {
          const fresh = await interrupt.before(filter.addMany(keys));
          if (fresh === null) return false;
          added += fresh;
          return true;
        }
        const answers = await interrupt.before(filter.hasMany(keys));
        if (answers === null) return false;
        for (let i = 0; i < batch.count; i++) {
          if (answers[i] !== want) continue;
          selected++;
          if (!flag(options, 'quiet') && !flag(options, 'count')) {
            output.put(batch.data, batch.starts[i]!, batch.ends[i]!);
            output.byte(recordOpts.separator);
          }
        }
        await output.flush();
        return !(flag(options, 'quiet') && selected > 0);
      },
    );
    if (verb === 'add') {
      const json = flag(options, 'json');
      // As add on a file: warn once the filter passed 10 times its design rate, and in --json
      // the estimated count and the saturation figure (one BITCOUNT per shard). After Ctrl-C or
      // SIGTERM, no more round trips (a server that stopped answering may be why): no figures.
      const asks = interrupt.signal === null;
      const figure = asks && (records > 0 || json) ? await filter.saturation() : undefined;
      if (figure?.saturated) {
        io.stderr.write(
          saturationWarning(
            'redis add',
            `the filter ${name}`,
            figure,
            'it answers "maybe" for more and more keys never added',
            'Make a larger filter (redis create with a larger -n under another name) and add the keys to it.',
          ),
        );
      }
      if (json) {
        const more =
          figure === undefined
            ? {}
            : {
                estimatedCount: Math.round(await filter.estimatedCount()),
                ...saturationJson(figure),
              };
        output.text(`${JSON.stringify({ records, new: added, ...more })}\n`);
      }
      await output.end();
      return interrupt.signal === null ? 0 : interrupt.exitCode;
    }
    return await endCheck(output, options, records, selected, interrupt);
  } finally {
    interrupt.dispose();
  }
}
