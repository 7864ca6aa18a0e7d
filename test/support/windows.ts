/**
 * How many commands a Redis bloom filter's batch sends: the store sends one BITFIELD per shard
 * of each window (src/redis/bitfield.ts, `GROUP_CELLS` cells at most), so a batch of n keys takes
 * the number of distinct (window, shard) pairs, computed here from the filter's layout.
 */
import type { Funnel, Key } from '../../src/index.js';
import { GROUP_CELLS } from '../../src/redis/bitfield.js';
import { Locator } from '../../src/sharded/layout.js';
import { WINDOW } from '../../src/sharded/ops.js';

/** A stored bloom filter's shape (`bitSize` is shards × bits per shard). */
export interface Shaped {
  readonly shards: number;
  readonly bitSize: number;
  readonly hashes: number;
  readonly funnel: Funnel;
}

/** The commands a batch over `keys` sends to `filter`'s shards; `perShard` counts them by shard. */
export function groupedCommands(
  filter: Shaped,
  keys: readonly Key[],
): { total: number; perShard: number[] } {
  const { shards, hashes } = filter;
  const locator = new Locator(
    { shards, shardBits: filter.bitSize / shards, hashes },
    filter.funnel,
  );
  const perShard = new Array<number>(filter.shards).fill(0);
  const perGroup = Math.floor(GROUP_CELLS / filter.hashes);
  let total = 0;
  for (let start = 0; start < keys.length; start += WINDOW) {
    const inWindow = new Map<number, number>();
    for (const key of keys.slice(start, start + WINDOW)) {
      const s = locator.locate(key);
      inWindow.set(s, (inWindow.get(s) ?? 0) + 1);
    }
    for (const [s, count] of inWindow) {
      const commands = Math.ceil(count / perGroup);
      perShard[s]! += commands;
      total += commands;
    }
  }
  return { total, perShard };
}
