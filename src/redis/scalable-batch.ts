/**
 * The scalable filter's adds of a window in Redis (`ShardStore.scalableAddBatch`): one script per
 * shard of the window (bitfield.ts `groupByShard`) instead of one per key. The script
 * (`SCALABLE_ADD`, scripts.ts) adds its keys in window order inside one atomic step, so every key
 * gets the reply it would have got alone: -1 once the shard is sealed or has taken its share
 * (that key changes nothing), else 1 if one of its bits was 0 (the key is counted) or 0; a header
 * check that fails (-2 lost, -3 replaced, -4 cleared) answers every key of the shard, as it would
 * have answered each.
 */

import type { CellBatch, Epoch } from '../sharded/store.js';
import { groupByShard, groupCells, numbers } from './bitfield.js';
import { layerCountKey } from './keys.js';
import { HEADER_BITS, type LuaScript, SCALABLE_ADD } from './scripts.js';

/** Runs `script` with `keys` and `args` (the store's EVALSHA with its NOSCRIPT fallback). */
type Eval = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly string[],
) => Promise<unknown>;

/**
 * Sends one {@link SCALABLE_ADD} per shard of `batch` (every key k cells, no `starts`), all
 * in one turn; `out[i]` gets key i's reply (`undefined` if its script failed). Resolves to the
 * first failure.
 */
export async function sendScalableAdds(
  run: Eval,
  batch: CellBatch,
  epoch: Epoch,
  share: number,
  out: (number | undefined)[],
): Promise<unknown> {
  const head = [epoch.id, String(epoch.gen), String(share), String(batch.k)];
  let failure: unknown;
  await Promise.all(
    groupByShard(batch).map(async (group) => {
      const { ref, keys } = group;
      const args = head.slice();
      for (const cell of groupCells(batch, group)) args.push(String(cell + HEADER_BITS));
      let reply: number[];
      try {
        reply = numbers(await run(SCALABLE_ADD, [ref, layerCountKey(ref)], args));
      } catch (err) {
        failure ??= err;
        return;
      }
      for (let j = 0; j < keys.length; j++)
        out[keys[j]!] = reply.length === 1 ? reply[0]! : reply[j]!;
    }),
  );
  return failure;
}
