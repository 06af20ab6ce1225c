"""The Lua scripts of the seek pools (:mod:`game.lobby.pools`), one for each operation on a pool.

Each script runs atomically in Redis on the five keys of one pool, passed in ``KEYS`` in the
order of :meth:`game.lobby.pools.Matchmaker.keys` (queue, deadline, seeks, claimed, claims: the
keys are described in :mod:`game.lobby.pools`), and purges the pool's expired seeks first (all
but the sweep's dry run, which counts them), so that none is counted or paired past its deadline.
Every one is safe to run twice.  Their times come from the Redis server's clock (``TIME``).
Above each script: its ``ARGV`` and its reply.
"""

_LIB = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function drop(id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
-- Remove every seek whose deadline has passed, and forget old claims.
local function purge(now)
  local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
  for _, id in ipairs(dead) do drop(id) end
  local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
  for _, id in ipairs(old) do redis.call('HDEL', KEYS[5], id) end
  if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now) end
end
-- Let a key live at least ms more (never shortens it): pools nobody uses vanish by themselves.
local function keep_at_least(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
-- The seek keys outlive their last write by the TTL and then at least a minute (the TTL again if
-- longer): the expired seeks of a pool nobody touched since stay there for a sweep to count and
-- remove, instead of vanishing with their keys at an instant that races it.
local function keep_seek_keys(ttl)
  for i = 1, 3 do keep_at_least(KEYS[i], ttl + math.max(ttl, 60000)) end
end
local function alive(id, now)
  local deadline = redis.call('ZSCORE', KEYS[2], id)
  return deadline and tonumber(deadline) > now
end
local function state_of(id, now)
  if alive(id, now) then return 'waiting' end
  if redis.call('ZSCORE', KEYS[4], id) then return 'claimed' end
  return 'gone'
end
"""

# ARGV: id, seek JSON, ttl ms.  Returns {waiting count, arrival µs}, or {waiting count, -1} when
# the seek was claimed meanwhile: a claimed seek is never put back (a retried ADD whose first run
# was paired at once must not queue it a second time).
ADD = _LIB + """
local now = now_ms()
purge(now)
if redis.call('ZSCORE', KEYS[4], ARGV[1]) then
  return {redis.call('ZCARD', KEYS[2]), -1}
end
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'NX', now_us(), ARGV[1])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
keep_seek_keys(ttl)
return {redis.call('ZCARD', KEYS[2]), tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))}
"""

# ARGV: id.  Returns {state before, waiting count}; a waiting seek is removed.
CANCEL = _LIB + """
local now = now_ms()
purge(now)
local state = state_of(ARGV[1], now)
if state == 'waiting' then
  drop(ARGV[1])
  state = 'removed'
end
return {state, redis.call('ZCARD', KEYS[2])}
"""

# ARGV: id, ttl ms.  Returns {state, waiting count}; a waiting seek lives ttl ms more.
REFRESH = _LIB + """
local now = now_ms()
purge(now)
local state = state_of(ARGV[1], now)
if state == 'waiting' then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[2], 'XX', now + ttl, ARGV[1])
  keep_seek_keys(ttl)
end
return {state, redis.call('ZCARD', KEYS[2])}
"""

# No ARGV.  Returns the waiting count.
COUNT = _LIB + """
purge(now_ms())
return redis.call('ZCARD', KEYS[2])
"""

# ARGV: '1' to only count.  Purges (unless counting); returns the number of expired seeks.
SWEEP = _LIB + """
local now = now_ms()
local expired = redis.call('ZCOUNT', KEYS[2], '-inf', now)
if ARGV[1] ~= '1' then purge(now) end
return expired
"""

# ARGV: limit.  Returns {now µs, id, arrival µs, JSON, ...}: the Redis clock, then the oldest
# waiting seeks.
SNAPSHOT = _LIB + """
purge(now_ms())
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local out = {now_us()}
for i = 1, #ids, 2 do
  local json = redis.call('HGET', KEYS[3], ids[i])
  if json then
    table.insert(out, ids[i])
    table.insert(out, ids[i + 1])
    table.insert(out, json)
  else
    drop(ids[i])
  end
end
return out
"""

# ARGV: claim token, claimed ttl ms, the rating range (5 values: the time in µs, '' for the
# Redis clock; start, step, step µs, widest; all '' in a casual pool), then seek ids two by two
# (black, white).  Takes each pair whose two seeks are both still waiting, belong to different
# players, neither of whom blocks the other (each seek's "avoid": the player ids its player blocks)
# and, in a rated pool, are within range (game.lobby.pairing.in_range: their ratings differ
# by at most the range of the one that waited longer); a pair already taken by this same token (a
# retried call) counts as taken.  Returns {waiting count, numbers (1-based) of the pairs taken...}.
CLAIM = _LIB + """
local now = now_ms()
purge(now)
local token, keep = ARGV[1], tonumber(ARGV[2])
local rated = ARGV[4] ~= ''
local at, start, step, step_us, widest
if rated then
  at = tonumber(ARGV[3]) or now_us()
  start, step, step_us, widest = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
end
local function range(id)
  local waited = math.max(0, at - tonumber(redis.call('ZSCORE', KEYS[1], id) or at))
  return math.min(widest, start + step * math.floor(waited / step_us))
end
local function avoids(s, player)
  if type(s.avoid) ~= 'table' then return false end
  for _, p in ipairs(s.avoid) do
    if p == player then return true end
  end
  return false
end
local function meet(a, sa, b, sb)
  if sa.player == sb.player then return false end
  if avoids(sa, sb.player) or avoids(sb, sa.player) then return false end
  if not rated then return true end
  if type(sa.rating) ~= 'number' or type(sb.rating) ~= 'number' then return false end
  return math.abs(sa.rating - sb.rating) <= math.max(range(a), range(b))
end
local out = {0}
for i = 8, #ARGV - 1, 2 do
  local a, b = ARGV[i], ARGV[i + 1]
  if a ~= b then
    if alive(a, now) and alive(b, now) then
      local sa = cjson.decode(redis.call('HGET', KEYS[3], a))
      local sb = cjson.decode(redis.call('HGET', KEYS[3], b))
      if meet(a, sa, b, sb) then
        drop(a)
        drop(b)
        redis.call('ZADD', KEYS[4], now + keep, a, now + keep, b)
        redis.call('HSET', KEYS[5], a, token, b, token)
        table.insert(out, (i - 6) / 2)
      end
    elseif redis.call('HGET', KEYS[5], a) == token and redis.call('HGET', KEYS[5], b) == token then
      table.insert(out, (i - 6) / 2)
    end
  end
end
if #out > 1 then
  keep_at_least(KEYS[4], keep)
  keep_at_least(KEYS[5], keep)
end
out[1] = redis.call('ZCARD', KEYS[2])
return out
"""
