/**
 * The Lua scripts of `RedisSeenSet` (seen-set.ts): marking items seen, testing candidates on the
 * server, and merging bitmaps of the first key scheme into a user's window (`legacyKeys`).
 */

import { lua } from './scripts.js';

/**
 * KEYS: the window's generations, the current one first. ARGV: k, m, ttl ms, then (x, y) per
 * item. Sets the probes in the current generation, refreshes its TTL and returns `{new, empty}`:
 * how many items were new (some probe was 0), and 1 if no generation of the window existed
 * before (then bitmaps of the first key scheme may be there: `legacyKeys`).
 */
export const MARK = lua(
  'seen-mark',
  `local k, m, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local empty = redis.call('EXISTS', unpack(KEYS)) == 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], string.rep('\\0', math.ceil(m / 8)))
end
local new = 0
for j = 4, #ARGV - 1, 2 do
  local x, y = tonumber(ARGV[j]), tonumber(ARGV[j + 1])
  local fresh = 0
  for i = 0, k - 1 do
    if redis.call('SETBIT', KEYS[1], x % m, 1) == 0 then fresh = 1 end
    x = x + y
    y = y + i
  end
  new = new + fresh
end
redis.call('PEXPIRE', KEYS[1], ttl)
return {new, empty and 1 or 0}`,
);

/**
 * KEYS: the window's generations. ARGV: k, m, then (x, y) per item. Returns one character per
 * item, '1' if some generation holds all its probes (seen), else '0'; nil when no generation
 * exists.
 */
export const SEEN = lua(
  'seen-check',
  `local k, m = tonumber(ARGV[1]), tonumber(ARGV[2])
local byte, band, rshift, floor = string.byte, bit.band, bit.rshift, math.floor
local maps = {}
for g = 1, #KEYS do
  local s = redis.call('GET', KEYS[g])
  if s then maps[#maps + 1] = s end
end
if #maps == 0 then return false end
local out = {}
for j = 3, #ARGV - 1, 2 do
  local x0, y0 = tonumber(ARGV[j]), tonumber(ARGV[j + 1])
  local seen = '0'
  for g = 1, #maps do
    local s = maps[g]
    local x, y = x0, y0
    local all = true
    for i = 0, k - 1 do
      local o = x % m
      local b = byte(s, floor(o / 8) + 1)
      if b == nil or band(b, rshift(128, o % 8)) == 0 then
        all = false
        break
      end
      x = x + y
      y = y + i
    end
    if all then
      seen = '1'
      break
    end
  end
  out[#out + 1] = seen
end
return table.concat(out)`,
);

/**
 * Merges bitmaps into a user's window. KEYS: the window's generations, then a scratch key of the
 * same slot. ARGV: (bitmap, ttl ms) per generation, '' and 0 for none. A missing generation gets
 * the bitmap with that TTL; an existing one is ORed with it (BITOP through the scratch key) and
 * keeps its own TTL. Returns how many bitmaps were merged.
 */
export const MERGE = lua(
  'seen-merge',
  `local n, tmp, merged = #KEYS - 1, KEYS[#KEYS], 0
for i = 1, n do
  local v, ttl = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  if v ~= '' and ttl > 0 then
    merged = merged + 1
    if redis.call('EXISTS', KEYS[i]) == 0 then
      redis.call('SET', KEYS[i], v, 'PX', ttl)
    else
      local keep = redis.call('PTTL', KEYS[i])
      redis.call('SET', tmp, v)
      redis.call('BITOP', 'OR', KEYS[i], KEYS[i], tmp)
      redis.call('DEL', tmp)
      if keep > 0 then redis.call('PEXPIRE', KEYS[i], keep) end
    end
  end
end
return merged`,
);
