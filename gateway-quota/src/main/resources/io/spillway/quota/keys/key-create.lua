-- Adds a key under an id no key has, and bumps the version, in one step.
-- KEYS: keys hash, version. ARGV: id, stored JSON. Answers 1 when added, 0 when the id exists.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return 0
end
redis.call('INCR', KEYS[2])
return 1
