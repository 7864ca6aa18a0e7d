/**
 * A stored filter's epoch (its `id` and generation, store.ts) against the store: reading the
 * metadata, turning the store's refusals and metadata replies into the store's typed errors,
 * creating or resetting a filter's shards, and naming shards once.
 */

import { show } from '../errors.js';
import { who } from './meta.js';
import type { StoreOps } from './ops.js';
import { type Epoch, META_REPLY, type Meta, type ShardStore } from './store.js';

/** The metadata of filter `name`; the store's not-found error if there is none. */
export async function readFilterMeta(store: ShardStore, name: string): Promise<Meta> {
  const meta = await store.readMeta(name);
  if (meta === undefined) {
    throw store.error(
      'notFound',
      `no ${store.noun} named ${show(name)} (never created, destroyed, or expired)`,
    );
  }
  return meta;
}

/** Throws for a metadata update's `gone` or `replaced`. */
export function checkMetaReply(store: ShardStore, name: string, code: number): void {
  if (code === META_REPLY.gone) {
    throw store.error('notFound', `${who(store, name)} was destroyed or expired`);
  }
  if (code === META_REPLY.replaced) throw staleError(store, name);
}

export function staleError(store: ShardStore, name: string): Error {
  return store.error(
    'stale',
    `${who(store, name)} was destroyed and created again since this object opened it; open it again`,
  );
}

/**
 * Creates (or resets to `epoch`) `count` shards named `refs(i)`, a window at a time, then marks
 * the metadata ready.
 */
export async function initShards(
  ops: StoreOps,
  name: string,
  epoch: Epoch,
  expireAt: number | undefined,
  refs: (i: number) => string,
  count: number,
): Promise<void> {
  const store = ops.store;
  await ops.all(count, (i) => store.initShard(refs(i), epoch, expireAt));
  checkMetaReply(store, name, await store.setMetaField(name, epoch.id, 'ready', '1'));
}

/**
 * Why shard `shard` of filter `name` is missing, as the error to throw: re-reads the metadata (the
 * filter may be gone, or created again).
 */
export async function lostShard(
  store: ShardStore,
  name: string,
  epoch: Epoch,
  shard: string,
): Promise<Error> {
  let meta: Meta;
  try {
    meta = await readFilterMeta(store, name);
  } catch (err) {
    return err as Error;
  }
  if (meta.id !== epoch.id) return staleError(store, name);
  return store.error(
    'lost',
    `${who(store, name)} lost shard ${show(shard)} (deleted, evicted or not persisted): keys added before may answer absent; clear() rebuilds it empty, destroy() removes the filter`,
  );
}

/** The shard names of a filter, made on first use and kept (at most 2^16 of them). */
export class ShardRefs {
  private readonly cache: (string | undefined)[];

  constructor(
    private readonly make: (shard: number) => string,
    readonly count: number,
  ) {
    this.cache = new Array<string | undefined>(Math.min(count, CACHE_LIMIT));
  }

  get(shard: number): string {
    if (shard >= CACHE_LIMIT) return this.make(shard);
    let ref = this.cache[shard];
    if (ref === undefined) {
      ref = this.make(shard);
      this.cache[shard] = ref;
    }
    return ref;
  }
}

const CACHE_LIMIT = 1 << 16;
