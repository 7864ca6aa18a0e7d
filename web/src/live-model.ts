/**
 * What the live filter shows, read from a real filter through its public API only:
 * the cells (bits, counters or fingerprint slots), where a key lands, and why `has` answers as
 * it does.
 *
 * Where a key lands is never recomputed here: the classic and counting filters give their
 * positions (`indexesOf`). The blocked and split-block filters have no such method, so a key is
 * added to an empty filter of the same shape and the bits it set are read back; that is exactly
 * what `add` touches. A cuckoo key is added to an empty table five times: the first four copies
 * fill its first bucket, the fifth goes to its second bucket, which reveals both buckets and the
 * fingerprint.
 */

import type { MembershipFilter } from '../../src/index.js';
import { liveCells, makeFilter, type Shape } from './kinds.js';

/** Where a key lands: bit (or counter) positions, or a cuckoo fingerprint and its buckets. */
export type Landing =
  | { kind: 'bits'; positions: number[] }
  | { kind: 'fingerprint'; fingerprint: number; buckets: [number, number] };

/** The cell values: 0/1 bits, counter values, or cuckoo slot fingerprints (0 = empty). */
export function cells(filter: MembershipFilter, shape: Shape): Uint32Array {
  return liveCells(shape.kind).values(filter);
}

/** Where `key` lands in a filter of `shape`. */
export function landing(shape: Shape, key: string): Landing {
  const scratch = makeFilter(shape);
  const live = liveCells(shape.kind);
  if ('indexesOf' in scratch && typeof scratch.indexesOf === 'function') {
    return { kind: 'bits', positions: (scratch.indexesOf as (key: string) => number[])(key) };
  }
  if (live.unit === 'slot') {
    for (let i = 0; i < 5; i++) scratch.add(key);
    const slots = live.values(scratch);
    let first = -1;
    let second = -1;
    for (let s = 0; s < slots.length; s++) {
      if (slots[s] === 0) continue;
      const bucket = s >>> 2;
      if (first === -1) first = bucket;
      else if (bucket !== first) second = bucket;
    }
    // Insertion order: four copies fill the first bucket (lower or higher index), the fifth
    // opens the second. Tell them apart by the count: the first bucket holds four.
    const count = (b: number): number =>
      slots.slice(b * 4, b * 4 + 4).filter((x) => x !== 0).length;
    if (second !== -1 && count(second) === 4) [first, second] = [second, first];
    return {
      kind: 'fingerprint',
      fingerprint: slots.find((x) => x !== 0)!,
      buckets: [first, second],
    };
  }
  scratch.add(key);
  const values = live.values(scratch);
  const positions: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] !== 0) positions.push(i);
  return { kind: 'bits', positions };
}

/** One probed position and what the filter holds there. */
export interface Probe {
  readonly position: number;
  readonly value: number;
}

export interface Why {
  readonly answer: boolean;
  /** Each probed cell (bits/counters) or each bucket's slots (cuckoo). */
  readonly probes: readonly Probe[];
  readonly sentence: string;
}

/** Why `filter.has(key)` answers as it does, in terms of the cells it reads. */
export function explain(filter: MembershipFilter, shape: Shape, key: string): Why {
  const answer = filter.has(key);
  const where = landing(shape, key);
  const values = cells(filter, shape);
  if (where.kind === 'fingerprint') {
    const [b1, b2] = where.buckets;
    const probes: Probe[] = [];
    for (const b of [b1, b2])
      for (let j = 0; j < 4; j++) probes.push({ position: b * 4 + j, value: values[b * 4 + j]! });
    const fp = `0x${where.fingerprint.toString(16)}`;
    const sentence = answer
      ? `Maybe: fingerprint ${fp} is stored in bucket ${b1} or ${b2}.`
      : `Certainly not: neither bucket ${b1} nor bucket ${b2} holds fingerprint ${fp}.`;
    return { answer, probes, sentence };
  }
  const probes = where.positions.map((position) => ({ position, value: values[position]! }));
  const unit = liveCells(shape.kind).unit;
  const empty = probes.filter((p) => p.value === 0);
  const sentence =
    empty.length > 0
      ? `Certainly not: ${unit} ${empty.map((p) => p.position).join(', ')} ${empty.length === 1 ? 'is' : 'are'} 0, and adding the key would have set ${empty.length === 1 ? 'it' : 'them'}.`
      : `Maybe: all ${probes.length} ${unit}s it maps to are set.`;
  return { answer, probes, sentence };
}
