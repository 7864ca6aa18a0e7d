/**
 * The scalable filter's adds of a window in Redis (`ShardStore.scalableAddBatch`): one script per
 * shard of the window (bitfield.ts `groupByShard`) instead of one per key. The script runs the
 * per-key `scalableAdd` (scripts.ts) for each of its keys in window order inside one atomic step,
 * so every key gets the reply its own script would have given: -1 once the shard is sealed or has
 * taken its share (that key changes nothing), else 1 if one of its bits was 0 (the key is counted)
 * or 0; a header check that fails (-2 lost, -3 replaced, -4 cleared) answers every key of the
 * shard, as it would have answered each.
 */

import type { CellBatch, Epoch } from '../sharded/store.js';
import { groupByShard, numbers, span } from './bitfield.js';
import { CHECK, HEADER_BITS, type LuaScript, lua } from './scripts.js';

/**
 * KEYS[1] shard, KEYS[2] its count hash. ARGV[1] id, ARGV[2] gen, ARGV[3] share, ARGV[4] k, then
 * k bit offsets (past the header) per key. Returns `{reply per key}`, or `{code}` when the header
 * check fails.
 */
export const SCALABLE_ADD_MANY: LuaScript = lua(
  'scalableAddMany',
  `${CHECK}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), KEYS[2])
if c then return {c} end
local st = redis.call('HMGET', KEYS[2], 'n', 'sealed')
local n = tonumber(st[1]) or 0
local share = tonumber(ARGV[3])
local k = tonumber(ARGV[4])
local out = {}
local added = 0
for p = 5, #ARGV, k do
  if st[2] or n >= share then
    out[#out + 1] = -1
  else
    local args = {'BITFIELD', KEYS[1]}
    for i = p, p + k - 1 do
      args[#args + 1] = 'SET'; args[#args + 1] = 'u1'; args[#args + 1] = ARGV[i]; args[#args + 1] = '1'
    end
    local old = redis.call(unpack(args))
    local new = 0
    for i = 1, #old do if old[i] == 0 then new = 1; break end end
    n = n + new
    added = added + new
    out[#out + 1] = new
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[2], 'n', added)
  if not st[1] then
    local t = redis.call('PTTL', KEYS[1])
    if t > 0 then redis.call('PEXPIRE', KEYS[2], t) end
  end
end
return out`,
);

/** Runs `script` with `keys` and `args` (the store's EVALSHA with its NOSCRIPT fallback). */
type Eval = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly string[],
) => Promise<unknown>;

/**
 * Sends one {@link SCALABLE_ADD_MANY} per shard of `batch` (every key k cells, no `starts`), all
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
    groupByShard(batch).map(async ({ ref, keys }) => {
      const args = head.slice();
      for (const i of keys) {
        const [from, to] = span(batch, i);
        for (let c = from; c < to; c++) args.push(String(batch.cells[c]! + HEADER_BITS));
      }
      let reply: number[];
      try {
        reply = numbers(await run(SCALABLE_ADD_MANY, [ref, `${ref}:n`], args));
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
