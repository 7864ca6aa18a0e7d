/**
 * `MemoryShardStore`: the shard store (store.ts) in this process's memory, browser-safe. It keeps
 * every promise of the interface: each operation runs to completion before it returns (nothing
 * else runs in between, so it is atomic), every write checks the shard's header against the epoch
 * the filter planned it for, and a filter with a TTL expires by the store's clock (`now`,
 * injectable), its metadata and shards together. The bytes of a shard are laid out as the Redis
 * store lays them (store.ts), so `toBytes()` gives the same export from either store.
 *
 * Uses: tests and demos of the stored filters without a server, one process sharing filters
 * between its parts, and the reference a new store is checked against (the conformance suite runs
 * on it). It was written by following docs/ARCHITECTURE.md, "Adding a store".
 */

import { show } from '../errors.js';
import type { Cells } from './cells.js';
import {
  addCounters,
  bucketSlots,
  countBits,
  cuckooAdd,
  cuckooRemove,
  getBit,
  getCounter,
  getSlot,
  orBytes,
  removeCounters,
  setBits,
} from './cells.js';
import { STORED_ERRORS, StoredFilterMismatchError, StoreErrorNames } from './errors.js';
import type {
  Epoch,
  Landed,
  Meta,
  MetaFields,
  MetaUpdate,
  ShardHeader,
  ShardKind,
  ShardRead,
  ShardStore,
  WriteReply,
} from './store.js';
import { type GuardedReply, REPLY } from './store.js';

/** Options of {@link MemoryShardStore}. */
export interface MemoryShardStoreOptions {
  /** The clock, ms since the epoch, for TTLs; default `Date.now`. */
  now?: () => number;
}

interface Shard extends Cells {
  id: number;
  gen: number;
  expireAt: number | undefined;
  /** Scalable: keys taken, and whether the shard is sealed. */
  count: number;
  sealed: boolean;
}

interface StoredMeta {
  fields: Meta;
  expireAt: number | undefined;
}

export class MemoryShardStore extends StoreErrorNames implements ShardStore {
  readonly noun = 'stored filter';
  private readonly now: () => number;
  private readonly metas = new Map<string, StoredMeta>();
  private readonly shards = new Map<string, Shard>();

  constructor(options: MemoryShardStoreOptions = {}) {
    super(STORED_ERRORS, StoredFilterMismatchError);
    const now = options.now ?? Date.now;
    if (typeof now !== 'function') {
      throw new TypeError(`options.now must be a function, got ${show(now)}`);
    }
    this.now = now;
  }

  notReady(): string | null {
    return null;
  }

  /** Nothing evicts this store's data. */
  async checkDurability(): Promise<void> {}

  async createMeta(
    name: string,
    fields: MetaFields,
    ttl: number | undefined,
  ): Promise<{ created: boolean; meta: Meta }> {
    const existing = this.meta(name);
    if (existing !== undefined) return { created: false, meta: { ...existing.fields } };
    const stored: StoredMeta = { fields: { ...fields }, expireAt: undefined };
    if (ttl !== undefined) {
      stored.expireAt = this.now() + ttl;
      stored.fields.expireAt = String(stored.expireAt);
    }
    this.metas.set(name, stored);
    return { created: true, meta: { ...stored.fields } };
  }

  async readMeta(name: string): Promise<Meta | undefined> {
    const m = this.meta(name);
    return m === undefined ? undefined : { ...m.fields };
  }

  async setMetaField(name: string, id: string, field: string, value: string): Promise<number> {
    const m = this.meta(name);
    if (m === undefined) return 0;
    if (m.fields.id !== id) return REPLY.replaced;
    m.fields[field] = value;
    return 1;
  }

  async newGeneration(name: string, id: string, dropLayers: boolean): Promise<MetaUpdate> {
    const m = this.meta(name);
    if (m === undefined) return { code: 0 };
    if (m.fields.id !== id) return { code: REPLY.replaced };
    m.fields.gen = String(Number(m.fields.gen) + 1);
    if (dropLayers) {
      for (let i = 1; i < Number(m.fields.layers); i++) delete m.fields[`layer:${i}`];
      m.fields.layers = '1';
    }
    return { code: 1, meta: { ...m.fields } };
  }

  async appendLayer(name: string, epoch: Epoch, count: number, spec: string): Promise<MetaUpdate> {
    const m = this.meta(name);
    if (m === undefined || m.fields.layers === undefined) return { code: 0 };
    if (m.fields.id !== epoch.id) return { code: REPLY.replaced };
    if (m.fields.layers === String(count) && m.fields.gen === String(epoch.gen)) {
      m.fields[`layer:${count}`] = spec;
      m.fields.layers = String(count + 1);
    }
    return { code: 1, meta: { ...m.fields } };
  }

  async deleteMeta(name: string): Promise<void> {
    this.metas.delete(name);
  }

  shardRef(kind: ShardKind, name: string, shard: number, layer = 0): string {
    // Names hold no braces, so the braces delimit the name.
    return kind === 'scalable' ? `${kind}{${name}}${layer}:${shard}` : `${kind}{${name}}${shard}`;
  }

  async initShard(ref: string, epoch: Epoch, expireAt: number | undefined): Promise<boolean> {
    const id = Number(epoch.id);
    const s = this.shard(ref);
    if (s !== undefined && s.id === id && s.gen >= epoch.gen) return false;
    if (s !== undefined && s.id === id) reset(s, epoch.gen);
    else {
      const fresh = { id, gen: epoch.gen, bytes: new Uint8Array(0), expireAt, count: 0 };
      this.shards.set(ref, { ...fresh, sealed: false });
    }
    return true;
  }

  async deleteShards(refs: readonly string[]): Promise<void> {
    for (const ref of refs) this.shards.delete(ref);
  }

  async dropShard(ref: string, epoch: Epoch): Promise<boolean> {
    const s = this.shard(ref);
    if (s !== undefined && String(s.id) === epoch.id && s.gen >= epoch.gen) return false;
    this.shards.delete(ref);
    return true;
  }

  /** One atomic step whatever `first` says: never {@link Landed}. */
  async setBits(
    ref: string,
    epoch: Epoch,
    cells: ArrayLike<number>,
    _first?: boolean,
  ): Promise<WriteReply> {
    return this.write(ref, epoch, (s) => setBits(s, cells));
  }

  async readBits(ref: string, cells: ArrayLike<number>): Promise<ShardRead> {
    return this.read(ref, cells, getBit);
  }

  async countBits(ref: string): Promise<number> {
    const s = this.shard(ref);
    return s === undefined ? 0 : countBits(s);
  }

  /** One atomic step whatever `first` says: never {@link Landed}. */
  async addCounters(
    ref: string,
    epoch: Epoch,
    cells: ArrayLike<number>,
    _first?: boolean,
  ): Promise<WriteReply> {
    return this.write(ref, epoch, (s) => addCounters(s, cells));
  }

  async removeCounters(ref: string, epoch: Epoch, cells: ArrayLike<number>): Promise<GuardedReply> {
    return this.write(ref, epoch, (s) => removeCounters(s, cells));
  }

  async readCounters(ref: string, cells: ArrayLike<number>): Promise<ShardRead> {
    return this.read(ref, cells, getCounter);
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
    return this.write(ref, epoch, (s) => cuckooAdd(s, f, i1, i2, buckets, maxKicks));
  }

  async cuckooRemove(
    ref: string,
    epoch: Epoch,
    f: number,
    i1: number,
    i2: number,
  ): Promise<GuardedReply> {
    return this.write(ref, epoch, (s) => cuckooRemove(s, f, i1, i2));
  }

  async readBuckets(ref: string, i1: number, i2: number): Promise<ShardRead> {
    return this.read(ref, bucketSlots(i1, i2), getSlot);
  }

  async scalableAdd(
    ref: string,
    epoch: Epoch,
    share: number,
    cells: ArrayLike<number>,
  ): Promise<GuardedReply> {
    return this.write(ref, epoch, (s) => {
      if (s.sealed || s.count >= share) return REPLY.full;
      const fresh = setBits(s, cells);
      s.count += fresh;
      return fresh;
    });
  }

  async seal(ref: string, epoch: Epoch): Promise<GuardedReply> {
    return this.write(ref, epoch, (s) => {
      s.sealed = true;
      return 1;
    });
  }

  async layerState(ref: string): Promise<{ count: number; sealed: boolean }> {
    const s = this.shard(ref);
    return { count: s?.count ?? 0, sealed: s?.sealed ?? false };
  }

  async readShard(ref: string, into: Uint8Array): Promise<ShardHeader> {
    const s = this.shard(ref);
    into.fill(0);
    if (s === undefined) return { id: 0, gen: 0 };
    into.set(s.bytes.subarray(0, Math.min(into.length, s.bytes.length)));
    return { id: s.id, gen: s.gen };
  }

  async orShard(ref: string, epoch: Epoch, bytes: Uint8Array): Promise<number> {
    return this.write(ref, epoch, (s) => {
      orBytes(s, bytes);
      return 1;
    });
  }

  /** The metadata of `name`, unless missing or expired (then dropped). */
  private meta(name: string): StoredMeta | undefined {
    const m = this.metas.get(name);
    if (m?.expireAt !== undefined && this.now() >= m.expireAt) {
      this.metas.delete(name);
      return undefined;
    }
    return m;
  }

  /** Shard `ref`, unless missing or expired (then dropped). */
  private shard(ref: string): Shard | undefined {
    const s = this.shards.get(ref);
    if (s?.expireAt !== undefined && this.now() >= s.expireAt) {
      this.shards.delete(ref);
      return undefined;
    }
    return s;
  }

  /**
   * A guarded write: the epoch check of store.ts (a shard of an older generation is reset first),
   * then `write` on the shard, all before returning.
   */
  private write(ref: string, epoch: Epoch, write: (s: Shard) => GuardedReply): GuardedReply {
    const s = this.shard(ref);
    if (s === undefined) return REPLY.lost;
    if (String(s.id) !== epoch.id) return REPLY.replaced;
    if (s.gen > epoch.gen) return REPLY.cleared;
    if (s.gen < epoch.gen) reset(s, epoch.gen);
    return write(s);
  }

  /** Header then `get(shard, cell)` of every cell; zeros for a missing shard. */
  private read(
    ref: string,
    cells: ArrayLike<number>,
    get: (s: Shard, cell: number) => number,
  ): ShardRead {
    const s = this.shard(ref);
    const out = new Array<number>(2 + cells.length).fill(0);
    if (s === undefined) return out;
    out[0] = s.id;
    out[1] = s.gen;
    for (let i = 0; i < cells.length; i++) out[2 + i] = get(s, cells[i]!);
    return out;
  }
}

/** Empties a shard into generation `gen` (its expiry kept). */
function reset(s: Shard, gen: number): void {
  s.gen = gen;
  s.bytes = new Uint8Array(0);
  s.count = 0;
  s.sealed = false;
}
