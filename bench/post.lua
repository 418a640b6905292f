-- wrk script: POST the ~1 KB chat-completion request with a gateway key.
local f = io.open(os.getenv("BENCH_BODY"), "r")
wrk.body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "bench-key")

done = function(summary, latency, requests)
  io.write(string.format("BENCH rps=%.1f p50_us=%d p99_us=%d errors=%d non2xx=%d requests=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests))
end
