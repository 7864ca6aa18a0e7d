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
import { groupByShard, numbers } from './bitfield.js';
import { decimal } from './decimal.js';
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
  const groupOf = new Uint32Array(batch.count);
  const groups = groupByShard(batch, groupOf);
  const args = groups.map((group) => {
    const a = head.slice();
    a.length = head.length + group.cells;
    return a;
  });
  const at = new Uint32Array(groups.length).fill(head.length);
  for (let i = 0, k = batch.k; i < batch.count; i++) {
    const a = args[groupOf[i]!]!;
    let p = at[groupOf[i]!]!;
    for (let c = i * k; c < (i + 1) * k; c++) a[p++] = decimal(batch.cells[c]! + HEADER_BITS);
    at[groupOf[i]!] = p;
  }
  const replies = new Array<number[] | undefined>(groups.length);
  let failure: unknown;
  await Promise.all(
    groups.map(async ({ ref }, g) => {
      try {
        replies[g] = numbers(await run(SCALABLE_ADD, [ref, layerCountKey(ref)], args[g]!));
      } catch (err) {
        failure ??= err;
      }
    }),
  );
  // Key i's reply is the next of its group's (one for all when a header check failed).
  const next = new Uint32Array(groups.length);
  for (let i = 0; i < batch.count; i++) {
    const g = groupOf[i]!;
    const reply = replies[g];
    if (reply !== undefined) out[i] = reply.length === 1 ? reply[0]! : reply[next[g]!]!;
    next[g]!++;
  }
  return failure;
}
