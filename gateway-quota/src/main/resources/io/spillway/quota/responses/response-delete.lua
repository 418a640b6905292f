-- Forgets one response of a team: see RedisResponseStore.
-- ARGV: team prefix, id, owner prefix, team
local p = ARGV[1]
local id = ARGV[2]
if redis.call('DEL', p .. 'r:' .. id) == 0 then return 0 end
local s = redis.call('HGET', p .. 'sizes', id)
if s then redis.call('DECRBY', p .. 'bytes', s) end
redis.call('HDEL', p .. 'sizes', id)
redis.call('ZREM', p .. 'index', id)
if redis.call('GET', ARGV[3] .. id) == ARGV[4] then redis.call('DEL', ARGV[3] .. id) end
return 1
