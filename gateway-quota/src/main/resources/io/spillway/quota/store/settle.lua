-- Settles a reservation with the tokens actually used, once: a replayed settlement finds its marker.
-- KEYS: pool hash, holds zset, teams hash, settled marker.
-- ARGV: member, held tokens, actual tokens (a non-negative integer), team, marker ms, keep ms.
-- Sums saturate at 2^63-1 instead of failing (HINCRBY refuses to overflow); the counters are answered
-- as strings: {applied 0/1, used, reserved}.
local MAX = '9223372036854775807'
local function add(key, field, n)
  local r = redis.pcall('HINCRBY', key, field, n)
  if type(r) == 'table' and r.err then
    if not string.find(r.err, 'overflow') then
      return redis.call('HINCRBY', key, field, n) -- any other error (not an integer): raised as it is
    end
    redis.call('HSET', key, field, MAX)
  end
  return redis.call('HGET', key, field) -- the exact digits (a Lua number is a double)
end
if not redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[5]) then
  return {0, redis.call('HGET', KEYS[1], 'used') or '0', redis.call('HGET', KEYS[1], 'reserved') or '0'}
end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  local left = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0') - tonumber(ARGV[2])
  if left < 0 then left = 0 end
  redis.call('HSET', KEYS[1], 'reserved', string.format('%d', left))
end
local used = add(KEYS[1], 'used', ARGV[3])
if ARGV[3] ~= '0' then
  add(KEYS[3], ARGV[4], ARGV[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {1, used, redis.call('HGET', KEYS[1], 'reserved') or '0'}
