-- Adds a key's settled tokens once per call id: a write-back of a call whose reply was lost finds
-- the marker and counts nothing more. The sum saturates at 2^63-1 instead of failing.
-- KEYS: usage hash, marker. ARGV: key id, tokens, marker ms, keep seconds. Answers 1 when counted.
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then
  return 0
end
local r = redis.pcall('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
if type(r) == 'table' and r.err then
  if not string.find(r.err, 'overflow') then
    redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2]) -- any other error (not an integer): raised as it is
  end
  redis.call('HSET', KEYS[1], ARGV[1], '9223372036854775807')
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
