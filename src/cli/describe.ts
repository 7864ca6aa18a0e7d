/**
 * The facts `info` and `create` print about a filter: its type, shape, key encoding, how full it
 * is and its false positive rate now (its codec table row's `describe`), as plain text (one
 * `name: value` per line) or JSON.
 */

import type { ReadonlyMembershipFilter } from '../filters/filter.js';
import { codecOf } from '../formats/registry.js';
import type { CliIo } from './command.js';
import type { WritableFormat } from './filter-file.js';

export type Facts = Record<string, string | number | boolean | null | readonly unknown[] | object>;

/** The `format` fact of a filter file the command writes, one name for `create` and `info`. */
export const FORMAT_LABELS: Readonly<Record<WritableFormat, string>> = {
  native: 'bloomkit native',
  guava: 'Guava writeTo',
  dcso: 'DCSO bloom',
  'dcso-gzip': 'DCSO bloom (gzip)',
};

/** The type's name in the codec table (not `constructor.name`, which a bundler may rename). */
export function typeName(filter: object): string {
  return codecOf(filter)?.name ?? filter.constructor.name;
}

/** Numbers to 6 significant digits, also inside a fact's list or object (a scalable layer's). */
function round(value: unknown): unknown {
  if (typeof value === 'number') {
    return Number.isInteger(value) || !Number.isFinite(value)
      ? value
      : Number(value.toPrecision(6));
  }
  if (Array.isArray(value)) return value.map(round);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, v]) => [name, round(v)]));
  }
  return value;
}

/**
 * The facts of an in-memory filter: what its row of the codec table describes (type, funnel,
 * shape, fill, estimated count, rate now; the same data `describeFilter` of the library gives),
 * numbers to 6 significant digits.
 */
export function describeFilter(filter: ReadonlyMembershipFilter): Facts {
  const row = codecOf(filter);
  if (row === undefined) return { type: typeName(filter), funnel: filter.funnel };
  const facts: Facts = {};
  for (const [name, value] of Object.entries(row.describe(filter))) {
    facts[name] = round(value) as Facts[string];
  }
  return facts;
}

/** What the text output writes for a number the filter cannot give. */
export const NO_NUMBER = '—';

/**
 * One fact as text. A number the filter cannot give (a full filter's estimated count, ∞; an
 * inverted cascade's, NaN) is `—`, as the page writes it and as `--json` writes null: never
 * `Infinity` or `NaN` where a number is read.
 */
function formatValue(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return NO_NUMBER;
    return Number.isInteger(value) ? value.toLocaleString('en-US') : String(value);
  }
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Prints one block of facts per entry: JSON (one array) or `name: value` lines. */
export function printFacts(io: CliIo, entries: readonly Facts[], json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(entries.length === 1 ? entries[0] : entries, null, 2)}\n`);
    return;
  }
  const lines: string[] = [];
  for (const [i, entry] of entries.entries()) {
    if (i > 0) lines.push('');
    const width = Math.max(...Object.keys(entry).map((k) => k.length));
    for (const [name, value] of Object.entries(entry)) {
      lines.push(`${`${name}:`.padEnd(width + 2)}${formatValue(value)}`);
    }
  }
  io.stdout.write(`${lines.join('\n')}\n`);
}
