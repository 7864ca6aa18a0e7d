/**
 * Redis key names of a bloomkit filter.
 *
 * A filter called `name` owns these keys (`i` is a shard number, `l` a layer number):
 *
 * | key                   | type   | holds                                                        |
 * |-----------------------|--------|--------------------------------------------------------------|
 * | `bk:m:{name}`         | hash   | the metadata: kind, parameters, shape, TTL (see store.ts)    |
 * | `bk:b:{name:i}`       | string | shard i of a `RedisBloomFilter`: a bitmap                    |
 * | `bk:c:{name:i}`       | string | shard i of a `RedisCountingBloomFilter`: 4-bit counters      |
 * | `bk:k:{name:i}`       | string | shard i of a `RedisCuckooFilter`: buckets of 16-bit slots    |
 * | `bk:s:{name:l:i}`     | string | shard i of layer l of a `RedisScalableBloomFilter`: a bitmap |
 * | `bk:s:{name:l:i}:n`   | hash   | that shard's key count `n` and `sealed` flag                 |
 * | `<shard>:tmp:<id>`    | string | a scratch copy while bytes are ORed into a shard (deleted)   |
 * | `<shard key>:o:<op>`  | string | marker of remove `op`, about 30 s (once.ts; ioredis only)    |
 * | `bk:u2:{n:name:user}:g` | string | generation g of `user`'s bitmap in `RedisSeenSet` `name` (n: the name's length) |
 *
 * The part in braces is the Redis Cluster hash tag: only it is hashed to pick the slot. Each shard
 * has its own tag, so a filter's shards spread over the cluster's slots (and nodes), while a
 * shard's bitmap and its count hash share one slot and can be changed by one Lua script. The
 * metadata has a tag of its own and lives on whichever node owns that slot; every client reaches
 * it through the cluster's routing.
 *
 * The names are unambiguous: the letter after `bk:` says what follows, a shard number is the last
 * `:`-separated part of the tag (the last two for a layer), so two filters never share a key even
 * when their names contain `:`. A name must be a non-empty, well-formed string without `{` or `}`
 * (a `}` would end the hash tag early and put every shard in the same slot; a lone surrogate is
 * sent as U+FFFD, so two names would share keys).
 */

export { checkName, isWellFormed } from '../sharded/names.js';

/** The metadata hash of filter `name`. */
export function metaKey(name: string): string {
  return `bk:m:{${name}}`;
}

/** The kinds of shard key, by filter type. */
export type ShardKind = 'b' | 'c' | 'k';

/** Shard `shard` of the bloom (`b`) or counting (`c`) filter `name`. */
export function shardKey(kind: ShardKind, name: string, shard: number): string {
  return `bk:${kind}:{${name}:${shard}}`;
}

/** Shard `shard` of layer `layer` of the scalable filter `name`. */
export function layerShardKey(name: string, layer: number, shard: number): string {
  return `bk:s:{${name}:${layer}:${shard}}`;
}

/**
 * The count hash beside a scalable layer's shard key `shardKey` (a {@link layerShardKey}): the
 * same hash tag, so the same slot.
 */
export function layerCountKey(shardKey: string): string {
  return `${shardKey}:n`;
}

/** The count hash of shard key `ref` if it is a scalable layer's shard, else undefined. */
export function countKeyOf(ref: string): string | undefined {
  return ref.startsWith('bk:s:') ? layerCountKey(ref) : undefined;
}

/** The scratch key `orShard` ORs bytes through for shard key `ref` (same hash tag, same slot). */
export function scratchKey(ref: string, id: string): string {
  return `${ref}:tmp:${id}`;
}

/**
 * Generation `g` of `user`'s bitmap in the seen set `name`: `bk:u2:{n:name:user}:g`, where n is
 * the name's length in UTF-16 code units. Unambiguous whatever the user holds (`:`, `{`, `}`):
 * n says where the name ends, and the user runs to the last `}:` (g is digits). Set `feed` with
 * user `alice:bob` and set `feed:alice` with user `bob` are `{4:feed:alice:bob}` and
 * `{10:feed:alice:bob}`. The hash tag (the text up to the first `}`) is the same for every
 * generation of a user, so a user's window is in one cluster slot. The user must be well-formed
 * (a lone surrogate is sent as U+FFFD: two users would share keys). `u2`: the first scheme,
 * `bk:u:{name:user}:g`, was ambiguous; its keys are never read (they expire with their window).
 */
export function seenKey(name: string, user: string, g: number): string {
  return `bk:u2:{${name.length}:${name}:${user}}:${g}`;
}

/** The marker of remove `op` on shard `ref` (once.ts): the shard's hash tag, so its slot. */
export function onceKey(ref: string, op: string): string {
  return `${ref}:o:${op}`;
}

/**
 * Generation `g` of `user`'s bitmap in seen set `name` under the first, ambiguous key scheme
 * (`bk:u:{name:user}:g`): read once, to merge into the new keys (seen-set.ts, `legacyKeys`).
 */
export function legacySeenKey(name: string, user: string, g: number): string {
  return `bk:u:{${name}:${user}}:${g}`;
}

/** A scratch key in the slot of `user`'s window in seen set `name` (the merge script's). */
export function seenScratchKey(name: string, user: string): string {
  return `bk:u2:{${name.length}:${name}:${user}}:tmp`;
}
