/**
 * The Lua scripts of the Redis filters. Each runs atomically on one server and, for Redis Cluster,
 * touches only the keys it is given in KEYS, all with the same hash tag (one slot): the metadata
 * hash alone, or one shard (with its count hash, for the scalable filter).
 *
 * They are sent with EVALSHA; a server that does not know a script (NOSCRIPT: restarted, flushed,
 * or another cluster node) gets it once with EVAL, which also caches it (script-runner.ts).
 *
 * Shard header: every shard string starts with 8 bytes, the filter's `id` (u32, big-endian: what
 * `BITFIELD GET u32 0` reads) and the `gen`eration it was last cleared in (u32 at bit 32); the
 * cells follow from bit 64. The metadata holds the same `id` (random, new for every creation) and
 * the current `gen` (bumped by `clear`). Every write script checks the header first, in the same
 * atomic step as the write, and writes nothing unless the shard belongs to the generation the
 * client planned the write for:
 *
 * | header                  | reply | meaning                                                      |
 * |-------------------------|-------|--------------------------------------------------------------|
 * | id 0 (no such key)      | -2    | the shard is lost (deleted, evicted, expired)                |
 * | another id              | -3    | the filter was deleted and created again                     |
 * | newer gen               | -4    | cleared since the client read the metadata: re-read, resend  |
 * | older gen               |  —    | a clear is under way: the script resets the shard first      |
 *
 * Fast path: the bloom and counting adds are first sent as one plain `BITFIELD` that reads the
 * header (`GET u32 0 GET u32 32`) before it writes, atomically, so the client learns in the same
 * round trip whether the write landed in the generation it planned for. When it did not, the
 * write is not acknowledged: a newer generation (cleared since) only gains set bits (never a false
 * negative) and the key is resent; an older one (a clear under way) is resent through the script,
 * which resets the shard first; a missing shard becomes a header-less string, which `DROP_ORPHAN`
 * deletes before the error is reported; another id (the filter was destroyed and created again
 * under a stale object) leaves set bits in the new filter, false positives only, and the object
 * refuses every later call (`RedisFilterStaleError`). Plain BITFIELD costs the server about a seventh of the
 * script's time per key (commandstats: 8.6 µs against 68 µs on a loaded machine).
 *
 * Expiry: a filter with a TTL has an absolute expiry time `expireAt` (ms since the epoch, server
 * clock at creation). Shards get that PEXPIREAT when they are created (`INIT_SHARD`) and keep it
 * (`KEEPTTL`) when reset; writes never set an expiry and never create a shard, so a write can never
 * recreate an expired shard, or give fresh data a past expiry.
 */

import { createHash } from 'node:crypto';

/** A Lua script and its SHA1 (the EVALSHA handle). */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

export function lua(name: string, source: string): LuaScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Replies of the write scripts besides 0/1 (see the module comment). */
export const REPLY = { full: -1, lost: -2, replaced: -3, cleared: -4 } as const;

/** Bits before the first cell of a shard (the header). */
export const HEADER_BITS = 64;

/**
 * `check(key, id, gen, count)`: nil if the write may go on (after resetting a shard of an older
 * generation, and deleting its count hash `count` if given), else the reply code.
 */
const CHECK = `local function check(key, id, gen, count)
  local h = redis.call('BITFIELD_RO', key, 'GET', 'u32', 0, 'GET', 'u32', 32)
  if h[1] == 0 then return -2 end
  if h[1] ~= id then return -3 end
  if h[2] > gen then return -4 end
  if h[2] < gen then
    redis.call('SET', key, struct.pack('>I4I4', id, gen), 'KEEPTTL')
    if count then redis.call('DEL', count) end
  end
  return nil
end
`;

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
 * Sets `field` to `value` in the metadata if it is the filter `id`'s. KEYS[1] metadata.
 * ARGV[1] id, ARGV[2] field, ARGV[3] value. Returns 1, 0 if the metadata is gone, -3 if another
 * filter's.
 */
export const META_SET = lua(
  'metaSet',
  `local id = redis.call('HGET', KEYS[1], 'id')
if not id then return 0 end
if id ~= ARGV[1] then return -3 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1`,
);

/**
 * Starts a clear: bumps `gen` (and with ARGV[2] = '1' drops every layer but the first).
 * KEYS[1] metadata. ARGV[1] id. Returns {1, HGETALL}, {0} if the metadata is gone, {-3} if
 * another filter's.
 */
export const CLEAR_META = lua(
  'clearMeta',
  `local id = redis.call('HGET', KEYS[1], 'id')
if not id then return {0} end
if id ~= ARGV[1] then return {-3} end
redis.call('HINCRBY', KEYS[1], 'gen', 1)
if ARGV[2] == '1' then
  local n = tonumber(redis.call('HGET', KEYS[1], 'layers'))
  for i = 1, n - 1 do redis.call('HDEL', KEYS[1], 'layer:' .. i) end
  redis.call('HSET', KEYS[1], 'layers', '1')
end
return {1, redis.call('HGETALL', KEYS[1])}`,
);

/**
 * Creates a shard, or resets it to generation `gen` (empty): unless it already holds `id` at
 * `gen` or newer, SETs the 8-byte header (PXAT expireAt for a new key, KEEPTTL otherwise) and
 * deletes the count hash. KEYS[1] shard, KEYS[2] its count hash (optional). ARGV[1] id, ARGV[2]
 * gen, ARGV[3] expireAt or ''. Returns 1 if it wrote, 0 if not.
 */
export const INIT_SHARD = lua(
  'initShard',
  `local id, gen = tonumber(ARGV[1]), tonumber(ARGV[2])
local h = redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u32', 0, 'GET', 'u32', 32)
if h[1] == id and h[2] >= gen then return 0 end
local hdr = struct.pack('>I4I4', id, gen)
if h[1] == id then
  redis.call('SET', KEYS[1], hdr, 'KEEPTTL')
elseif ARGV[3] ~= '' then
  redis.call('SET', KEYS[1], hdr, 'PXAT', ARGV[3])
else
  redis.call('SET', KEYS[1], hdr)
end
if KEYS[2] then redis.call('DEL', KEYS[2]) end
return 1`,
);

/**
 * Deletes a shard of a dropped layer unless it belongs to generation `gen` or newer (a layer
 * grown again after the clear). KEYS[1] shard, KEYS[2] count hash. ARGV[1] id, ARGV[2] gen.
 */
export const DROP_SHARD = lua(
  'dropShard',
  `local h = redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u32', 0, 'GET', 'u32', 32)
if h[1] == tonumber(ARGV[1]) and h[2] >= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1`,
);

/**
 * Deletes a shard string without a header (id 0): what a plain BITFIELD write leaves when it meets
 * a missing shard. KEYS[1] shard. Returns 1 if it deleted it.
 */
export const DROP_ORPHAN = lua(
  'dropOrphan',
  `local h = redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u32', 0)
if h[1] ~= 0 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
);

/**
 * Bloom add: BITFIELD SET u1 at every offset. KEYS[1] shard. ARGV[1] id, ARGV[2] gen, ARGV[3..]
 * bit offsets (header included). Returns 1 if any bit was 0 (the key was new), 0, or a code.
 */
export const BLOOM_ADD = lua(
  'bloomAdd',
  `${CHECK}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if c then return c end
local args = {'BITFIELD', KEYS[1]}
for i = 3, #ARGV do
  args[#args + 1] = 'SET'; args[#args + 1] = 'u1'; args[#args + 1] = ARGV[i]; args[#args + 1] = '1'
end
local old = redis.call(unpack(args))
for i = 1, #old do if old[i] == 0 then return 1 end end
return 0`,
);

/**
 * Counting add: BITFIELD OVERFLOW SAT INCRBY u4 #j 1 at every distinct counter. KEYS[1] shard.
 * ARGV[1] id, ARGV[2] gen, ARGV[3..] counter indexes (header included: cell j is #(16 + j)).
 * Returns 1 if any counter went from 0 to 1 (the key was new), 0, or a code.
 */
export const COUNTING_ADD = lua(
  'countingAdd',
  `${CHECK}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if c then return c end
local args = {'BITFIELD', KEYS[1], 'OVERFLOW', 'SAT'}
for i = 3, #ARGV do
  args[#args + 1] = 'INCRBY'; args[#args + 1] = 'u4'; args[#args + 1] = '#' .. ARGV[i]; args[#args + 1] = '1'
end
local now = redis.call(unpack(args))
for i = 1, #now do if now[i] == 1 then return 1 end end
return 0`,
);

/**
 * Counting remove, all or nothing. KEYS[1] shard; ARGV[1] id, ARGV[2] gen, ARGV[3..] the key's k
 * counter indexes. Counts how often each distinct counter occurs among them (two probes may share
 * a counter) and reads the counters; if any unsaturated counter is below its multiplicity (the key
 * cannot be present), returns 0 and changes nothing. Otherwise decrements every counter below 15
 * by its multiplicity and returns 1. Saturated counters (15) are never decremented: their true
 * count is unknown, and lowering them could reach 0 under keys still present (a false negative).
 */
export const COUNTING_REMOVE = lua(
  'countingRemove',
  `${CHECK}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if c then return c end
local idx, need = {}, {}
for i = 3, #ARGV do
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
 * Scalable adds into one shard of the newest layer, each key in turn as if alone. KEYS[1] shard
 * bitmap, KEYS[2] its count hash {n, sealed}. ARGV[1] id, ARGV[2] gen, ARGV[3] the shard's share
 * of the layer's capacity, ARGV[4] k; then k bit offsets (header included) per key. Returns a
 * reply per key: -1 (no change) once the shard is sealed or holds its share; else the bits are
 * set, n counts a new key, and the reply is 1 (new) or 0. A failed header check returns `{code}`
 * for every key. The count hash gets the shard's remaining time to live when created.
 */
export const SCALABLE_ADD = lua(
  'scalableAdd',
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

/** Seals one shard of a full layer. KEYS[1] shard, KEYS[2] count hash. ARGV[1] id, ARGV[2] gen. */
export const SCALABLE_SEAL = lua(
  'scalableSeal',
  `${CHECK}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), KEYS[2])
if c then return c end
local fresh = redis.call('EXISTS', KEYS[2]) == 0
redis.call('HSET', KEYS[2], 'sealed', '1')
if fresh then
  local t = redis.call('PTTL', KEYS[1])
  if t > 0 then redis.call('PEXPIRE', KEYS[2], t) end
end
return 1`,
);

/**
 * Appends layer L to the metadata if it has exactly L layers and is still generation `gen` of
 * filter `id` (compare and set, so racing clients add one layer). KEYS[1] metadata. ARGV[1] L;
 * ARGV[2] the new layer's description; ARGV[3] id; ARGV[4] gen.
 * Returns {1, HGETALL}, {0} if the metadata is gone, {-3} if another filter's.
 */
export const SCALABLE_GROW = lua(
  'scalableGrow',
  `local m = redis.call('HMGET', KEYS[1], 'layers', 'id', 'gen')
if not m[1] then return {0} end
if m[2] ~= ARGV[3] then return {-3} end
if m[1] == ARGV[1] and m[3] == ARGV[4] then
  redis.call('HSET', KEYS[1], 'layers', tostring(tonumber(m[1]) + 1), 'layer:' .. m[1], ARGV[2])
end
return {1, redis.call('HGETALL', KEYS[1])}`,
);

/**
 * ORs bytes into a shard (import). KEYS[1] shard, KEYS[2] a scratch key with the same hash tag.
 * ARGV[1] id, ARGV[2] gen, ARGV[3] the bytes, 8 zero bytes (the header's place) first. The
 * scratch key is deleted before the script returns; the shard keeps its time to live.
 */
export const OR_SHARD = lua(
  'orShard',
  `${CHECK}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if c then return c end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[3])
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`,
);

/**
 * Cuckoo filter slots (src/sharded/stored-cuckoo.ts): slot s of bucket b of a shard is
 * `BITFIELD … u16 #(4 + 4b + s)` (after the header), 0 = empty. `alt(b, f)` = b XOR
 * ((f · 0x5bd1e995) mod 2^32 mod nb), nb a power of two, so alt(alt(b, f), f) = b.
 */
const CUCKOO = `local function slot(b, s) return '#' .. (4 + b * 4 + s) end
local function get(b, s) return redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u16', slot(b, s))[1] end
local function put(b, s, v) redis.call('BITFIELD', KEYS[1], 'SET', 'u16', slot(b, s), v) end
local function alt(b, f, nb) return bit.bxor(b, (f * 1540483477) % 4294967296 % nb) end
local function free(b) for s = 0, 3 do if get(b, s) == 0 then return s end end return nil end
`;

/**
 * Cuckoo add. KEYS[1] shard. ARGV[1] id, ARGV[2] gen, ARGV[3] fingerprint f (1..65535), ARGV[4]
 * bucket i1, ARGV[5] bucket i2, ARGV[6] buckets per shard nb, ARGV[7] most kicks. Puts f in a free
 * slot of i1 or i2, else moves fingerprints to their other bucket (at most ARGV[7] moves, each
 * logged); if no free slot turns up it undoes every move, so no fingerprint is ever lost, and
 * returns -1 (full). Returns 1 if f was in neither bucket before (the key was new), 0 if it was.
 */
export const CUCKOO_ADD = lua(
  'cuckooAdd',
  `${CHECK}${CUCKOO}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if c then return c end
local f, i1, i2, nb = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local new = 1
for s = 0, 3 do if get(i1, s) == f or get(i2, s) == f then new = 0 end end
for _, b in ipairs({i1, i2}) do
  local s = free(b)
  if s then put(b, s, f); return new end
end
local log = {}
local b = (f % 2 == 0) and i1 or i2
for n = 1, tonumber(ARGV[7]) do
  local s = n % 4
  local victim = get(b, s)
  put(b, s, f)
  log[#log + 1] = {b, s, victim}
  f = victim
  b = alt(b, f, nb)
  local e = free(b)
  if e then put(b, e, f); return new end
end
for n = #log, 1, -1 do put(log[n][1], log[n][2], log[n][3]) end
return -1`,
);

/**
 * Cuckoo remove: clears one slot holding fingerprint ARGV[3] in bucket ARGV[4] or ARGV[5].
 * KEYS[1] shard; ARGV[1] id, ARGV[2] gen. Returns 1 if it found one, 0 if not (nothing changes).
 */
export const CUCKOO_REMOVE = lua(
  'cuckooRemove',
  `${CHECK}${CUCKOO}local c = check(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if c then return c end
local f = tonumber(ARGV[3])
for _, b in ipairs({tonumber(ARGV[4]), tonumber(ARGV[5])}) do
  for s = 0, 3 do if get(b, s) == f then put(b, s, 0); return 1 end end
end
return 0`,
);
