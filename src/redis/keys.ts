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

import { show } from '../errors.js';

/** Throws a `TypeError` or `RangeError` unless `name` can name a filter; returns it. */
export function checkName(name: unknown): string {
  if (typeof name !== 'string') throw new TypeError(`name must be a string, got ${show(name)}`);
  if (name.length === 0) throw new RangeError('name must not be empty');
  if (name.includes('{') || name.includes('}')) {
    throw new RangeError(
      `name must not contain '{' or '}' (they delimit Redis Cluster hash tags), got ${show(name)}`,
    );
  }
  if (!isWellFormed(name)) {
    throw new RangeError(
      `name must be well-formed Unicode (a lone surrogate would be sent as U+FFFD and collide with other names), got ${show(name)}`,
    );
  }
  return name;
}

/** Whether `s` has no lone surrogate (String.prototype.isWellFormed, for runtimes without it). */
function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return false;
    const d = s.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
    i++;
  }
  return true;
}

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

/** The count hash beside {@link layerShardKey} (same hash tag, so the same slot). */
export function layerStateKey(name: string, layer: number, shard: number): string {
  return `bk:s:{${name}:${layer}:${shard}}:n`;
}

/**
 * The shard keys of a filter, made on first use and kept (at most `CACHE_LIMIT` of them), so the
 * hot path does not build a string per key.
 */
export class ShardKeys {
  private readonly cache: (string | undefined)[];

  constructor(
    private readonly make: (shard: number) => string,
    readonly count: number,
  ) {
    this.cache = new Array<string | undefined>(Math.min(count, CACHE_LIMIT));
  }

  get(shard: number): string {
    if (shard >= CACHE_LIMIT) return this.make(shard);
    let key = this.cache[shard];
    if (key === undefined) {
      key = this.make(shard);
      this.cache[shard] = key;
    }
    return key;
  }
}

const CACHE_LIMIT = 1 << 16;
