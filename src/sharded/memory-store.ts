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

import { FilterFullError, FormatError, show } from '../errors.js';
import {
  StoredFilterError,
  StoredFilterLostError,
  StoredFilterMismatchError,
  StoredFilterNotFoundError,
  StoredFilterStaleError,
  StoredFilterTimeoutError,
  type StoreErrorKind,
} from './errors.js';
import type {
  Epoch,
  Meta,
  MetaFields,
  MetaUpdate,
  ShardHeader,
  ShardKind,
  ShardRead,
  ShardStore,
  WriteReply,
} from './store.js';
import { REPLY } from './store.js';
import { altBucket } from './stored-cuckoo.js';

/** Options of {@link MemoryShardStore}. */
export interface MemoryShardStoreOptions {
  /** The clock, ms since the epoch, for TTLs; default `Date.now`. */
  now?: () => number;
}

interface Shard {
  id: number;
  gen: number;
  /** The cell bytes (grown on write; bytes past the end read 0). */
  bytes: Uint8Array;
  expireAt: number | undefined;
  /** Scalable: keys taken, and whether the shard is sealed. */
  count: number;
  sealed: boolean;
}

interface StoredMeta {
  fields: Meta;
  expireAt: number | undefined;
}

const ERRORS = {
  failed: StoredFilterError,
  timeout: StoredFilterTimeoutError,
  lost: StoredFilterLostError,
  stale: StoredFilterStaleError,
  notFound: StoredFilterNotFoundError,
} as const;

/** A guarded write's check: the shard, or the reply code that refuses the write. */
type Checked = Shard | number;

export class MemoryShardStore implements ShardStore {
  readonly noun = 'stored filter';
  private readonly now: () => number;
  private readonly metas = new Map<string, StoredMeta>();
  private readonly shards = new Map<string, Shard>();

  constructor(options: MemoryShardStoreOptions = {}) {
    const now = options.now ?? Date.now;
    if (typeof now !== 'function') {
      throw new TypeError(`options.now must be a function, got ${show(now)}`);
    }
    this.now = now;
  }

  /** Number of shards held (expired ones are dropped when met). */
  get size(): number {
    return this.shards.size;
  }

  notReady(): string | null {
    return null;
  }

  error(kind: StoreErrorKind, message: string, cause?: unknown): Error {
    return new ERRORS[kind](message, cause === undefined ? undefined : { cause });
  }

  mismatch(name: string, parameter: string, existing?: string, requested?: string): Error {
    return new StoredFilterMismatchError(name, parameter, existing, requested);
  }

  wrap(label: string, err: unknown): unknown {
    if (
      err instanceof StoredFilterError ||
      err instanceof FilterFullError ||
      err instanceof FormatError ||
      err instanceof TypeError ||
      err instanceof RangeError
    ) {
      return err;
    }
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return new StoredFilterError(`${label} failed: ${message}`, { cause: err });
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

  async setBits(ref: string, epoch: Epoch, cells: ArrayLike<number>): Promise<WriteReply> {
    const s = this.check(ref, epoch);
    return typeof s === 'number' ? s : setBits(s, cells);
  }

  async readBits(ref: string, cells: ArrayLike<number>): Promise<ShardRead> {
    return this.read(ref, cells, getBit);
  }

  async countBits(ref: string): Promise<number> {
    const s = this.shard(ref);
    let n = 0;
    if (s !== undefined) for (const b of s.bytes) for (let v = b; v !== 0; v &= v - 1) n++;
    return n;
  }

  async addCounters(ref: string, epoch: Epoch, cells: ArrayLike<number>): Promise<WriteReply> {
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    let fresh: 0 | 1 = 0;
    for (let i = 0; i < cells.length; i++) {
      const v = getCounter(s, cells[i]!);
      if (v === 0) fresh = 1;
      if (v < 15) setCounter(s, cells[i]!, v + 1);
    }
    return fresh;
  }

  async removeCounters(ref: string, epoch: Epoch, cells: ArrayLike<number>): Promise<number> {
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    const need = new Map<number, number>();
    for (let i = 0; i < cells.length; i++) need.set(cells[i]!, (need.get(cells[i]!) ?? 0) + 1);
    for (const [c, n] of need) {
      const v = getCounter(s, c);
      if (v < 15 && v < n) return 0;
    }
    for (const [c, n] of need) {
      const v = getCounter(s, c);
      if (v < 15) setCounter(s, c, v - n);
    }
    return 1;
  }

  async readCounters(ref: string, cells: ArrayLike<number>): Promise<ShardRead> {
    return this.read(ref, cells, getCounter);
  }

  /** The CUCKOO_ADD script of the Redis store, step for step (so both fill alike). */
  async cuckooAdd(
    ref: string,
    epoch: Epoch,
    fingerprint: number,
    i1: number,
    i2: number,
    buckets: number,
    maxKicks: number,
  ): Promise<number> {
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    let f = fingerprint;
    let fresh = 1;
    for (let k = 0; k < 4; k++) {
      if (getSlot(s, i1 * 4 + k) === f || getSlot(s, i2 * 4 + k) === f) fresh = 0;
    }
    for (const b of [i1, i2]) {
      const k = free(s, b);
      if (k >= 0) {
        setSlot(s, b * 4 + k, f);
        return fresh;
      }
    }
    const log: [slot: number, victim: number][] = [];
    let b = f % 2 === 0 ? i1 : i2;
    for (let n = 1; n <= maxKicks; n++) {
      const slot = b * 4 + (n % 4);
      const victim = getSlot(s, slot);
      setSlot(s, slot, f);
      log.push([slot, victim]);
      f = victim;
      b = altBucket(b, f, buckets);
      const k = free(s, b);
      if (k >= 0) {
        setSlot(s, b * 4 + k, f);
        return fresh;
      }
    }
    for (let n = log.length - 1; n >= 0; n--) setSlot(s, log[n]![0], log[n]![1]);
    return REPLY.full;
  }

  async cuckooRemove(
    ref: string,
    epoch: Epoch,
    f: number,
    i1: number,
    i2: number,
  ): Promise<number> {
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    for (const b of [i1, i2]) {
      for (let k = 0; k < 4; k++) {
        if (getSlot(s, b * 4 + k) === f) {
          setSlot(s, b * 4 + k, 0);
          return 1;
        }
      }
    }
    return 0;
  }

  async readBuckets(ref: string, i1: number, i2: number): Promise<ShardRead> {
    const slots = [0, 1, 2, 3].map((k) => i1 * 4 + k).concat([0, 1, 2, 3].map((k) => i2 * 4 + k));
    return this.read(ref, slots, getSlot);
  }

  async scalableAdd(
    ref: string,
    epoch: Epoch,
    share: number,
    cells: ArrayLike<number>,
  ): Promise<number> {
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    if (s.sealed || s.count >= share) return REPLY.full;
    const fresh = setBits(s, cells);
    s.count += fresh;
    return fresh;
  }

  async seal(ref: string, epoch: Epoch): Promise<number> {
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    s.sealed = true;
    return 1;
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
    const s = this.check(ref, epoch);
    if (typeof s === 'number') return s;
    grow(s, bytes.length - 1);
    for (let i = 0; i < bytes.length; i++) s.bytes[i]! |= bytes[i]!;
    return 1;
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

  /** The epoch check of every write (store.ts): resets a shard of an older generation first. */
  private check(ref: string, epoch: Epoch): Checked {
    const s = this.shard(ref);
    if (s === undefined) return REPLY.lost;
    if (String(s.id) !== epoch.id) return REPLY.replaced;
    if (s.gen > epoch.gen) return REPLY.cleared;
    if (s.gen < epoch.gen) reset(s, epoch.gen);
    return s;
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

/** Makes byte `index` of the shard exist (doubling, as a Redis string grows). */
function grow(s: Shard, index: number): void {
  if (index < s.bytes.length) return;
  const bytes = new Uint8Array(Math.max(index + 1, 2 * s.bytes.length));
  bytes.set(s.bytes);
  s.bytes = bytes;
}

/** Bit p: the `0x80 >>> (p & 7)` bit of byte `p >>> 3`. */
function getBit(s: Shard, p: number): number {
  const i = Math.floor(p / 8);
  return i < s.bytes.length && (s.bytes[i]! & (0x80 >>> (p % 8))) !== 0 ? 1 : 0;
}

/** Sets bits `cells`; 1 if one of them was 0. */
function setBits(s: Shard, cells: ArrayLike<number>): 0 | 1 {
  let fresh: 0 | 1 = 0;
  for (let i = 0; i < cells.length; i++) {
    const p = cells[i]!;
    if (getBit(s, p) === 0) fresh = 1;
    grow(s, Math.floor(p / 8));
    s.bytes[Math.floor(p / 8)]! |= 0x80 >>> (p % 8);
  }
  return fresh;
}

/** Counter j: bits [4j, 4j + 4), the high nibble of byte j/2 for an even j. */
function getCounter(s: Shard, j: number): number {
  const i = Math.floor(j / 2);
  if (i >= s.bytes.length) return 0;
  return j % 2 === 0 ? s.bytes[i]! >>> 4 : s.bytes[i]! & 0x0f;
}

function setCounter(s: Shard, j: number, v: number): void {
  const i = Math.floor(j / 2);
  grow(s, i);
  const b = s.bytes[i]!;
  s.bytes[i] = j % 2 === 0 ? (b & 0x0f) | (v << 4) : (b & 0xf0) | v;
}

/** Slot k: bits [16k, 16k + 16), big-endian. */
function getSlot(s: Shard, k: number): number {
  const i = 2 * k;
  return i + 1 < s.bytes.length ? (s.bytes[i]! << 8) | s.bytes[i + 1]! : 0;
}

function setSlot(s: Shard, k: number, v: number): void {
  grow(s, 2 * k + 1);
  s.bytes[2 * k] = v >>> 8;
  s.bytes[2 * k + 1] = v & 0xff;
}

/** A free slot of bucket b (0..3), or -1. */
function free(s: Shard, b: number): number {
  for (let k = 0; k < 4; k++) if (getSlot(s, b * 4 + k) === 0) return k;
  return -1;
}
