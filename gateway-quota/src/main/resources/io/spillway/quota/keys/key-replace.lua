-- Compare-and-set of one key: replaces it only while it is still what the caller read, so a key
-- revoked (or rotated) meanwhile on another replica is never written back.
-- KEYS: keys hash, version. ARGV: id, expected stored JSON, new stored JSON. Answers 1 when replaced.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('INCR', KEYS[2])
return 1
