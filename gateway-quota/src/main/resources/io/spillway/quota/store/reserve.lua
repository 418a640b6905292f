-- Takes a reservation if it fits under the ceiling: the check and the taking are one atomic step.
-- KEYS: pool hash, holds zset. ARGV: tokens, ceiling, member, expires at ms, now ms, keep ms.
-- Answers {admitted 0/1, used, reserved}, the counters as strings (exact past 2^53). Sums saturate.
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
if #expired > 0 then
  local freed = 0
  for _, member in ipairs(expired) do
    freed = freed + tonumber(string.match(member, '|(%d+)$'))
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
  local left = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0') - freed
  if left < 0 then left = 0 end
  redis.call('HSET', KEYS[1], 'reserved', string.format('%d', left))
end
local used = redis.call('HGET', KEYS[1], 'used') or '0'
local reserved = redis.call('HGET', KEYS[1], 'reserved') or '0'
local tokens = tonumber(ARGV[1])
if tonumber(used) + tonumber(reserved) + tokens > tonumber(ARGV[2]) then
  return {0, used, reserved}
end
local r = redis.pcall('HINCRBY', KEYS[1], 'reserved', ARGV[1])
if type(r) == 'table' and r.err then
  if not string.find(r.err, 'overflow') then
    return redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[1]) -- any other error: raised as it is
  end
  redis.call('HSET', KEYS[1], 'reserved', '9223372036854775807')
end
reserved = redis.call('HGET', KEYS[1], 'reserved') -- the exact digits (a Lua number is a double)
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return {1, used, reserved}
