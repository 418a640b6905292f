-- Revokes a key and bumps the version in one step. KEYS: keys hash, version. ARGV: id.
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('INCR', KEYS[2])
return 1
