-- Stores one response for a team and bounds the team's share: see RedisResponseStore.
-- ARGV: team prefix, id, JSON, size in bytes, ttl ms, now ms, max bytes, owner prefix, team, item ids...
local p = ARGV[1]
local id = ARGV[2]
local ttl = tonumber(ARGV[5])
local now = tonumber(ARGV[6])
local max = tonumber(ARGV[7])
local owner = ARGV[8]
local team = ARGV[9]
local function forget(old)
  local s = redis.call('HGET', p .. 'sizes', old)
  if s then redis.call('DECRBY', p .. 'bytes', s) end
  redis.call('HDEL', p .. 'sizes', old)
  redis.call('ZREM', p .. 'index', old)
  redis.call('DEL', p .. 'r:' .. old)
  if redis.call('GET', owner .. old) == team then redis.call('DEL', owner .. old) end
end
for _, old in ipairs(redis.call('ZRANGEBYSCORE', p .. 'index', '-inf', now - ttl)) do forget(old) end
if redis.call('HEXISTS', p .. 'sizes', id) == 1 then forget(id) end
redis.call('SET', p .. 'r:' .. id, ARGV[3], 'PX', ttl)
redis.call('SET', owner .. id, team, 'PX', ttl)
for i = 10, #ARGV do
  redis.call('SET', p .. 'i:' .. ARGV[i], id, 'PX', ttl, 'NX')
  redis.call('SET', owner .. ARGV[i], team, 'PX', ttl)
end
redis.call('ZADD', p .. 'index', now, id)
redis.call('HSET', p .. 'sizes', id, ARGV[4])
local total = redis.call('INCRBY', p .. 'bytes', ARGV[4])
while total > max do
  local oldest = redis.call('ZRANGE', p .. 'index', 0, 0)[1]
  if not oldest or oldest == id then break end
  forget(oldest)
  total = tonumber(redis.call('GET', p .. 'bytes') or '0')
end
for _, k in ipairs({'index', 'sizes', 'bytes'}) do redis.call('PEXPIRE', p .. k, ttl) end
return total
