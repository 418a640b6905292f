-- wrk script: POST a request body (BENCH_BODY) with a gateway key (BENCH_KEY), and the headers of
-- BENCH_HEADERS when set (a file of "Name: value" lines, as a client such as Codex sends them).
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

done = function(summary, latency, requests)
  io.write(string.format("BENCH rps=%.1f p50_us=%d p99_us=%d errors=%d non2xx=%d requests=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests))
end
