-- Adds a replica's risk-count deltas, deletes buckets older than the windows, answers both hashes.
-- KEYS, ARGV: see FleetRiskCounts.SCRIPT's comment.
local oldestGrowth = tonumber(ARGV[1])
local oldestRecent = tonumber(ARGV[2])
local g = tonumber(ARGV[4])
local i = 5
for _ = 1, g do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
while i <= #ARGV do
  redis.call('HINCRBY', KEYS[2], ARGV[i] .. ':n', ARGV[i + 1])
  redis.call('HINCRBY', KEYS[2], ARGV[i] .. ':e', ARGV[i + 2])
  redis.call('HINCRBY', KEYS[2], ARGV[i] .. ':l', ARGV[i + 3])
  i = i + 4
end
local function prune(key, oldest)
  for _, field in ipairs(redis.call('HKEYS', key)) do
    local slice = tonumber(string.match(field, '^%-?%d+'))
    if slice == nil or slice < oldest then redis.call('HDEL', key, field) end
  end
end
prune(KEYS[1], oldestGrowth)
prune(KEYS[2], oldestRecent)
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
