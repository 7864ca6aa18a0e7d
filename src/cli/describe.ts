/**
 * The facts `info` and `create` print about a filter: its type, shape, key encoding, how full it
 * is and its false positive rate now, as plain text (one `name: value` per line) or JSON.
 */

import type { ReadonlyMembershipFilter } from '../filters/filter.js';
import {
  BinaryFuseFilter,
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  FilterCascade,
  ScalableBloomFilter,
  SplitBlockBloomFilter,
} from '../index.js';
import type { CliIo } from './command.js';

export type Facts = Record<string, string | number | boolean | null | readonly unknown[] | object>;

/** The `format` fact of a filter file the command writes, one name for `create` and `info`. */
export const FORMAT_LABELS = { native: 'bloomkit native', guava: 'Guava writeTo' } as const;

/** Type names by class (not `constructor.name`, which a bundler may rename). */
const TYPE_NAMES: readonly [(filter: object) => boolean, string][] = [
  [(f) => f instanceof BloomFilter, 'classic'],
  [(f) => f instanceof BlockedBloomFilter, 'blocked'],
  [(f) => f instanceof SplitBlockBloomFilter, 'split-block'],
  [(f) => f instanceof CountingBloomFilter, 'counting'],
  [(f) => f instanceof ScalableBloomFilter, 'scalable'],
  [(f) => f instanceof CuckooFilter, 'cuckoo'],
  [(f) => f instanceof FilterCascade, 'cascade'],
  [(f) => f instanceof BinaryFuseFilter, 'binary-fuse'],
];

/** The CLI's name for the type of `filter` (`--type` values). */
export function typeName(filter: object): string {
  for (const [is, name] of TYPE_NAMES) if (is(filter)) return name;
  return filter.constructor.name;
}

/** Properties worth showing, in order, when a filter has them (name shown -> property). */
const SHAPE: readonly [string, string][] = [
  ['bits', 'bitSize'],
  ['hashes', 'hashes'],
  ['blocks', 'blocks'],
  ['strategy', 'strategy'],
  ['parquetType', 'type'],
  ['counters', 'counterSize'],
  ['slots', 'slotCount'],
  ['fingerprintBits', 'fingerprintBits'],
  ['layers', 'layerCount'],
  ['capacity', 'capacity'],
  ['designFpp', 'fpp'],
  ['keys', 'size'],
  ['bitsSet', 'bitCount'],
  ['loadFactor', 'loadFactor'],
];

function round(value: number): number {
  return Number.isInteger(value) ? value : Number(value.toPrecision(6));
}

/** The facts of an in-memory filter. */
export function describeFilter(filter: ReadonlyMembershipFilter): Facts {
  const f = filter as unknown as Record<string, unknown>;
  const facts: Facts = { type: typeName(filter), funnel: filter.funnel };
  for (const [name, property] of SHAPE) {
    const value = f[property];
    if (typeof value === 'number' || typeof value === 'string') {
      facts[name] = typeof value === 'number' ? round(value) : value;
    }
  }
  facts.estimatedCount = Math.round(filter.estimatedCount());
  if (typeof f.expectedFpp === 'function')
    facts.currentFpp = round((f.expectedFpp as () => number).call(filter));
  if (typeof f.bitSize === 'number' && typeof facts.bitsSet === 'number') {
    facts.fillRatio = round(facts.bitsSet / (f.bitSize as number));
  }
  const bytes =
    f.byteLength ?? (typeof f.bitSize === 'number' ? (f.bitSize as number) / 8 : undefined);
  if (typeof bytes === 'number') facts.memoryBytes = bytes;
  if (Array.isArray(f.layers)) facts.layers = f.layers.length;
  if (typeof f.layers === 'function') {
    facts.layerList = (f.layers as () => unknown[]).call(filter);
  }
  return facts;
}

function formatValue(value: unknown): string {
  if (typeof value === 'number') {
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
      if (name === 'layerList') continue;
      lines.push(`${`${name}:`.padEnd(width + 2)}${formatValue(value)}`);
    }
  }
  io.stdout.write(`${lines.join('\n')}\n`);
}
