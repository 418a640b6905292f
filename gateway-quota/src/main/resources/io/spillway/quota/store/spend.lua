-- Adds a spend amount once: a replayed amount finds its marker. Sums saturate at 2^63-1.
-- KEYS: spend hash, unpriced hash, marker. ARGV: team|tier, nanos, tier, unpriced (0/1), marker ms, keep ms.
local MAX = '9223372036854775807'
local function add(key, field, n)
  local r = redis.pcall('HINCRBY', key, field, n)
  if type(r) == 'table' and r.err then
    if not string.find(r.err, 'overflow') then
      return redis.call('HINCRBY', key, field, n) -- any other error (not an integer): raised as it is
    end
    redis.call('HSET', key, field, MAX)
  end
end
if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[5]) then
  return {0}
end
add(KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
if ARGV[4] == '1' then
  add(KEYS[2], ARGV[3], 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
return {1}
