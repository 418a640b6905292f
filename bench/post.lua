-- wrk script: POST a request body (BENCH_BODY) with a gateway key (BENCH_KEY), and the headers of
-- BENCH_HEADERS when set (a file of "Name: value" lines, as a client such as Codex sends them).
-- With BENCH_TURN_BEFORE set, every request is a new turn of the conversation: a user message of its
-- own (about 120 bytes) goes in just before the first occurrence of that text in the body (for a
-- chat body, the end of its messages array), so the prefix repeats byte for byte and one item is new.
local f = io.open(os.getenv("BENCH_BODY"), "r")
wrk.body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "bench-key")
local extra = os.getenv("BENCH_HEADERS")
if extra and extra ~= "" then
  for line in io.lines(extra) do
    local name, value = line:match("^([^:]+):%s*(.*)$")
    if name then wrk.headers[name] = value end
  end
end

local turn_before = os.getenv("BENCH_TURN_BEFORE")
if turn_before and turn_before ~= "" then
  local at = wrk.body:find(turn_before, 1, true)
  assert(at, "BENCH_TURN_BEFORE is not in the body")
  local head, tail = wrk.body:sub(1, at - 1), wrk.body:sub(at)
  local threads = 0
  setup = function(thread)
    threads = threads + 1
    thread:set("tid", threads)
  end
  -- Numbered per wrk run too: Spillway outlives a run, and a turn it saw in an earlier run would be
  -- a repeated piece, not a new one.
  local run = tostring(os.time())
  local turns = 0
  request = function()
    turns = turns + 1
    return wrk.format(nil, nil, nil, head .. ',{"role":"user","content":"Turn ' .. turns .. ' of run ' .. run
      .. ' on thread ' .. tostring(tid) .. ': run the failing test again and show me what it prints now."}' .. tail)
  end
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH rps=%.1f p50_us=%d p99_us=%d errors=%d non2xx=%d requests=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests))
end
