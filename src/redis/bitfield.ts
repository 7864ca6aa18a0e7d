/**
 * The BITFIELD commands of the Redis store's hot paths, built with as little work per key as
 * possible: the first attempt of a bloom or counting add (one plain `BITFIELD` that reads the
 * header before it writes: scripts.ts, "Fast path") and the reads of bits, counters and cuckoo
 * slots (one `BITFIELD_RO` with the header). A key alone gets its own command; a window of keys
 * (`addBatch`, `readBatch`) gets one per shard, carrying the cells of all of that shard's keys
 * in window order (`sendGrouped`). Each command's arguments are one array of its exact length;
 * only the cell offsets are new strings (decimal.ts: made without the engine's number cache).
 *
 *   set bits:      BITFIELD    key GET u32 0 GET u32 32 SET u1 <64 + o> 1 ...
 *   add counters:  BITFIELD    key GET u32 0 GET u32 32 OVERFLOW SAT INCRBY u4 #<16 + c> 1 ...
 *   read bits:     BITFIELD_RO key GET u32 0 GET u32 32 GET u1 <64 + o> ...
 *   read counters: BITFIELD_RO key GET u32 0 GET u32 32 GET u4 #<16 + c> ...
 *   read slots:    BITFIELD_RO key GET u32 0 GET u32 32 GET u16 #<4 + s> ...
 *
 * A reply is `[id, gen, value per cell...]` (docs/FORMAT.md: the header is two big-endian u32s).
 */

import { settleAll } from '../sharded/ops.js';
import {
  type CellBatch,
  type Epoch,
  REPLY,
  type ReadCells,
  type ShardRead,
  type WriteReply,
} from '../sharded/store.js';
import type { CommandClient } from './client.js';
import { cellIndex, decimal } from './decimal.js';
import { HEADER_BITS } from './scripts.js';

/** One command shape of the table above. */
export interface BitfieldShape {
  readonly command: 'BITFIELD' | 'BITFIELD_RO';
  /** Arguments after the header reads (`OVERFLOW SAT`). */
  readonly extra: readonly string[];
  readonly op: 'SET' | 'INCRBY' | 'GET';
  readonly type: 'u1' | 'u4' | 'u16';
  /** Cells before the first cell of the shard (the header), added to every offset. */
  readonly shift: number;
  /** Whether offsets are in cells (`#c`, counters) rather than bits. */
  readonly cellOffsets: boolean;
  /** The argument after each offset (`1`), or null. */
  readonly value: string | null;
  /** For a write: the reply value that says the key was new (old bit 0, new counter 1). */
  readonly fresh: number;
}

export const SET_BITS: BitfieldShape = {
  command: 'BITFIELD',
  extra: [],
  op: 'SET',
  type: 'u1',
  shift: HEADER_BITS,
  cellOffsets: false,
  value: '1',
  fresh: 0,
};

export const ADD_COUNTERS: BitfieldShape = {
  command: 'BITFIELD',
  extra: ['OVERFLOW', 'SAT'],
  op: 'INCRBY',
  type: 'u4',
  shift: HEADER_BITS / 4,
  cellOffsets: true,
  value: '1',
  fresh: 1,
};

export const READ_BITS: BitfieldShape = {
  command: 'BITFIELD_RO',
  extra: [],
  op: 'GET',
  type: 'u1',
  shift: HEADER_BITS,
  cellOffsets: false,
  value: null,
  fresh: -1,
};

export const READ_COUNTERS: BitfieldShape = {
  ...READ_BITS,
  type: 'u4',
  shift: HEADER_BITS / 4,
  cellOffsets: true,
};

/** Cuckoo slots (16-bit fingerprints), read as `readBuckets` reads them. */
export const READ_SLOTS: BitfieldShape = {
  ...READ_BITS,
  type: 'u16',
  shift: HEADER_BITS / 16,
  cellOffsets: true,
};

/** The read shape of each kind of cell a batch read reads. */
export const READS: Readonly<Record<ReadCells, BitfieldShape>> = {
  bits: READ_BITS,
  counters: READ_COUNTERS,
  slots: READ_SLOTS,
};

/** `BITFIELD` or `BITFIELD_RO` of `key` that reads the header first. */
export function withHeader(command: string, key: string): string[] {
  return [command, key, 'GET', 'u32', '0', 'GET', 'u32', '32'];
}

/**
 * A new argument array of `shape` on shard `ref` for `cells` cells, of its exact length: the
 * header reads and the extra arguments written, the cells' arguments left to the caller.
 */
function commandHead(shape: BitfieldShape, ref: string, cells: number): string[] {
  const extra = shape.extra;
  const args = new Array<string>(8 + extra.length + (shape.value === null ? 3 : 4) * cells);
  args[0] = shape.command;
  args[1] = ref;
  args[2] = 'GET';
  args[3] = 'u32';
  args[4] = '0';
  args[5] = 'GET';
  args[6] = 'u32';
  args[7] = '32';
  for (let i = 0; i < extra.length; i++) args[8 + i] = extra[i]!;
  return args;
}

/** The arguments of `shape` on shard `ref` for cells[from, to). */
export function bitfieldArgs(
  shape: BitfieldShape,
  ref: string,
  cells: ArrayLike<number>,
  from: number,
  to: number,
): string[] {
  const args = commandHead(shape, ref, to - from);
  let p = 8 + shape.extra.length;
  const { op, type, shift, value } = shape;
  for (let j = from; j < to; j++) {
    args[p++] = op;
    args[p++] = type;
    const offset = cells[j]! + shift;
    args[p++] = shape.cellOffsets ? cellIndex(offset) : decimal(offset);
    if (value !== null) args[p++] = value;
  }
  return args;
}

/** A reply as numbers, in place (integers come as numbers, strings or bigints by client settings). */
export function numbers(reply: unknown): number[] {
  const out = reply as unknown[] as number[];
  for (let i = 0; i < out.length; i++) if (typeof out[i] !== 'number') out[i] = Number(out[i]);
  return out;
}

/**
 * What a fast write's reply (`[id, gen, values...]`, see the module comment) means for a write
 * planned for `epoch` (its id as the number `id`): the 0/1 result if it landed in `epoch`,
 * `Landed` if in another generation of the filter, `REPLY.replaced` if in another filter's
 * shard, `REPLY.lost` if the shard was missing (the caller must then delete the header-less
 * string the write left: DROP_ORPHAN).
 */
export function fastReply(
  shape: BitfieldShape,
  reply: number[],
  id: number,
  epoch: Epoch,
): WriteReply {
  return fastReplyAt(shape, reply, 2, reply.length - 2, id, epoch);
}

/** {@link fastReply} of the header `reply[0, 2)` and the cells `reply[at, at + count)`. */
export function fastReplyAt(
  shape: BitfieldShape,
  reply: readonly number[],
  at: number,
  count: number,
  id: number,
  epoch: Epoch,
): WriteReply {
  if (reply[0] === 0) return REPLY.lost;
  if (reply[0] !== id) return REPLY.replaced;
  let result: 0 | 1 = 0;
  const fresh = shape.fresh;
  for (let i = at; i < at + count; i++) {
    if (reply[i] === fresh) {
      result = 1;
      break;
    }
  }
  const gen = reply[1]!;
  return gen === epoch.gen ? result : { gen, result };
}

/** The most cells one grouped command of a window carries (a longer run is split). */
export const GROUP_CELLS = 4096;

/** The keys of a window that one command serves: all in shard `ref`, in window order. */
export interface Group {
  readonly ref: string;
  /** Cells of the group's keys. */
  cells: number;
  /** Keys in the group. */
  keys: number;
}

/**
 * The keys of `batch` grouped by shard, in order of first appearance, each group's keys in window
 * order; a group is closed at {@link GROUP_CELLS} cells and a new one opened for the same shard.
 * `groupOf[i]` gets key i's group. One object per group, none per key.
 */
export function groupByShard(batch: CellBatch, groupOf: Uint32Array): Group[] {
  const open = new Map<string, number>();
  const groups: Group[] = [];
  const { refs, starts, k } = batch;
  for (let i = 0; i < batch.count; i++) {
    const ref = refs[i]!;
    const cells = starts === undefined ? k : starts[i + 1]! - starts[i]!;
    let g = open.get(ref);
    if (g === undefined || groups[g]!.cells + cells > GROUP_CELLS) {
      g = groups.length;
      open.set(ref, g);
      groups.push({ ref, cells: 0, keys: 0 });
    }
    const group = groups[g]!;
    group.cells += cells;
    group.keys++;
    groupOf[i] = g;
  }
  return groups;
}

/**
 * The `shape` command of every group (groupByShard), its arguments written key by key in window
 * order straight from `batch.cells`: one array of its exact length per command, no other array.
 */
function groupArgs(
  shape: BitfieldShape,
  batch: CellBatch,
  groups: readonly Group[],
  groupOf: Uint32Array,
): string[][] {
  const all = new Array<string[]>(groups.length);
  const at = new Uint32Array(groups.length).fill(8 + shape.extra.length);
  for (let g = 0; g < groups.length; g++)
    all[g] = commandHead(shape, groups[g]!.ref, groups[g]!.cells);
  const { op, type, shift, value, cellOffsets } = shape;
  const { cells, starts, k } = batch;
  for (let i = 0; i < batch.count; i++) {
    const g = groupOf[i]!;
    const args = all[g]!;
    let p = at[g]!;
    const from = starts === undefined ? i * k : starts[i]!;
    const to = starts === undefined ? from + k : starts[i + 1]!;
    for (let c = from; c < to; c++) {
      args[p++] = op;
      args[p++] = type;
      const offset = cells[c]! + shift;
      args[p++] = cellOffsets ? cellIndex(offset) : decimal(offset);
      if (value !== null) args[p++] = value;
    }
    at[g] = p;
  }
  return all;
}

/**
 * Builds and sends the command of every group (`replies[g]` gets group g's reply); resolves to the
 * first failure. Apart from the caller's: no argument outlives the client's encoding of it (the
 * young-generation collector copies whatever is still referenced when it runs).
 */
function sendAll(
  client: CommandClient,
  shape: BitfieldShape,
  readonly: boolean,
  batch: CellBatch,
  groups: readonly Group[],
  groupOf: Uint32Array,
  replies: unknown[],
): Promise<unknown> {
  const commands = groupArgs(shape, batch, groups, groupOf);
  return settleAll(
    groups.length,
    (g) => client.send(groups[g]!.ref, readonly, commands[g]!),
    replies,
  );
}

/**
 * Sends one `shape` command per group of `batch` (groupByShard), all in one turn, and hands each
 * key its part of its group's reply in place: `each(i, values, at, count)`, key i's cells being
 * `values[at, at + count)` after the header `values[0, 2)` (`[id, gen, value per cell...]`, as
 * one command per key would answer, since a `BITFIELD` is atomic and runs its operations in
 * order: a key repeated in a window sees its own earlier write). Resolves to the first failure;
 * the keys of a failed command get no call.
 */
async function sendGrouped(
  client: CommandClient,
  shape: BitfieldShape,
  readonly: boolean,
  batch: CellBatch,
  each: (i: number, values: number[], at: number, count: number) => void,
): Promise<unknown> {
  const groupOf = new Uint32Array(batch.count);
  const groups = groupByShard(batch, groupOf);
  const replies = new Array<unknown>(groups.length);
  const failure = await sendAll(client, shape, readonly, batch, groups, groupOf, replies);
  const values = new Array<number[] | undefined>(groups.length);
  for (let g = 0; g < groups.length; g++) {
    const reply = replies[g];
    if (reply !== undefined) values[g] = numbers(reply);
  }
  const at = new Uint32Array(groups.length).fill(2);
  const { starts, k } = batch;
  for (let i = 0; i < batch.count; i++) {
    const g = groupOf[i]!;
    const count = starts === undefined ? k : starts[i + 1]! - starts[i]!;
    const v = values[g];
    if (v !== undefined) each(i, v, at[g]!, count);
    at[g]! += count;
  }
  return failure;
}

/**
 * The first adds of a window (`ShardStore.addBatch`): one `shape` BITFIELD per shard of `batch`
 * with the cells of its keys in window order (sendGrouped), all sent in one turn, then each key's
 * reply checked (`fastReply`); `drop` deletes the header-less string a write left in a missing
 * shard. `out[i]` gets key i's reply (`undefined` if its command failed); resolves to the first
 * failure.
 */
export async function sendAdds(
  client: CommandClient,
  drop: (ref: string) => Promise<unknown>,
  shape: BitfieldShape,
  batch: CellBatch,
  epoch: Epoch,
  out: (WriteReply | undefined)[],
): Promise<unknown> {
  const id = Number(epoch.id);
  let orphans: Set<string> | undefined;
  let failure = await sendGrouped(client, shape, false, batch, (i, values, at, count) => {
    const r = fastReplyAt(shape, values, at, count, id, epoch);
    if (r === REPLY.lost) {
      orphans ??= new Set();
      orphans.add(batch.refs[i]!);
    }
    out[i] = r;
  });
  for (const ref of orphans ?? []) {
    try {
      await drop(ref);
    } catch (err) {
      failure ??= err;
    }
  }
  return failure;
}

/**
 * The reads of a window (`ShardStore.readBatch`): one `shape` BITFIELD_RO per shard of `batch`
 * (sendGrouped), all in one turn.
 */
export function sendReads(
  client: CommandClient,
  shape: BitfieldShape,
  batch: CellBatch,
  out: (ShardRead | undefined)[],
): Promise<unknown> {
  return sendGrouped(client, shape, true, batch, (i, values, at, count) => {
    if (at === 2 && count === values.length - 2) {
      out[i] = values;
      return;
    }
    const read = values.slice(at - 2, at + count);
    read[0] = values[0]!;
    read[1] = values[1]!;
    out[i] = read;
  });
}
