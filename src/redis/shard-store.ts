/**
 * `RedisShardStore`: the shard store (src/sharded/store.ts) in plain Redis (>= 6.2, no modules),
 * one server or a Redis Cluster, through a client library (client.ts). Keys are those of keys.ts,
 * the metadata a hash, each shard a string: the 8-byte header (`id` then `gen`, big-endian u32s,
 * what `BITFIELD GET u32 0` and `GET u32 32` read) and the cells from bit 64 (docs/FORMAT.md).
 *
 * Every guarded write is one Lua script of scripts.ts (header check and write in one atomic step)
 * or, for a first attempt at a bloom or counting add, one plain `BITFIELD` that reads the header
 * before it writes (scripts.ts, "Fast path": about a seventh of the script's server time); reads
 * are one `BITFIELD_RO` with the header (bitfield.ts builds both; a batch sends one per shard of
 * each window, and the scalable adds one script per shard: scalable-batch.ts).
 * Calls issued in one turn go out as one pipelined burst (a cluster client: one per node).
 */

import { FormatError, show } from '../errors.js';
import { bucketSlots } from '../sharded/cells.js';
import { StoreErrorNames } from '../sharded/errors.js';
import {
  type BatchCells,
  type CellBatch,
  type Epoch,
  type GuardedReply,
  guardedReply,
  type Meta,
  type MetaFields,
  type MetaUpdate,
  REPLY,
  type ReadCells,
  type ShardHeader,
  type ShardKind,
  type ShardRead,
  type ShardStore,
  type WriteReply,
} from '../sharded/store.js';
import {
  ADD_COUNTERS,
  type BitfieldShape,
  bitfieldArgs,
  fastReply,
  numbers,
  READ_BITS,
  READ_COUNTERS,
  READ_SLOTS,
  READS,
  SET_BITS,
  sendAdds,
  sendReads,
  withHeader,
} from './bitfield.js';
import { type CommandClient, commandClient, type RedisConnection } from './client.js';
import {
  checkDurabilityOption,
  checkEviction,
  checkPersistence,
  type Durability,
  type Persistence,
} from './durability.js';
import { REDIS_ERRORS, RedisFilterMismatchError } from './errors.js';
import { countKeyOf, layerCountKey, layerShardKey, metaKey, scratchKey, shardKey } from './keys.js';
import { toMeta } from './meta.js';
import { OnceRemoves } from './once.js';
import { sendScalableAdds } from './scalable-batch.js';
import { ScriptRunner } from './script-runner.js';
import {
  BLOOM_ADD,
  CLEAR_META,
  COUNTING_ADD,
  COUNTING_REMOVE,
  CREATE,
  CUCKOO_ADD,
  CUCKOO_REMOVE,
  DROP_ORPHAN,
  DROP_SHARD,
  HEADER_BITS,
  INIT_SHARD,
  type LuaScript,
  META_SET,
  OR_SHARD,
  SCALABLE_ADD,
  SCALABLE_GROW,
  SCALABLE_SEAL,
} from './scripts.js';

/** Reads shard bytes in chunks of this many bytes (GETRANGE), so no reply is huge. */
const READ_CHUNK = 8 * 1024 * 1024;
const HEADER_BYTES = HEADER_BITS / 8;
/** Counters (4 bits) before the first cell: `#` offsets skip the header. */
const HEADER_COUNTERS = HEADER_BITS / 4;

const LETTER = { bloom: 'b', counting: 'c', cuckoo: 'k' } as const;

export class RedisShardStore extends StoreErrorNames implements ShardStore {
  readonly noun = 'Redis filter';
  readonly client: CommandClient;
  private readonly scripts = new ScriptRunner((key, readonly, args) =>
    this.send(key, readonly, args),
  );
  private readonly removes: OnceRemoves; // applied at most once, however often sent: once.ts
  /**
   * `WAIT replicas timeout` on the connection of every shard in `refs` (one for a standalone
   * server, one per shard key on a cluster, routed as its writes were); the fewest replicas any
   * of them confirmed. `WAIT` counts the writes of its own connection only, so it is absent where
   * that is not the connection that wrote: a node-redis client pool (any of its connections may
   * have written) and an ioredis cluster (it cannot route a keyless command by key). A filter
   * there takes no `replicas` option.
   */
  readonly waitReplicas?: ShardStore['waitReplicas'];

  /** The weakest persistence of the masters, once `checkDurability` read it (durability.ts). */
  persistence: Persistence | undefined;
  constructor(
    connection: RedisConnection,
    /** Accept a server that may evict keys; what its persistence must be (store.ts: options). */
    readonly allowEviction = false,
    readonly durability: Durability = 'strict',
  ) {
    super(REDIS_ERRORS, RedisFilterMismatchError);
    this.client = commandClient(connection);
    this.removes = new OnceRemoves((...a) => this.eval(...a), this.client.resends);
    const pool = typeof (connection as { totalClients?: unknown }).totalClients === 'number';
    if (this.client.kind !== 'ioredis cluster' && !pool) {
      this.waitReplicas = async (refs, replicas, timeoutMs) => {
        const wait = ['WAIT', String(replicas), String(Math.ceil(timeoutMs))];
        const targets = this.client.isCluster ? refs : refs.slice(0, 1);
        const got = await Promise.all(targets.map((ref) => this.send(ref, false, wait)));
        return Math.min(...got.map(Number));
      };
    }
    checkDurabilityOption(durability, allowEviction);
  }

  /** Sends one command about `key` (the routing key on a cluster). Errors are not wrapped here. */
  send(key: string, readonly: boolean, args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.client.send(key, readonly, args);
  }

  /** Like `send`, with bulk-string replies as `Buffer`s (for binary values). */
  sendBinary(key: string, args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.client.sendBinary(key, args);
  }

  /** Runs `script` (EVALSHA, or EVAL after NOSCRIPT: script-runner.ts); keys in one slot. */
  eval(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | Buffer)[],
  ): Promise<unknown> {
    return this.scripts.run(script, keys, args);
  }

  notReady(): string | null {
    return this.client.notReady();
  }

  /** Refuses a master that may lose acknowledged writes or evict keys, per the options. */
  async checkDurability(label: string, hasTtl: boolean): Promise<void> {
    const masters = await this.client.masters();
    this.persistence = await checkPersistence(label, masters, this.durability);
    if (!this.allowEviction) await checkEviction(label, masters, hasTtl);
  }

  async createMeta(
    name: string,
    fields: MetaFields,
    ttl: number | undefined,
  ): Promise<{ created: boolean; meta: Meta }> {
    const args: string[] = [ttl === undefined ? '' : String(ttl)];
    for (const [field, value] of Object.entries(fields)) args.push(field, value);
    const reply = await this.eval(CREATE, [metaKey(name)], args);
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new FormatError(`unexpected reply to the create script: ${show(reply)}`);
    }
    return { created: Number(reply[0]) === 1, meta: toMeta(reply[1]) };
  }

  async readMeta(name: string): Promise<Meta | undefined> {
    const key = metaKey(name);
    const meta = toMeta(await this.send(key, true, ['HGETALL', key]));
    return Object.keys(meta).length === 0 ? undefined : meta;
  }

  async setMetaField(name: string, id: string, field: string, value: string): Promise<number> {
    return Number(await this.eval(META_SET, [metaKey(name)], [id, field, value]));
  }

  async newGeneration(name: string, id: string, dropLayers: boolean): Promise<MetaUpdate> {
    const args = [id, dropLayers ? '1' : '0'];
    return update((await this.eval(CLEAR_META, [metaKey(name)], args)) as unknown[]);
  }

  async appendLayer(name: string, epoch: Epoch, count: number, spec: string): Promise<MetaUpdate> {
    const args = [String(count), spec, epoch.id, String(epoch.gen)];
    return update((await this.eval(SCALABLE_GROW, [metaKey(name)], args)) as unknown[]);
  }

  async deleteMeta(name: string): Promise<void> {
    const key = metaKey(name);
    await this.send(key, false, ['DEL', key]);
  }

  shardRef(kind: ShardKind, name: string, shard: number, layer = 0): string {
    return kind === 'scalable'
      ? layerShardKey(name, layer, shard)
      : shardKey(LETTER[kind], name, shard);
  }

  async initShard(ref: string, epoch: Epoch, expireAt: number | undefined): Promise<boolean> {
    const count = countKeyOf(ref);
    const keys = count === undefined ? [ref] : [ref, count];
    const args = [epoch.id, String(epoch.gen), expireAt === undefined ? '' : String(expireAt)];
    return Number(await this.eval(INIT_SHARD, keys, args)) === 1;
  }

  /** One DEL per key (on a cluster they are in different slots), all sent in one turn. */
  async deleteShards(refs: readonly string[]): Promise<void> {
    const keys: string[] = [];
    for (const ref of refs) {
      keys.push(ref);
      const count = countKeyOf(ref);
      if (count !== undefined) keys.push(count);
    }
    await Promise.all(keys.map((key) => this.send(key, false, ['DEL', key])));
  }

  async dropShard(ref: string, epoch: Epoch): Promise<boolean> {
    const keys = [ref, layerCountKey(ref)];
    return Number(await this.eval(DROP_SHARD, keys, [epoch.id, String(epoch.gen)])) === 1;
  }

  setBits(
    ref: string,
    epoch: Epoch,
    cells: ArrayLike<number>,
    first: boolean,
  ): Promise<WriteReply> {
    if (first) return this.fast(ref, epoch, SET_BITS, cells);
    return this.eval(BLOOM_ADD, [ref], guarded(epoch, cells, HEADER_BITS)).then(guardedReply);
  }

  async readBits(ref: string, cells: ArrayLike<number>): Promise<ShardRead> {
    const args = bitfieldArgs(READ_BITS, ref, cells, 0, cells.length);
    return numbers(await this.send(ref, true, args));
  }

  /** A window of first adds as plain BITFIELDs (see `fast`), in one turn: bitfield.ts. */
  addBatch(
    cells: BatchCells,
    batch: CellBatch,
    epoch: Epoch,
    out: (WriteReply | undefined)[],
  ): Promise<unknown> {
    const shape = cells === 'bits' ? SET_BITS : ADD_COUNTERS;
    const drop = (ref: string) => this.eval(DROP_ORPHAN, [ref], []);
    return sendAdds(this.client, drop, shape, batch, epoch, out);
  }

  /** A window of reads (BITFIELD_RO with the header), in one turn: bitfield.ts. */
  readBatch(cells: ReadCells, batch: CellBatch, out: (ShardRead | undefined)[]): Promise<unknown> {
    return sendReads(this.client, READS[cells], batch, out);
  }

  async countBits(ref: string): Promise<number> {
    return Number(await this.send(ref, true, ['BITCOUNT', ref, String(HEADER_BYTES), '-1']));
  }

  addCounters(
    ref: string,
    epoch: Epoch,
    cells: ArrayLike<number>,
    first: boolean,
  ): Promise<WriteReply> {
    if (first) return this.fast(ref, epoch, ADD_COUNTERS, cells);
    const args = guarded(epoch, cells, HEADER_COUNTERS);
    return this.eval(COUNTING_ADD, [ref], args).then(guardedReply);
  }

  removeCounters(ref: string, epoch: Epoch, cells: ArrayLike<number>): Promise<GuardedReply> {
    const args = guarded(epoch, cells, HEADER_COUNTERS);
    return this.removes.send(COUNTING_REMOVE, ref, args).then(guardedReply);
  }

  async readCounters(ref: string, cells: ArrayLike<number>): Promise<ShardRead> {
    const args = bitfieldArgs(READ_COUNTERS, ref, cells, 0, cells.length);
    return numbers(await this.send(ref, true, args));
  }

  async cuckooAdd(
    ref: string,
    epoch: Epoch,
    f: number,
    i1: number,
    i2: number,
    buckets: number,
    maxKicks: number,
  ): Promise<GuardedReply> {
    const args = [epoch.id, String(epoch.gen), String(f), String(i1), String(i2), String(buckets)];
    return guardedReply(await this.eval(CUCKOO_ADD, [ref], [...args, String(maxKicks)]));
  }

  async cuckooRemove(
    ref: string,
    epoch: Epoch,
    f: number,
    i1: number,
    i2: number,
  ): Promise<GuardedReply> {
    const args = [epoch.id, String(epoch.gen), String(f), String(i1), String(i2)];
    return guardedReply(await this.removes.send(CUCKOO_REMOVE, ref, args));
  }

  async readBuckets(ref: string, i1: number, i2: number): Promise<ShardRead> {
    const slots = bucketSlots(i1, i2, new Array<number>(8), 0);
    return numbers(await this.send(ref, true, bitfieldArgs(READ_SLOTS, ref, slots, 0, 8)));
  }

  async scalableAdd(
    ref: string,
    epoch: Epoch,
    share: number,
    cells: ArrayLike<number>,
  ): Promise<GuardedReply> {
    const args = guarded(epoch, cells, HEADER_BITS, String(share), String(cells.length));
    return guardedReply(numbers(await this.eval(SCALABLE_ADD, [ref, layerCountKey(ref)], args))[0]);
  }

  /** A window of scalable adds, one script per shard: scalable-batch.ts. */
  scalableAddBatch(batch: CellBatch, epoch: Epoch, share: number, out: (number | undefined)[]) {
    return sendScalableAdds((...a) => this.eval(...a), batch, epoch, share, out);
  }

  async seal(ref: string, epoch: Epoch): Promise<GuardedReply> {
    return guardedReply(
      await this.eval(SCALABLE_SEAL, [ref, layerCountKey(ref)], [epoch.id, String(epoch.gen)]),
    );
  }

  async layerState(ref: string): Promise<{ count: number; sealed: boolean }> {
    const state = layerCountKey(ref);
    const r = (await this.send(state, true, ['HMGET', state, 'n', 'sealed'])) as unknown[];
    return { count: Number(r[0] ?? 0), sealed: r[1] !== null && r[1] !== undefined };
  }

  /** The header (one BITFIELD_RO), then the bytes in GETRANGE chunks of {@link READ_CHUNK}. */
  async readShard(ref: string, into: Uint8Array): Promise<ShardHeader> {
    const header = numbers(await this.send(ref, true, withHeader('BITFIELD_RO', ref)));
    for (let from = 0; from < into.length; from += READ_CHUNK) {
      const to = Math.min(into.length, from + READ_CHUNK);
      const range = ['GETRANGE', ref, String(HEADER_BYTES + from), String(HEADER_BYTES + to - 1)];
      const chunk = (await this.sendBinary(ref, range)) as Buffer;
      into.set(chunk.subarray(0, to - from), from);
      if (chunk.length < to - from) break; // the rest of the string does not exist: zeros
    }
    return { id: header[0]!, gen: header[1]! };
  }

  /** BITOP OR through a scratch key with the same hash tag, in one script (OR_SHARD). */
  async orShard(ref: string, epoch: Epoch, bytes: Uint8Array): Promise<number> {
    const value = Buffer.alloc(HEADER_BYTES + bytes.length);
    value.set(bytes, HEADER_BYTES);
    const keys = [ref, scratchKey(ref, epoch.id)];
    return Number(await this.eval(OR_SHARD, keys, [epoch.id, String(epoch.gen), value]));
  }

  /**
   * A fast write (plain BITFIELD reading the header first): the reply if it landed in `epoch`;
   * `Landed` if in another generation; on a missing shard the header-less string the write left
   * is deleted (DROP_ORPHAN) and the reply is `REPLY.lost`.
   */
  private async fast(
    ref: string,
    epoch: Epoch,
    shape: BitfieldShape,
    cells: ArrayLike<number>,
  ): Promise<WriteReply> {
    const args = bitfieldArgs(shape, ref, cells, 0, cells.length);
    const reply = numbers(await this.send(ref, false, args));
    const r = fastReply(shape, reply, Number(epoch.id), epoch);
    if (r === REPLY.lost) await this.eval(DROP_ORPHAN, [ref], []);
    return r;
  }
}

/** Script arguments: id, gen, `extra`, then `cells` shifted past the header. */
function guarded(
  epoch: Epoch,
  cells: ArrayLike<number>,
  header: number,
  ...extra: string[]
): string[] {
  const args = [epoch.id, String(epoch.gen), ...extra];
  for (let j = 0; j < cells.length; j++) args.push(String(cells[j]! + header));
  return args;
}

/** A metadata script's `{code, HGETALL}` reply. */
function update(reply: unknown[]): MetaUpdate {
  const code = Number(reply[0]);
  return code === 1 ? { code, meta: toMeta(reply[1]) } : { code };
}
