/**
 * THE codec table: one line per filter type, the only list of types in bloomkit. Everything that
 * reads, writes, creates, sizes or shows filters by type goes through it: `fromBytes`,
 * `fromJSON`, `save`/`load` in bloomkit/node (streaming parts and sinks), `describeFilter`, the
 * command (`--type`, `info`, `calc`), `budgetSize` and `solveSize`, `buildParallel` and the worker
 * pool (`openShared`), the web page (calculator, plots, live filter, inspector), the golden-file
 * tests and the conformance suite (which check that every row has a fixture and a target).
 *
 * This is the synchronous table: it imports every type's codec (the filter class, its kernels and
 * wasm) with itself, which is what the library's synchronous calls need. Its twin `type-table.ts`
 * holds each row's light facts (name, aliases, type id, capabilities) and loads a codec only when
 * it is used: the command, bloomkit/node's `load`/`save` and worker threads read that one, so a
 * run that touches one type loads one type. The twin's rows (type-rows.ts) are generated from this
 * table by scripts/make-type-table.ts; test/type-table.test.ts fails while they are stale.
 * (This module does not import type-table.ts: the dynamic imports there would make a bundler wrap
 * every module of an application's bundle in lazy initialisers.)
 *
 * Adding a type: write src/filters/<type>/{filter,format,codec}.ts, give it an id in
 * `FILTER_TYPES` (native.ts), add its codec below, run `npx tsx scripts/make-type-table.ts`, a line in
 * test/conformance/table.ts, and run `npx tsx scripts/make-golden.ts` for its golden fixture
 * (docs/ARCHITECTURE.md has the steps).
 */

import { checkBytes, FormatError, mustBe } from '../errors.js';
import { fromBase64 } from '../filters/base.js';
import { binaryFuseCodec } from '../filters/binary-fuse/codec.js';
import { blockedCodec } from '../filters/blocked/codec.js';
import { bloomCodec } from '../filters/bloom/codec.js';
import { cascadeCodec } from '../filters/cascade/codec.js';
import { countingCodec } from '../filters/counting/codec.js';
import { cuckooCodec } from '../filters/cuckoo/codec.js';
import { dcsoCodec } from '../filters/dcso/codec.js';
import type { ReadonlyMembershipFilter } from '../filters/filter.js';
import { scalableCodec } from '../filters/scalable/codec.js';
import { splitBlockCodec } from '../filters/split-block/codec.js';
import type { Key } from '../hash/keys.js';
import { shardedBloomCodec } from '../sharded/codec.js';
import { codec, type FilterCodec, type FilterFacts } from './codec.js';
import { type DecodeOptions, decodeHeader, FILTER_TYPES } from './native.js';

/** Every native filter type, in type-id order. */
export const CODECS: readonly FilterCodec<object>[] = [
  codec(bloomCodec),
  codec(countingCodec),
  codec(scalableCodec),
  codec(cuckooCodec),
  codec(blockedCodec),
  codec(splitBlockCodec),
  codec(shardedBloomCodec),
  codec(cascadeCodec),
  codec(binaryFuseCodec),
  codec(dcsoCodec),
];

const BY_TYPE = new Map(CODECS.map((c) => [c.typeId, c]));
const BY_NAME = new Map(
  CODECS.flatMap((c) => [c.name, ...(c.aliases ?? [])].map((name) => [name, c] as const)),
);

/** The type names, in table order (aliases are accepted but never listed). */
export const TYPE_NAMES: readonly string[] = CODECS.map((c) => c.name);

/**
 * The row of the type called `name` (or one of its aliases: `bloom` is `classic`); a
 * `RangeError` naming `parameter` and listing the names of the rows that have `capability`
 * when there is no such type or it lacks that capability.
 */
export function typeNamed<C extends keyof FilterCodec<object>>(
  name: unknown,
  capability?: C,
  parameter = 'type',
): FilterCodec<object> & Required<Pick<FilterCodec<object>, C>> {
  const row = typeof name === 'string' ? BY_NAME.get(name) : undefined;
  if (row !== undefined && (capability === undefined || row[capability] !== undefined)) {
    return row as FilterCodec<object> & Required<Pick<FilterCodec<object>, C>>;
  }
  throw mustBe(parameter, `one of ${typesWith(capability).join(', ')}`, name);
}

/** The names of the types that have `capability` (every type when undefined), in table order. */
export function typesWith(capability?: keyof FilterCodec<object>): string[] {
  return CODECS.filter((c) => capability === undefined || c[capability] !== undefined).map(
    (c) => c.name,
  );
}

/** The codec of native type id `typeId`, or undefined. */
export function codecForType(typeId: number): FilterCodec<object> | undefined {
  return BY_TYPE.get(typeId);
}

/** The codec that writes `filter` (by class), or undefined for an object of no native type. */
export function codecOf(filter: unknown): FilterCodec<object> | undefined {
  if (filter === null || typeof filter !== 'object') return undefined;
  // Most derived class first: a subclass must not be written as its base type.
  let best: FilterCodec<object> | undefined;
  for (const c of CODECS) {
    if (filter instanceof c.filterClass) {
      if (best === undefined || c.filterClass.prototype instanceof best.filterClass) best = c;
    }
  }
  return best;
}

/**
 * Decodes a native-format filter of any type. Throws `FormatError` for bad bytes (naming what
 * they look like when they are another format, e.g. a Guava or Parquet file).
 * Accepts a `Uint8Array`, any `ArrayBufferView` or an `ArrayBuffer` (what `fetch().arrayBuffer()`
 * returns). `{ copy: false }` lets types that support it view the payload inside `bytes`.
 */
export function fromBytes<K extends Key = Key>(
  bytes: Uint8Array | ArrayBuffer | ArrayBufferView,
  options?: DecodeOptions,
): ReadonlyMembershipFilter<K> {
  const view = checkBytes('bytes', bytes);
  const header = decodeHeader(view);
  if (header.type === FILTER_TYPES.chunked) {
    throw new FormatError(
      "these bytes hold a chunked filter file (type id 7): open it with ChunkedBloomFilter.open(path) from 'bloomkit/node'",
    );
  }
  const c = codecForType(header.type);
  if (c === undefined) {
    throw new FormatError(
      `filter type id ${header.type} is known but this build has no decoder for it`,
    );
  }
  return c.decode(view, options) as unknown as ReadonlyMembershipFilter<K>;
}

/** Reads what `JSON.stringify(filter)` wrote (`{ format: 'bloomkit', type, base64 }`). */
export function fromJSON<K extends Key = Key>(json: unknown): ReadonlyMembershipFilter<K> {
  const value = typeof json === 'string' ? (JSON.parse(json) as unknown) : json;
  if (
    value === null ||
    typeof value !== 'object' ||
    (value as { format?: unknown }).format !== 'bloomkit' ||
    typeof (value as { base64?: unknown }).base64 !== 'string'
  ) {
    throw mustBe(
      'json',
      `{ format: 'bloomkit', base64 } as filter.toJSON() writes`,
      value,
      TypeError,
    );
  }
  return fromBytes<K>(fromBase64((value as { base64: string }).base64));
}

/**
 * What a person wants to know about a filter of any native type (shape, fill, estimated count,
 * rate), as JSON-safe facts, plus its native type id and size in bytes.
 */
export function describeFilter(filter: object): FilterFacts & { typeId: number } {
  const c = codecOf(filter);
  if (c === undefined) {
    throw mustBe('filter', 'a bloomkit filter', filter, TypeError);
  }
  return { ...c.describe(filter), typeId: c.typeId };
}
