#!/usr/bin/env bash
# N concurrent SSE streams through Spillway against a slowly streaming fake upstream.
#
#   bench/stream-scale.sh [N]      default N=10000
#   bench/stream-scale.sh --smoke  200 streams, 3 events
#
# Reports: streams completed and errors; time-to-first-byte p50/p99 straight to the upstream and
# through Spillway (the difference is Spillway's overhead); at the plateau (all N open), Spillway's
# open file descriptors, its TCP connections to the upstream and to the clients, and its live heap
# after a full GC; its peak heap and peak RSS over the run.
#
# The fake upstream (gateway-bench's SlowUpstream) speaks HTTP/1.1 and h2c with prior knowledge on
# one port. With BENCH_UPSTREAM_H2C=1 (the default) Spillway is configured with `cloud.h2c: true` and
# multiplexes the streams on a few upstream connections, so each stream costs Spillway one socket
# (the client's); with BENCH_UPSTREAM_H2C=0 it speaks HTTP/1.1 upstream and each stream costs two,
# which puts 10,000 streams past a 20,000-descriptor limit.
#
# One StreamClients process (one socket per stream) first warms itself up with 300 streams dropped at
# their first event, then measures 200 streams straight to the upstream (the direct baseline), then
# the N streams through Spillway; so neither measurement pays for the client JVM's cold start.
# Spillway's own warm-up is measured with them, unless BENCH_GATEWAY_WARMUP streams (default 0) are
# first sent through it and dropped at their first event.
# Streams open at BENCH_STREAM_RAMP per second (150), and each lasts 100 one-second events, so all
# 10,000 are open together for about the last half minute (about 5 minutes in all, with the 100 s
# direct baseline). A faster ramp measures how many new streams per second the machine can set up
# rather than how many it can hold. Spillway's heap is sampled every five seconds from its own
# /metrics (a scrape costs the gateway tens of milliseconds, a jcmd far more), and measured live after
# a full GC once, at the plateau, when every stream has had its first byte (that collection stops
# the gateway for hundreds of milliseconds, which must not be counted as any stream's wait).
#
# Environment: BENCH_PORT_BASE (18950), BENCH_STREAM_EVENTS (100), BENCH_STREAM_INTERVAL_MS (1000),
# BENCH_STREAM_RAMP (150), BENCH_UPSTREAM_H2C (1: h2c to the upstream; 0: HTTP/1.1),
# BENCH_GATEWAY_WARMUP (0: streams through Spillway before measuring, dropped at their first event),
# BENCH_AOT (0; with 1, Spillway starts from an AOT cache a training run of 600 streams made first;
# JDK 25+ and the packaged jar; uses two more ports),
# SPILLWAY_CMD (how to start Spillway; default: java -jar gateway-app/target/spillway.jar),
# BENCH_CP (classpath of the load tools; default gateway-bench/target/spillway-bench.jar),
# BENCH_RESULTS_DIR (where the results file is kept; default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
streams=${1:-10000}
events=${BENCH_STREAM_EVENTS:-100}
interval=${BENCH_STREAM_INTERVAL_MS:-1000}
ramp=${BENCH_STREAM_RAMP:-150}
h2c=${BENCH_UPSTREAM_H2C:-1}
gateway_warmup=${BENCH_GATEWAY_WARMUP:-0}
if [ "${1:-}" = "--smoke" ]; then streams=200; events=3; interval=200; fi
case "$h2c" in
  1) upstream_protocol=h2c; h2c_key=", h2c: true" ;;
  0) upstream_protocol=HTTP/1.1; h2c_key= ;;
  *) echo "stream-scale: BENCH_UPSTREAM_H2C must be 0 or 1, not '$h2c'" >&2; exit 2 ;;
esac
base=${BENCH_PORT_BASE:-18950}
up_port=$base; gw_port=$((base + 1))

fd_limit=$(ulimit -n)
sockets_per_stream=$([ "$h2c" = 1 ] && echo 1 || echo 2)
if [ "$fd_limit" != unlimited ] && [ $((streams * sockets_per_stream + 200)) -gt "$fd_limit" ]; then
  echo "stream-scale: warning: $streams streams over $upstream_protocol need about $((streams * sockets_per_stream + 200))" \
    "descriptors in Spillway; ulimit -n is $fd_limit" >&2
fi

java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
jar="$root/gateway-app/target/spillway.jar"
bench_jar="$root/gateway-bench/target/spillway-bench.jar"
jvm_opts="--enable-native-access=ALL-UNNAMED -Xmx1g"
own_cmd=
if [ -z "${SPILLWAY_CMD:-}" ]; then
  [ -f "$jar" ] || { echo "stream-scale: build first: ./mvnw -q -DskipTests package" >&2; exit 2; }
  SPILLWAY_CMD="$java_bin $jvm_opts -jar $jar"
  own_cmd=1
fi
aot=${BENCH_AOT:-0}
if [ "$aot" = 1 ] && { [ -z "$own_cmd" ] || ! "$java_bin" -XX:+PrintFlagsFinal -version 2>/dev/null | grep -q ' AOTCacheOutput '; }; then
  echo "stream-scale: BENCH_AOT=1 needs JDK 25+ and the packaged jar (no SPILLWAY_CMD)" >&2; exit 2
fi
if [ -z "${BENCH_CP:-}" ]; then
  [ -f "$bench_jar" ] || { echo "stream-scale: build first: ./mvnw -q -DskipTests package" >&2; exit 2; }
  BENCH_CP=$bench_jar
fi

work=$(mktemp -d /tmp/spillway-streams.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

"$java_bin" --enable-native-access=ALL-UNNAMED -cp "$BENCH_CP" io.spillway.bench.SlowUpstream \
  --port "$up_port" --events "$events" --interval-ms "$interval" --max-concurrent-streams 100000 \
  > "$work/upstream.log" 2>&1 &
pids+=($!)

gateway_yaml() { # gateway-port upstream-port
  cat <<YAML
server: { host: 127.0.0.1, port: $1, maxConnections: 30000 }
cloud: { baseUrl: "http://127.0.0.1:$2/v1", apiKey: sk-bench, timeout: 120s$h2c_key }
local: { enabled: false }
keys:
  - { key: bench-key, team: bench, tier: gold }
quota:
  monthlyTokens: 1000000000000
  admission: { cloudConcurrency: 100000, queueSize: 100000 }
store: memory
YAML
}
gateway_yaml "$gw_port" "$up_port" > "$work/gateway.yaml"

# With BENCH_AOT=1, Spillway starts from an AOT cache (JDK 25, -XX:AOTCache) made first by a
# training run of the same config against a second, quick fake upstream (3 events 50 ms apart):
# 600 streams, as docker/Dockerfile trains its image's cache on streams too.
if [ "$aot" = 1 ]; then
  train_up=$((base + 2)); train_gw=$((base + 3))
  "$java_bin" --enable-native-access=ALL-UNNAMED -cp "$BENCH_CP" io.spillway.bench.SlowUpstream \
    --port "$train_up" --events 3 --interval-ms 50 > "$work/train-upstream.log" 2>&1 &
  train_up_pid=$!
  pids+=($train_up_pid)
  gateway_yaml "$train_gw" "$train_up" > "$work/train.yaml"
  (cd "$work" && exec "$java_bin" -XX:AOTCacheOutput="$work/spillway.aot" $jvm_opts -jar "$jar" \
    serve --config "$work/train.yaml" > "$work/train.log" 2>&1) &
  train_pid=$!
  until curl -fs -o /dev/null "http://127.0.0.1:$train_gw/healthz"; do
    kill -0 "$train_pid" 2>/dev/null || { echo "stream-scale: the AOT training run did not start:" >&2; cat "$work/train.log" >&2; exit 1; }
    sleep 0.05
  done
  echo "AOT cache: training run (600 streams)" >&2
  "$java_bin" -cp "$BENCH_CP" io.spillway.bench.StreamClients --url "http://127.0.0.1:$train_gw/v1/chat/completions" \
    --streams 600 --ramp-per-second 300 --warmup 0 --label train > "$work/train-clients.txt" 2>&1
  kill -TERM "$train_pid"; wait "$train_pid" 2>/dev/null || true
  kill "$train_up_pid" 2>/dev/null || true
  [ -s "$work/spillway.aot" ] || { echo "stream-scale: the training run wrote no AOT cache:" >&2; tail -20 "$work/train.log" >&2; exit 1; }
  SPILLWAY_CMD="$java_bin -XX:AOTCache=$work/spillway.aot $jvm_opts -jar $jar"
fi
(cd "$work" && exec $SPILLWAY_CMD serve --config "$work/gateway.yaml" > "$work/spillway.log" 2>&1) &
gw_pid=$!
pids+=($gw_pid)
until curl -fs -o /dev/null "http://127.0.0.1:$gw_port/healthz"; do
  if ! kill -0 "$gw_pid" 2>/dev/null; then
    cat "$work/spillway.log" >&2
    if grep -q "h2c" "$work/spillway.log"; then
      echo "stream-scale: this Spillway build does not take cloud.h2c; run with BENCH_UPSTREAM_H2C=0" >&2
    fi
    exit 1
  fi
  sleep 0.05
done
java_pid=$(pgrep -P "$gw_pid" java || echo "$gw_pid")
until (exec 3<>"/dev/tcp/127.0.0.1/$up_port") 2>/dev/null; do sleep 0.05; done

heap_used_mib() { curl -fs "http://127.0.0.1:$gw_port/metrics" \
  | awk '/^jvm_memory_used_bytes\{/ && /area="heap"/ { s += $NF } END { if (NR) print int(s / 1048576) }'; }
rss_mib() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$java_pid/status"; }
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
established() { ss -tn state established "( $1 )" 2>/dev/null | tail -n +2 | wc -l; }

echo "direct baseline (200 streams straight to the upstream, after a 300-stream warm-up), then" \
  "$streams streams through Spillway ($events events, ${interval} ms apart, upstream over $upstream_protocol)" >&2
"$java_bin" -cp "$BENCH_CP" io.spillway.bench.StreamClients \
  --baseline-url "http://127.0.0.1:$up_port/v1/chat/completions" --baseline-streams 200 --warmup 300 \
  --gateway-warmup "$gateway_warmup" \
  --url "http://127.0.0.1:$gw_port/v1/chat/completions" --streams "$streams" --ramp-per-second "$ramp" \
  --label spillway > "$work/clients.txt" 2>&1 &
client_pid=$!
peak_heap=0; peak_rss=0; live_heap="?"; plateau_rss="?"
plateau_checked=false
last_sample=0
while kill -0 "$client_pid" 2>/dev/null; do
  now=$(date +%s)
  if [ $((now - last_sample)) -ge 5 ]; then
    h=$(heap_used_mib || echo 0); r=$(rss_mib || echo 0)
    [ "${h:-0}" -gt "$peak_heap" ] && peak_heap=$h
    [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
    last_sample=$now
  fi
  # Once every stream has had its first byte: the full GC below stops the gateway for a few hundred
  # milliseconds, which would otherwise be the time to first byte of the last streams opened.
  if ! $plateau_checked && grep -q "all $streams streams answered (spillway)" "$work/clients.txt" 2>/dev/null; then
    fds=$(fds_of "$java_pid"); client_fds=$(fds_of "$client_pid")
    upstream_conns=$(established "dport = :$up_port")
    client_conns=$(established "sport = :$gw_port")
    "${JAVA_HOME:+$JAVA_HOME/bin/}jcmd" "$java_pid" GC.run >/dev/null 2>&1 || true
    live_heap=$(heap_used_mib || echo "?")
    [ "${live_heap:-0}" -gt "$peak_heap" ] 2>/dev/null && peak_heap=$live_heap
    plateau_rss=$(rss_mib || echo "?")
    [ "${plateau_rss:-0}" -gt "$peak_rss" ] 2>/dev/null && peak_rss=$plateau_rss
    plateau_checked=true
  fi
  sleep 0.2
done
wait "$client_pid" || true
cat "$work/clients.txt" >&2

g=$(grep '^STREAMS label=spillway' "$work/clients.txt" || true); d=$(grep '^STREAMS label=direct' "$work/clients.txt" || true)
field() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print $2}'; }
{
  echo "Spillway streaming scale — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, upstream over $upstream_protocol, ulimit -n $fd_limit"
  echo "$events events ${interval} ms apart, $ramp new streams/s; Spillway warm-up before measuring: $gateway_warmup streams;" \
    "AOT cache trained on streams: $([ "$aot" = 1 ] && echo yes || echo no); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "streams: $(field "$g" n) requested, $(field "$g" ok) completed, $(field "$g" errors) errors (target: 10000 streams, 0 errors)"
  echo "ttfb p50/p99: direct $(field "$d" ttfb_p50_ms)/$(field "$d" ttfb_p99_ms) ms, through Spillway $(field "$g" ttfb_p50_ms)/$(field "$g" ttfb_p99_ms) ms" \
    "(target: p99 through <= 50 ms from a cold start, <= 10 ms warm)"
  echo "ttfb p99 through Spillway by when the stream opened: first 2 s $(field "$g" early_p99_ms) ms, after $(field "$g" later_p99_ms) ms" \
    "(direct: $(field "$d" early_p99_ms) / $(field "$d" later_p99_ms) ms)"
  echo "at plateau: Spillway open fds ${fds:-?}, upstream connections ${upstream_conns:-?}, client connections ${client_conns:-?}; StreamClients open fds ${client_fds:-?}"
  echo "Spillway heap: peak used ${peak_heap} MiB, live after GC at plateau ${live_heap} MiB (target <= 256); RSS at plateau ${plateau_rss} MiB, peak ${peak_rss} MiB"
  budget=$(grep -o 'accepting at most [0-9]* connections' "$work/spillway.log" | head -1 || true)
  [ -n "$budget" ] && echo "note: Spillway lowered server.maxConnections at start to fit its descriptor limit: $budget"
  true
} | tee "$work/results.txt"
results_dir=${BENCH_RESULTS_DIR:-$root/bench/results}
mkdir -p "$results_dir"
cp "$work/results.txt" "$results_dir/streams-$(date -u +%Y%m%dT%H%M%SZ).txt"
