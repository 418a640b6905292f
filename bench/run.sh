#!/usr/bin/env bash
# Spillway side by side with nginx, in one run on one machine.
#
#   bench/run.sh            full run (about 6 minutes)
#   bench/run.sh --smoke    a few seconds: checks the harness works and reports numbers
#
# Starts nginx as a fixed fake upstream (`return 200` with an OpenAI chat-completion body), nginx
# `proxy_pass` to it as the one-hop baseline, and Spillway with its default pipeline in front of the
# same upstream; drives each in turn (interleaved, several rounds) with wrk, a ~1 KB chat-completion
# POST, at 64 connections and at 1 connection; prints requests/s, p50 and p99, and Spillway's ratios.
#
# Start to ready is timed three times from a cold JVM, and three times again with an AOT cache
# (JDK 25+, -XX:AOTCache, built by a short training run as docker/Dockerfile builds it).
#
# Environment: BENCH_DURATION (default 10s), BENCH_ROUNDS (3), BENCH_PORT_BASE (18930; uses 4 ports, 5 with h2c),
# BENCH_UPSTREAM_H2C (0; with 1, Spillway reaches the fake upstream over h2c with prior knowledge on its own
# nginx port, `cloud.h2c: true`, while nginx proxy_pass and the direct runs stay on HTTP/1.1),
# SPILLWAY_CMD (how to start Spillway; default: java -jar gateway-app/target/spillway.jar),
# BENCH_RESULTS_DIR (where the results file is kept; default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

duration=${BENCH_DURATION:-10s}
rounds=${BENCH_ROUNDS:-3}
warmup=${BENCH_WARMUP:-10s}
if [ "${1:-}" = "--smoke" ]; then
  duration=2s; rounds=1; warmup=1s
fi
base=${BENCH_PORT_BASE:-18930}
up_port=$base; proxy_port=$((base + 1)); gw_port=$((base + 2)); start_port=$((base + 3)); h2c_port=$((base + 4))
case "${BENCH_UPSTREAM_H2C:-0}" in
  0) spillway_upstream="http://127.0.0.1:$up_port/v1"; h2c_key=; upstream_protocol=HTTP/1.1 ;;
  1) spillway_upstream="http://127.0.0.1:$h2c_port/v1"; h2c_key=", h2c: true"; upstream_protocol=h2c ;;
  *) echo "bench: BENCH_UPSTREAM_H2C must be 0 or 1" >&2; exit 2 ;;
esac

for tool in nginx wrk curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench: $tool is not installed (apt-get install -y nginx wrk curl)" >&2; exit 2; }
done
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
jar="$root/gateway-app/target/spillway.jar"
jvm_opts="--enable-native-access=ALL-UNNAMED -Xms512m -Xmx1g"
own_cmd=
if [ -z "${SPILLWAY_CMD:-}" ]; then
  [ -f "$jar" ] || { echo "bench: build first: ./mvnw -q -DskipTests package" >&2; exit 2; }
  SPILLWAY_CMD="$java_bin $jvm_opts -jar $jar"
  own_cmd=1
fi

work=$(mktemp -d /tmp/spillway-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -f "$work/nginx.pid" ]; then kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; fi
  wait 2>/dev/null || true
}
trap cleanup EXIT

# nginx: the fake upstream and the proxy_pass baseline.
body=$(tr -d '\n' < "$root/bench/chat-response.json")
mkdir -p "$work/tmp"
{
  [ "$(id -u)" = 0 ] && echo "user root;"
  cat <<NGINX
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $work/tmp/body;
  proxy_temp_path $work/tmp/proxy;
  fastcgi_temp_path $work/tmp/fastcgi;
  uwsgi_temp_path $work/tmp/uwsgi;
  scgi_temp_path $work/tmp/scgi;
  keepalive_requests 1000000;
  upstream fake_openai { server 127.0.0.1:$up_port; keepalive 256; }
  server {
    listen 127.0.0.1:$up_port;
    location / { default_type application/json; return 200 '$body'; }
  }
NGINX
  # nginx 1.22 speaks plaintext HTTP/2 only with prior knowledge, and then only HTTP/2: its own port.
  if [ "$upstream_protocol" = h2c ]; then cat <<NGINX
  server {
    listen 127.0.0.1:$h2c_port http2;
    location / { default_type application/json; return 200 '$body'; }
  }
NGINX
  fi
  cat <<NGINX
  server {
    listen 127.0.0.1:$proxy_port;
    location / {
      proxy_pass http://fake_openai;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
NGINX
} > "$work/nginx.conf"
nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
pids+=($!)

# Spillway: default pipeline (auth, shaping, quota, admission, breaker, router) in front of the fake upstream.
cat > "$work/gateway.yaml" <<YAML
server: { host: 127.0.0.1, port: $gw_port }
cloud: { baseUrl: "$spillway_upstream", apiKey: sk-bench$h2c_key }
local: { enabled: false }
keys:
  - { key: bench-key, team: bench, tier: gold }
quota:
  monthlyTokens: 1000000000000
store: embedded:$work/data
YAML
(cd "$work" && exec $SPILLWAY_CMD serve --config "$work/gateway.yaml" > "$work/spillway.log" 2>&1) &
gw_pid=$!
pids+=($gw_pid)
until curl -fs -o /dev/null "http://127.0.0.1:$gw_port/readyz"; do
  kill -0 "$gw_pid" 2>/dev/null || { echo "bench: Spillway did not start:" >&2; cat "$work/spillway.log" >&2; exit 1; }
  sleep 0.01
done
java_pid=$(pgrep -P "$gw_pid" java || echo "$gw_pid")
rss_of() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status" 2>/dev/null || echo "?"; }
idle_rss=$(rss_of "$java_pid")
until curl -fs -o /dev/null "http://127.0.0.1:$up_port/v1/chat/completions" && curl -fs -o /dev/null "http://127.0.0.1:$proxy_port/v1/chat/completions"; do sleep 0.05; done

export BENCH_BODY="$root/bench/chat-request.json" BENCH_KEY=bench-key
probe=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-key' \
  --data-binary @"$BENCH_BODY" "http://127.0.0.1:$gw_port/v1/chat/completions")
[ "$probe" = 200 ] || { echo "bench: Spillway answered $probe to the benchmark request" >&2; cat "$work/spillway.log" >&2; exit 1; }

declare -A url=([direct]="http://127.0.0.1:$up_port/v1/chat/completions"
                [nginx]="http://127.0.0.1:$proxy_port/v1/chat/completions"
                [spillway]="http://127.0.0.1:$gw_port/v1/chat/completions")
targets=(direct nginx spillway)

run_wrk() { # target connections duration -> "rps p50 p99 errors non2xx"
  local threads=2; [ "$2" -lt 2 ] && threads=1
  wrk -t"$threads" -c"$2" -d"$3" --latency -s "$root/bench/post.lua" "${url[$1]}" \
    | awk '/^BENCH/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                      print v["rps"], v["p50_us"], v["p99_us"], v["errors"], v["non2xx"] }'
}

echo "warming up ($warmup each)..." >&2
for t in "${targets[@]}"; do run_wrk "$t" 64 "$warmup" > /dev/null; done

declare -A samples
for round in $(seq 1 "$rounds"); do
  for conns in 64 1; do
    for t in "${targets[@]}"; do
      echo "round $round/$rounds: $t, $conns connection(s), $duration" >&2
      samples[$t,$conns]+="$(run_wrk "$t" "$conns" "$duration");"
    done
  done
done
load_rss=$(rss_of "$java_pid")

# Start to ready: a fresh Spillway on its own port and data directory, timed from exec to the first
# 200 from /readyz, three times; then the same with an AOT cache when this JDK can make one.
sed -e "s/port: $gw_port/port: $start_port/" -e "s#embedded:$work/data#embedded:$work/start-data#" \
  "$work/gateway.yaml" > "$work/start.yaml"
start_to_ready() { # command... -> "wall-ms cpu-ms" (CPU: the JVM's user + system time up to that 200)
  rm -rf "$work/start-data"
  local t0 pid cpu
  t0=$(date +%s%N)
  (cd "$work" && exec "$@" serve --config "$work/start.yaml" > "$work/start.log" 2>&1) &
  pid=$!
  until curl -fs -o /dev/null "http://127.0.0.1:$start_port/readyz"; do
    kill -0 "$pid" 2>/dev/null || { echo "bench: Spillway did not start:" >&2; cat "$work/start.log" >&2; exit 1; }
    sleep 0.005
  done
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$pid/stat" 2>/dev/null || echo 0)
  echo "$(( ($(date +%s%N) - t0) / 1000000 )) $cpu"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}
starts=$(for i in 1 2 3; do start_to_ready $SPILLWAY_CMD; done | tr '\n' ';')
aot_starts=
if [ -n "$own_cmd" ] && "$java_bin" -XX:+PrintFlagsFinal -version 2>/dev/null | grep -q ' AOTCacheOutput '; then
  echo "AOT cache: training run" >&2
  (cd "$work" && exec "$java_bin" -XX:AOTCacheOutput="$work/spillway.aot" $jvm_opts -jar "$jar" \
     serve --config "$work/start.yaml" > "$work/train.log" 2>&1) &
  train_pid=$!
  until curl -fs -o /dev/null "http://127.0.0.1:$start_port/readyz"; do sleep 0.05; done
  BENCH_BODY="$root/bench/chat-request.json" wrk -t1 -c4 -d3s -s "$root/bench/post.lua" \
    "http://127.0.0.1:$start_port/v1/chat/completions" > /dev/null
  kill -TERM "$train_pid"; wait "$train_pid" 2>/dev/null || true
  if [ -f "$work/spillway.aot" ]; then
    aot_starts=$(for i in 1 2 3; do start_to_ready "$java_bin" -XX:AOTCache="$work/spillway.aot" $jvm_opts -jar "$jar"; done | tr '\n' ';')
  fi
fi

median() { tr ' ' '\n' | awk 'NF' | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
starts_column() { # "wall cpu;wall cpu;..." column -> its median
  echo "$1" | tr ';' '\n' | awk -v c="$2" 'NF {print $c}' | tr '\n' ' ' | median
}
column_of() { # target conns column
  echo "${samples[$1,$2]}" | tr ';' '\n' | awk -v c="$3" 'NF {print $c}' | tr '\n' ' ' | median
}

out="$work/results.txt"
{
  echo "Spillway benchmark — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r)"
  echo "wrk ${duration} x ${rounds} rounds (median), interleaved; ~1 KB chat-completion POST; Spillway to the upstream over $upstream_protocol"
  echo
  printf "%-6s %-9s %12s %10s %10s %8s\n" conns target "req/s" "p50 µs" "p99 µs" errors
  for conns in 64 1; do
    for t in "${targets[@]}"; do
      errs=$(echo "${samples[$t,$conns]}" | tr ';' '\n' | awk 'NF {s += $4 + $5} END {print s + 0}')
      printf "%-6s %-9s %12.0f %10.0f %10.0f %8s\n" "$conns" "$t" \
        "$(column_of "$t" "$conns" 1)" "$(column_of "$t" "$conns" 2)" "$(column_of "$t" "$conns" 3)" "$errs"
    done
  done
  echo
  awk -v sr="$(column_of spillway 64 1)" -v nr="$(column_of nginx 64 1)" -v dr="$(column_of direct 64 1)" \
      -v s50="$(column_of spillway 1 2)" -v d50="$(column_of direct 1 2)" -v n50="$(column_of nginx 1 2)" \
      -v s99="$(column_of spillway 1 3)" -v d99="$(column_of direct 1 3)" -v n99="$(column_of nginx 1 3)" 'BEGIN {
    printf "throughput at 64 connections: spillway/nginx = %.2f (target >= 0.80), spillway/direct = %.2f\n", sr / nr, sr / dr
    printf "added latency at 1 connection over direct: p50 %+d µs (target <= 100), p99 %+d µs (target <= 1000)\n", s50 - d50, s99 - d99
    printf "nginx proxy_pass adds: p50 %+d µs, p99 %+d µs\n", n50 - d50, n99 - d99
  }'
  echo "start to ready: $(starts_column "$starts" 1) ms median of 3 from a cold JVM (target <= 1500; includes JVM start)," \
    "$(starts_column "$starts" 2) ms of JVM CPU (user + sys) up to ready; each (ms wall, ms CPU): $(echo "$starts" | sed -e 's/;$//' -e 's/;/, /g')"
  if [ -n "$aot_starts" ]; then
    echo "start to ready with an AOT cache: $(starts_column "$aot_starts" 1) ms median of 3," \
      "$(starts_column "$aot_starts" 2) ms of JVM CPU; each: $(echo "$aot_starts" | sed -e 's/;$//' -e 's/;/, /g')"
  else
    echo "start to ready with an AOT cache: not measured (needs JDK 25+ and the packaged jar)"
  fi
  echo "Spillway RSS: idle ${idle_rss} MiB (target <= 256), after load ${load_rss} MiB"
} | tee "$out"
results_dir=${BENCH_RESULTS_DIR:-$root/bench/results}
mkdir -p "$results_dir"
cp "$out" "$results_dir/$(date -u +%Y%m%dT%H%M%SZ).txt"
