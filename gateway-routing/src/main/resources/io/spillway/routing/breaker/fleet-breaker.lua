-- The fleet breaker's one script: every change to the shared breaker is one atomic step in Redis.
-- Keys, arguments and operations: see FleetScript's class comment.
local now = tonumber(ARGV[1])
local historySize = tonumber(ARGV[2])
local op = ARGV[4]
local f = redis.call('HMGET', KEYS[1], 'state', 'since', 'until', 'streak', 'retryAfter',
                     'probe', 'probeUntil', 'version', 'reason', 'epoch')
local s = {state = f[1] or 'closed', since = tonumber(f[2] or ARGV[1]), till = tonumber(f[3] or '0'),
           streak = tonumber(f[4] or '0'), retryAfter = tonumber(f[5] or '-1'), probe = f[6] or '',
           probeUntil = tonumber(f[7] or '0'), version = tonumber(f[8] or '0'), reason = f[9] or '',
           epoch = f[10]}
local changed = false
if not s.epoch then
  s.epoch = ARGV[#ARGV]; changed = true
end
local function int(n) return string.format('%d', n) end
local function fmt(ms)
  if ms % 3600000 == 0 then return int(ms / 3600000) .. 'h' end
  if ms % 60000 == 0 then return int(ms / 60000) .. 'm' end
  if ms % 1000 == 0 then return int(ms / 1000) .. 's' end
  return int(ms) .. 'ms'
end
local function move(to, at, reason)
  redis.call('RPUSH', KEYS[2], s.state .. '|' .. to .. '|' .. int(at) .. '|' .. reason)
  redis.call('LTRIM', KEYS[2], -historySize, -1)
  s.state = to; s.since = at; s.reason = reason; s.probe = ''; s.probeUntil = 0
  s.streak = 0; s.retryAfter = -1; s.till = 0
  changed = true
end
local function openFor(retryAfter, localFor, maxLocalFor)
  if retryAfter > localFor then return math.min(retryAfter, maxLocalFor) end
  return localFor
end
if s.state == 'open' and now >= s.till then
  move('half_open', s.till, 'localFor elapsed; the next request probes the cloud')
end
local granted = 0
if op == 'probe' then
  if s.state == 'half_open' and (s.probe == '' or s.probeUntil <= now) then
    s.probe = ARGV[5]; s.probeUntil = now + tonumber(ARGV[6]); changed = true; granted = 1
  end
elseif op == 'capacity' then
  if s.state == 'closed' then
    local retryAfter = math.max(s.retryAfter, tonumber(ARGV[5]))
    local streak = s.streak + 1
    if streak >= tonumber(ARGV[6]) then
      local span = openFor(retryAfter, tonumber(ARGV[7]), tonumber(ARGV[8]))
      local why = int(streak) .. ' capacity answers in a row across the fleet (last: ' .. ARGV[9]
      if retryAfter >= 0 then why = why .. ', Retry-After ' .. fmt(retryAfter) end
      move('open', now, why .. '); ' .. ARGV[10] .. fmt(span))
      s.till = now + span
    else
      s.streak = streak; s.retryAfter = retryAfter; changed = true
    end
    granted = 1
  end
elseif op == 'success' then
  if s.state == 'closed' and s.streak > 0 then
    s.streak = 0; s.retryAfter = -1; changed = true
  end
elseif op == 'verdict' then
  if s.state == 'half_open' and s.probe == ARGV[5] then
    if ARGV[6] == 'success' then
      move('closed', now, 'the probe to the cloud succeeded')
    elseif ARGV[6] == 'reopen' then
      local span = openFor(tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]))
      move('open', now, 'the probe got ' .. ARGV[10] .. '; ' .. ARGV[11] .. fmt(span))
      s.till = now + span
    else
      s.probe = ''; s.probeUntil = 0; changed = true
    end
    granted = 1
  end
elseif op == 'release' then
  if s.state == 'half_open' and s.probe == ARGV[5] then
    s.probe = ''; s.probeUntil = 0; changed = true; granted = 1
  end
elseif op == 'override' then
  local mode = ARGV[5]
  if mode == 'open' and s.state ~= 'forced_open' then
    move('forced_open', now, 'manual override: open')
  elseif mode == 'closed' and s.state ~= 'forced_closed' then
    move('forced_closed', now, 'manual override: closed')
  elseif mode == 'auto' and s.state == 'forced_open' then
    move('half_open', now, 'manual override: auto')
  elseif mode == 'auto' and s.state == 'forced_closed' then
    move('closed', now, 'manual override: auto')
  end
  granted = 1
end
if changed then
  s.version = s.version + 1
  redis.call('HSET', KEYS[1], 'state', s.state, 'since', int(s.since), 'until', int(s.till),
             'streak', int(s.streak), 'retryAfter', int(s.retryAfter), 'probe', s.probe,
             'probeUntil', int(s.probeUntil), 'version', int(s.version), 'reason', s.reason,
             'epoch', s.epoch)
  redis.call('PUBLISH', ARGV[3], table.concat({s.state, int(s.since), int(s.till), int(s.streak),
             s.probe, int(s.probeUntil), int(s.version), s.epoch, s.reason}, '|'))
end
return {granted, s.state, int(s.since), int(s.till), int(s.streak), s.probe, int(s.probeUntil),
        int(s.version), s.epoch, s.reason}
