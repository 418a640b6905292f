#!/usr/bin/env bash
# N concurrent SSE streams through Spillway against a slowly streaming fake upstream.
#
#   bench/stream-scale.sh [N]      default N=9000 (see docs/performance.md for the fd ceiling)
#   bench/stream-scale.sh --smoke  200 streams, 3 events
#
# Reports: streams completed and errors, time-to-first-byte p50/p99 direct and through Spillway
# (the difference is Spillway's overhead), Spillway's peak heap, live heap after GC at the plateau,
# and RSS.
#
# Streams open at BENCH_STREAM_RAMP per second (150), and each lasts 90 one-second events, so all
# 9,000 are open together for the last half minute (about 4 minutes in all, with the 90 s direct
# baseline). A faster ramp measures how many new streams per second the machine can set up rather
# than how many it can hold. Spillway's heap is sampled every five seconds from its own /metrics
# (a scrape costs the gateway tens of milliseconds, a jcmd far more), and measured live after a full
# GC once, at the plateau.
#
# Environment: BENCH_PORT_BASE (18950), BENCH_STREAM_EVENTS, BENCH_STREAM_INTERVAL_MS, BENCH_STREAM_RAMP,
# SPILLWAY_CMD (how to start Spillway; default: java -jar gateway-app/target/spillway.jar),
# BENCH_CP (classpath of the load tools; default gateway-bench/target/spillway-bench.jar),
# BENCH_RESULTS_DIR (where the results file is kept; default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
streams=${1:-9000}
events=${BENCH_STREAM_EVENTS:-90}
interval=${BENCH_STREAM_INTERVAL_MS:-1000}
ramp=${BENCH_STREAM_RAMP:-150}
if [ "${1:-}" = "--smoke" ]; then streams=200; events=3; interval=200; fi
base=${BENCH_PORT_BASE:-18950}
up_port=$base; gw_port=$((base + 1))

java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
jar="$root/gateway-app/target/spillway.jar"
bench_jar="$root/gateway-bench/target/spillway-bench.jar"
if [ -z "${SPILLWAY_CMD:-}" ]; then
  [ -f "$jar" ] || { echo "stream-scale: build first: ./mvnw -q -DskipTests package" >&2; exit 2; }
  SPILLWAY_CMD="$java_bin --enable-native-access=ALL-UNNAMED -Xmx1g -jar $jar"
fi
if [ -z "${BENCH_CP:-}" ]; then
  [ -f "$bench_jar" ] || { echo "stream-scale: build first: ./mvnw -q -DskipTests package" >&2; exit 2; }
  BENCH_CP=$bench_jar
fi

work=$(mktemp -d /tmp/spillway-streams.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

"$java_bin" -cp "$BENCH_CP" io.spillway.bench.SlowUpstream --port "$up_port" --events "$events" --interval-ms "$interval" \
  > "$work/upstream.log" 2>&1 &
pids+=($!)

cat > "$work/gateway.yaml" <<YAML
server: { host: 127.0.0.1, port: $gw_port, maxConnections: 30000 }
cloud: { baseUrl: "http://127.0.0.1:$up_port/v1", apiKey: sk-bench, timeout: 120s }
local: { enabled: false }
keys:
  - { key: bench-key, team: bench, tier: gold }
quota:
  monthlyTokens: 1000000000000
  admission: { cloudConcurrency: 100000, queueSize: 100000 }
store: memory
YAML
(cd "$work" && exec $SPILLWAY_CMD serve --config "$work/gateway.yaml" > "$work/spillway.log" 2>&1) &
gw_pid=$!
pids+=($gw_pid)
until curl -fs -o /dev/null "http://127.0.0.1:$gw_port/healthz"; do
  kill -0 "$gw_pid" 2>/dev/null || { cat "$work/spillway.log" >&2; exit 1; }
  sleep 0.05
done
java_pid=$(pgrep -P "$gw_pid" java || echo "$gw_pid")

heap_used_mib() { curl -fs "http://127.0.0.1:$gw_port/metrics" \
  | awk '/^jvm_memory_used_bytes\{/ && /area="heap"/ { s += $NF } END { if (NR) print int(s / 1048576) }'; }
rss_mib() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$java_pid/status"; }

clients() { "$java_bin" -Xss256k -cp "$BENCH_CP" io.spillway.bench.StreamClients "$@"; }

echo "direct baseline: 200 streams straight to the upstream" >&2
clients --url "http://127.0.0.1:$up_port/v1/chat/completions" --streams 200 --label direct | tee "$work/direct.txt" >&2

echo "through Spillway: $streams streams ($events events, ${interval} ms apart)" >&2
clients --url "http://127.0.0.1:$gw_port/v1/chat/completions" --streams "$streams" --ramp-per-second "$ramp" --label spillway > "$work/gateway.txt" 2>&1 &
client_pid=$!
peak_heap=0; peak_rss=0; live_heap="?"
plateau_checked=false
start=$(date +%s)
last_sample=0
while kill -0 "$client_pid" 2>/dev/null; do
  now=$(date +%s)
  if [ $((now - last_sample)) -ge 5 ]; then
    h=$(heap_used_mib || echo 0); r=$(rss_mib || echo 0)
    [ "${h:-0}" -gt "$peak_heap" ] && peak_heap=$h
    [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
    last_sample=$now
  fi
  if ! $plateau_checked && grep -q "all .* streams started" "$work/gateway.txt" 2>/dev/null; then
    "${JAVA_HOME:+$JAVA_HOME/bin/}jcmd" "$java_pid" GC.run >/dev/null 2>&1 || true
    live_heap=$(heap_used_mib || echo "?")
    [ "${live_heap:-0}" -gt "$peak_heap" ] 2>/dev/null && peak_heap=$live_heap
    open_now=$(ss -tn state established "( sport = :$gw_port )" 2>/dev/null | tail -n +2 | wc -l)
    plateau_checked=true
  fi
  sleep 0.2
done
wait "$client_pid" || true
cat "$work/gateway.txt" >&2

g=$(grep '^STREAMS' "$work/gateway.txt"); d=$(grep '^STREAMS' "$work/direct.txt")
field() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print $2}'; }
{
  echo "Spillway streaming scale — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
  echo "streams: $(field "$g" n) requested, $(field "$g" ok) completed, $(field "$g" errors) errors; client connections open at plateau: ${open_now:-?}"
  echo "ttfb p50/p99: direct $(field "$d" ttfb_p50_ms)/$(field "$d" ttfb_p99_ms) ms, through Spillway $(field "$g" ttfb_p50_ms)/$(field "$g" ttfb_p99_ms) ms"
  echo "Spillway heap: peak used ${peak_heap} MiB, live after GC at plateau ${live_heap} MiB (target <= 1024); peak RSS ${peak_rss} MiB"
} | tee "$work/results.txt"
results_dir=${BENCH_RESULTS_DIR:-$root/bench/results}
mkdir -p "$results_dir"
cp "$work/results.txt" "$results_dir/streams-$(date -u +%Y%m%dT%H%M%SZ).txt"
