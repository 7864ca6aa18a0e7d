/**
 * The Lua scripts of the Redis filters. Each runs atomically on one server and, for Redis Cluster,
 * touches only the keys it is given in KEYS, all with the same hash tag (one slot): the metadata
 * hash alone, or one shard (with its count hash, for the scalable filter).
 *
 * They are sent with EVALSHA; a server that does not know a script (NOSCRIPT: restarted, flushed,
 * or another cluster node) gets it once with EVAL, which also caches it (store.ts).
 *
 * Expiry: a filter with a TTL has an absolute expiry time `expireAt` (ms since the epoch, from the
 * server clock when the filter was created). Every script that may create a key gives it that same
 * PEXPIREAT, so all keys of a filter vanish together and no shard outlives its metadata or dies
 * before it (on a cluster, up to the clock skew between nodes).
 */

import { createHash } from 'node:crypto';

/** A Lua script and its SHA1 (the EVALSHA handle). */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

function lua(name: string, source: string): LuaScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Creates the metadata hash unless it exists; returns `{created (1|0), HGETALL}`.
 * KEYS[1] metadata. ARGV[1] TTL in ms or ''; ARGV[2..] field, value pairs. With a TTL, the field
 * `expireAt` (server time + TTL, ms) is added and set with PEXPIREAT.
 */
export const CREATE = lua(
  'create',
  `if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGETALL', KEYS[1])}
end
local fields = {}
for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
local at
if ARGV[1] ~= '' then
  local t = redis.call('TIME')
  at = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1]))
  fields[#fields + 1] = 'expireAt'
  fields[#fields + 1] = at
end
redis.call('HSET', KEYS[1], unpack(fields))
if at then redis.call('PEXPIREAT', KEYS[1], at) end
return {1, redis.call('HGETALL', KEYS[1])}`,
);

/**
 * Bloom add with expiry: BITFIELD SET u1 at every offset, then PEXPIREAT if the key has none.
 * KEYS[1] shard. ARGV[1] expireAt; ARGV[2..] offsets. Returns 1 if any bit was 0 (the key was new).
 */
export const BLOOM_ADD_EXPIRING = lua(
  'bloomAddExpiring',
  `local args = {'BITFIELD', KEYS[1]}
for i = 2, #ARGV do
  args[#args + 1] = 'SET'; args[#args + 1] = 'u1'; args[#args + 1] = ARGV[i]; args[#args + 1] = '1'
end
local old = redis.call(unpack(args))
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
for i = 1, #old do if old[i] == 0 then return 1 end end
return 0`,
);

/**
 * Counting add with expiry: BITFIELD OVERFLOW SAT INCRBY u4 #offset 1 at every offset, then
 * PEXPIREAT if the key has none. KEYS[1] shard. ARGV[1] expireAt; ARGV[2..] counter indexes.
 * Returns 1 if any counter went from 0 to 1 (the key was new).
 */
export const COUNTING_ADD_EXPIRING = lua(
  'countingAddExpiring',
  `local args = {'BITFIELD', KEYS[1], 'OVERFLOW', 'SAT'}
for i = 2, #ARGV do
  args[#args + 1] = 'INCRBY'; args[#args + 1] = 'u4'; args[#args + 1] = '#' .. ARGV[i]; args[#args + 1] = '1'
end
local now = redis.call(unpack(args))
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
for i = 1, #now do if now[i] == 1 then return 1 end end
return 0`,
);

/**
 * Counting remove, all or nothing. KEYS[1] shard; ARGV = the key's k counter indexes. Counts how
 * often each distinct counter occurs among them (two probes may share a counter) and reads the
 * counters; if any unsaturated counter is below its multiplicity (the key cannot be present),
 * returns 0 and changes nothing. Otherwise decrements every counter below 15 by its multiplicity
 * and returns 1. Saturated counters (15) are never decremented: their true count is unknown, and
 * lowering them could reach 0 under keys still present (a false negative).
 */
export const COUNTING_REMOVE = lua(
  'countingRemove',
  `local idx, need = {}, {}
for i = 1, #ARGV do
  local o = ARGV[i]
  if need[o] then need[o] = need[o] + 1 else need[o] = 1; idx[#idx + 1] = o end
end
local get = {'BITFIELD', KEYS[1]}
for i = 1, #idx do get[#get + 1] = 'GET'; get[#get + 1] = 'u4'; get[#get + 1] = '#' .. idx[i] end
local vals = redis.call(unpack(get))
for i = 1, #idx do
  if vals[i] < 15 and vals[i] < need[idx[i]] then return 0 end
end
local dec = {'BITFIELD', KEYS[1]}
for i = 1, #idx do
  if vals[i] < 15 then
    dec[#dec + 1] = 'INCRBY'; dec[#dec + 1] = 'u4'; dec[#dec + 1] = '#' .. idx[i]; dec[#dec + 1] = tostring(-need[idx[i]])
  end
end
if #dec > 2 then redis.call(unpack(dec)) end
return 1`,
);

/**
 * Scalable add into one shard of the current layer, counting keys per shard.
 * KEYS[1] shard bitmap, KEYS[2] its count hash {n, sealed}. ARGV[1] the shard's share of the
 * layer's capacity; ARGV[2] expireAt or ''; ARGV[3..] offsets.
 * Returns -1 (and changes nothing) when the shard is sealed or holds its share already; else sets
 * the bits, increments n if the key was new, and returns 1 (new) or 0.
 */
export const SCALABLE_ADD = lua(
  'scalableAdd',
  `local st = redis.call('HMGET', KEYS[2], 'n', 'sealed')
if st[2] or (tonumber(st[1]) or 0) >= tonumber(ARGV[1]) then return -1 end
local args = {'BITFIELD', KEYS[1]}
for i = 3, #ARGV do
  args[#args + 1] = 'SET'; args[#args + 1] = 'u1'; args[#args + 1] = ARGV[i]; args[#args + 1] = '1'
end
local old = redis.call(unpack(args))
local new = 0
for i = 1, #old do if old[i] == 0 then new = 1; break end end
if new == 1 then redis.call('HINCRBY', KEYS[2], 'n', 1) end
if ARGV[2] ~= '' then
  if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
  if new == 1 and redis.call('PTTL', KEYS[2]) == -1 then redis.call('PEXPIREAT', KEYS[2], ARGV[2]) end
end
return new`,
);

/** Seals one shard of a full layer. KEYS[1] count hash. ARGV[1] expireAt or ''. */
export const SCALABLE_SEAL = lua(
  'scalableSeal',
  `redis.call('HSET', KEYS[1], 'sealed', '1')
if ARGV[1] ~= '' and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return 1`,
);

/**
 * Appends layer L to the metadata if it has exactly L layers (compare and set, so racing clients
 * add one layer). KEYS[1] metadata. ARGV[1] L; ARGV[2] the new layer's description.
 * Returns {1, HGETALL}, or {0} if the metadata is gone.
 */
export const SCALABLE_GROW = lua(
  'scalableGrow',
  `local n = redis.call('HGET', KEYS[1], 'layers')
if not n then return {0} end
if n == ARGV[1] then
  redis.call('HSET', KEYS[1], 'layers', tostring(tonumber(n) + 1), 'layer:' .. n, ARGV[2])
end
return {1, redis.call('HGETALL', KEYS[1])}`,
);

/**
 * ORs a shard's bytes into its Redis key (import). KEYS[1] shard, KEYS[2] a scratch key with the
 * same hash tag. ARGV[1] the bytes; ARGV[2] expireAt or ''. The scratch key is deleted before the
 * script returns, so it never outlives the call.
 */
export const OR_SHARD = lua(
  'orShard',
  `redis.call('SET', KEYS[2], ARGV[1])
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
if ARGV[2] ~= '' and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return 1`,
);

/** Drops every layer but the first from the metadata (clear). KEYS[1] metadata. */
export const SCALABLE_RESET = lua(
  'scalableReset',
  `local n = tonumber(redis.call('HGET', KEYS[1], 'layers'))
if not n then return 0 end
for i = 1, n - 1 do redis.call('HDEL', KEYS[1], 'layer:' .. i) end
redis.call('HSET', KEYS[1], 'layers', '1')
return 1`,
);
