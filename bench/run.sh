#!/usr/bin/env bash
# Spillway side by side with nginx, in one run on one machine, with a small chat body and with real
# Codex turns.
#
#   bench/run.sh            full run (about 10 minutes; 13 with BENCH_BEFORE_CMD)
#   bench/run.sh --smoke    under a minute: checks the harness works and reports every number
#
# Starts one nginx as the fake upstream (`return 200` with an OpenAI chat-completion body, and on
# /v1/responses a Responses API event stream, bench/responses-stream.sse), a second nginx with
# `proxy_pass` to it as the one-hop baseline, and Spillway with its shipped pipeline in front of the
# same upstream. wrk drives each in turn (interleaved, several rounds; medians reported), at 64
# connections and at 1, with four bodies:
#   chat-1k       a ~1 KB chat completion (bench/chat-request.json), buffered;
#   codex-chat    a captured Codex CLI turn sent as a chat completion, buffered: 38.5 KB, 12 tools
#                 (bench/codex-chat-request.json, made from the fixture first-turn-gpt-4o-mini.chat.json
#                 with "model": "gpt-4o-mini" and "stream": false; BenchHarnessSmokeTest checks it);
#   codex-turns   the same body, every request a new turn: post.lua adds a user message of its own
#                 at the end of the messages array, so the prefix repeats and one item is new;
#   codex-stream  a captured Codex CLI `/v1/responses` turn as Codex sent it, 38.5 KB, streamed, with
#                 Codex's request headers (fixture turn-with-function-call-output.json).
# For each it prints requests/s, p50 and p99, and CPU per request: the CPU time (user + system, from
# /proc/<pid>/stat) of the process under test during the run over the requests it answered: the
# upstream nginx's workers for "direct", the proxy nginx's workers for "nginx", the JVM for Spillway.
#
# Start to ready is timed three times from a cold JVM, and three times again with an AOT cache
# (JDK 25+, -XX:AOTCache, built by a short training run as docker/Dockerfile builds it).
#
# Environment: BENCH_DURATION (default 8s), BENCH_WARMUP (8s per body and target), BENCH_ROUNDS (3),
# BENCH_BODIES ("chat-1k codex-chat codex-turns codex-stream"), BENCH_PORT_BASE (18930; uses 6 ports),
# BENCH_UPSTREAM_H2C (0; with 1, Spillway reaches the fake upstream over h2c with prior knowledge on
# its own port, `cloud.h2c: true`, while nginx proxy_pass and the direct runs stay on HTTP/1.1),
# SPILLWAY_CMD (how to start Spillway; default: java -jar gateway-app/target/spillway.jar),
# BENCH_BEFORE_CMD (a second Spillway, e.g. an older build, measured as target "before" in the same
# rounds), BENCH_BEFORE_SERVER (extra `server` keys for that second one, e.g. "pieceMemory: 0", to
# measure one setting beside the default with BENCH_BEFORE_CMD the same build), BENCH_STARTS (1; 0
# skips the start-to-ready timings), BENCH_RESULTS_DIR (where the results file is kept; default
# bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

duration=${BENCH_DURATION:-8s}
rounds=${BENCH_ROUNDS:-3}
warmup=${BENCH_WARMUP:-8s}
if [ "${1:-}" = "--smoke" ]; then
  duration=1s; rounds=1; warmup=1s
fi
bodies=(${BENCH_BODIES:-chat-1k codex-chat codex-turns codex-stream})
base=${BENCH_PORT_BASE:-18930}
up_port=$base; proxy_port=$((base + 1)); gw_port=$((base + 2)); start_port=$((base + 3)); h2c_port=$((base + 4))
before_port=$((base + 5))
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
fixtures="$root/gateway-local-backend/src/test/resources/fixtures/codex"
declare -A body_file=([chat-1k]="$root/bench/chat-request.json"
                      [codex-chat]="$root/bench/codex-chat-request.json"
                      [codex-turns]="$root/bench/codex-chat-request.json"
                      [codex-stream]="$fixtures/turn-with-function-call-output.json")
declare -A body_path=([chat-1k]=/v1/chat/completions [codex-chat]=/v1/chat/completions
                      [codex-turns]=/v1/chat/completions [codex-stream]=/v1/responses)
declare -A body_headers=([chat-1k]= [codex-chat]= [codex-turns]= [codex-stream]="$root/bench/codex-request-headers.txt")
declare -A body_kind=([chat-1k]=buffered [codex-chat]=buffered
                      [codex-turns]="buffered, every request a new turn (one new message after the repeated prefix)"
                      [codex-stream]="streamed (SSE)")
# Where post.lua puts each request's new message (BENCH_TURN_BEFORE): the end of the messages array.
declare -A body_turn=([chat-1k]= [codex-chat]= [codex-turns]='],"tools":' [codex-stream]=)
for b in "${bodies[@]}"; do
  [ -n "${body_file[$b]:-}" ] || { echo "bench: unknown body '$b' in BENCH_BODIES (chat-1k, codex-chat, codex-turns, codex-stream)" >&2; exit 2; }
  [ -f "${body_file[$b]}" ] || { echo "bench: missing ${body_file[$b]}" >&2; exit 2; }
done

work=$(mktemp -d /tmp/spillway-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)

# Two nginx instances, so each one's CPU is its own: the fake upstream, and the proxy_pass baseline.
# (each answer must stay under 4 KB: nginx's longest configuration token)
chat_answer=$(tr -d '\n' < "$root/bench/chat-response.json")
sse_answer="$(cat "$root/bench/responses-stream.sse")"$'\n\n'  # $(...) drops the closing blank line
nginx_conf() { # name, then the server blocks on stdin
  mkdir -p "$work/$1/tmp"
  {
    [ "$(id -u)" = 0 ] && echo "user root;"
    cat <<NGINX
worker_processes auto;
pid $work/$1/nginx.pid;
error_log $work/$1/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $work/$1/tmp/body;
  proxy_temp_path $work/$1/tmp/proxy;
  fastcgi_temp_path $work/$1/tmp/fastcgi;
  uwsgi_temp_path $work/$1/tmp/uwsgi;
  scgi_temp_path $work/$1/tmp/scgi;
  keepalive_requests 1000000;
  client_max_body_size 4m;
  client_body_buffer_size 128k;
NGINX
    cat
    echo "}"
  } > "$work/$1/nginx.conf"
}
upstream_locations="
    location /v1/responses { default_type text/event-stream; return 200 '$sse_answer'; }
    location / { default_type application/json; return 200 '$chat_answer'; }"
{
  echo "  server { listen 127.0.0.1:$up_port; $upstream_locations
  }"
  # nginx 1.22 speaks plaintext HTTP/2 only with prior knowledge, and then only HTTP/2: its own port.
  if [ "$upstream_protocol" = h2c ]; then
    echo "  server { listen 127.0.0.1:$h2c_port http2; $upstream_locations
  }"
  fi
} | nginx_conf upstream
nginx_conf proxy <<NGINX
  upstream fake_openai { server 127.0.0.1:$up_port; keepalive 256; }
  server {
    listen 127.0.0.1:$proxy_port;
    location / {
      proxy_pass http://fake_openai;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering on;
    }
  }
NGINX
for n in upstream proxy; do
  nginx -c "$work/$n/nginx.conf" -p "$work/$n" -g 'daemon off;' &
  pids+=($!)
  eval "${n}_master=$!"
done

# Spillway: the shipped pipeline (observe, auth, token report, cache, response state, shaping with
# signal scoring, rate limits, quota, admission, breaker, router; spend, access log and metrics on)
# in front of the fake upstream.
gateway_yaml() { # port data-dir [extra server keys]
  cat <<YAML
server: { host: 127.0.0.1, port: $1${3:+, $3} }
cloud: { baseUrl: "$spillway_upstream", apiKey: sk-bench$h2c_key }
local: { enabled: false }
keys:
  - { key: bench-key, team: bench, tier: gold }
quota:
  monthlyTokens: 1000000000000
store: embedded:$2
YAML
}
start_gateway() { # label port command... -> sets <label>_pid (the JVM)
  local label=$1 port=$2; shift 2
  local extra=; [ "$label" = before ] && extra=${BENCH_BEFORE_SERVER:-}
  gateway_yaml "$port" "$work/$label-data" "$extra" > "$work/$label.yaml"
  (cd "$work" && exec "$@" serve --config "$work/$label.yaml" > "$work/$label.log" 2>&1) &
  local pid=$!
  pids+=($pid)
  until curl -fs -o /dev/null "http://127.0.0.1:$port/readyz"; do
    kill -0 "$pid" 2>/dev/null || { echo "bench: Spillway ($label) did not start:" >&2; cat "$work/$label.log" >&2; exit 1; }
    sleep 0.01
  done
  eval "${label}_pid=$(pgrep -P "$pid" java || echo "$pid")"
}
start_gateway spillway "$gw_port" $SPILLWAY_CMD
targets=(direct nginx spillway)
declare -A port_of=([direct]=$up_port [nginx]=$proxy_port [spillway]=$gw_port)
if [ -n "${BENCH_BEFORE_CMD:-}" ]; then
  start_gateway before "$before_port" $BENCH_BEFORE_CMD
  targets+=(before)
  port_of[before]=$before_port
fi
rss_of() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status" 2>/dev/null || echo "?"; }
idle_rss=$(rss_of "$spillway_pid")
until curl -fs -o /dev/null "http://127.0.0.1:$up_port/v1/chat/completions" \
    && curl -fs -o /dev/null "http://127.0.0.1:$proxy_port/v1/chat/completions"; do
  for n in upstream proxy; do
    m=${n}_master
    kill -0 "${!m}" 2>/dev/null || { echo "bench: nginx ($n) did not start:" >&2; cat "$work/$n/error.log" >&2; exit 1; }
  done
  sleep 0.05
done

# The processes whose CPU a target's run is charged with.
pids_of() {
  case "$1" in
    direct) pgrep -P "$upstream_master" | tr '\n' ' ' ;;
    nginx) pgrep -P "$proxy_master" | tr '\n' ' ' ;;
    spillway) echo "$spillway_pid" ;;
    before) echo "$before_pid" ;;
  esac
}
cpu_ticks() { # pids... -> user + system clock ticks, summed (fields 14 and 15 of /proc/<pid>/stat)
  local total=0 pid t
  for pid in "$@"; do
    t=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13}') || t=0
    total=$((total + ${t:-0}))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)

# Each body once through every target before anything is measured: an answer that is not a 200
# (or, for the stream, a stream without its response.completed) stops the run.
for b in "${bodies[@]}"; do
  for t in "${targets[@]}"; do
    header_args=()
    if [ -n "${body_headers[$b]}" ]; then
      while IFS= read -r line; do header_args+=(-H "$line"); done < "${body_headers[$b]}"
    fi
    code=$(curl -s -o "$work/probe.out" -w '%{http_code}' "${header_args[@]}" -H 'Content-Type: application/json' \
      -H 'Authorization: Bearer bench-key' --data-binary @"${body_file[$b]}" "http://127.0.0.1:${port_of[$t]}${body_path[$b]}")
    if [ "$code" != 200 ] || { [ "$b" = codex-stream ] && ! grep -q '^event: response.completed' "$work/probe.out"; }; then
      echo "bench: $t answered $code to the $b request:" >&2; head -c 2000 "$work/probe.out" >&2; echo >&2
      [ "$t" = spillway ] && tail -n 20 "$work/spillway.log" >&2
      exit 1
    fi
  done
done

run_wrk() { # body target connections duration -> "rps p50 p99 errors non2xx cpu-µs-per-request"
  local threads=2; [ "$3" -lt 2 ] && threads=1
  local procs c0 c1 out
  procs=$(pids_of "$2")
  c0=$(cpu_ticks $procs)
  out=$(BENCH_BODY="${body_file[$1]}" BENCH_HEADERS="${body_headers[$1]}" BENCH_TURN_BEFORE="${body_turn[$1]}" BENCH_KEY=bench-key \
    wrk -t"$threads" -c"$3" -d"$4" --latency -s "$root/bench/post.lua" "http://127.0.0.1:${port_of[$2]}${body_path[$1]}")
  c1=$(cpu_ticks $procs)
  echo "$out" | awk -v ticks=$((c1 - c0)) -v hz="$hz" '/^BENCH/ {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    print v["rps"], v["p50_us"], v["p99_us"], v["errors"], v["non2xx"],
      (v["requests"] > 0 ? ticks * 1e6 / hz / v["requests"] : 0) }'
}

echo "warming up ($warmup for each body and target)..." >&2
for b in "${bodies[@]}"; do
  for t in "${targets[@]}"; do run_wrk "$b" "$t" 64 "$warmup" > /dev/null; done
done

declare -A samples
for round in $(seq 1 "$rounds"); do
  for b in "${bodies[@]}"; do
    for conns in 64 1; do
      for t in "${targets[@]}"; do
        echo "round $round/$rounds: $b, $t, $conns connection(s), $duration" >&2
        samples[$b,$t,$conns]+="$(run_wrk "$b" "$t" "$conns" "$duration");"
      done
    done
  done
done
load_rss=$(rss_of "$spillway_pid")
load_at_end=$(cut -d' ' -f1-3 /proc/loadavg)

# Start to ready: a fresh Spillway on its own port and data directory, timed from exec to the first
# 200 from /readyz, three times; then the same with an AOT cache when this JDK can make one.
gateway_yaml "$start_port" "$work/start-data" > "$work/start.yaml"
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
  cpu=$(( $(cpu_ticks "$pid") * 1000 / hz ))
  echo "$(( ($(date +%s%N) - t0) / 1000000 )) $cpu"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}
starts=; aot_starts=
if [ "${BENCH_STARTS:-1}" != 0 ]; then
  starts=$(for i in 1 2 3; do start_to_ready $SPILLWAY_CMD; done | tr '\n' ';')
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
fi

median() { tr ' ' '\n' | awk 'NF' | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
starts_column() { # "wall cpu;wall cpu;..." column -> its median
  echo "$1" | tr ';' '\n' | awk -v c="$2" 'NF {print $c}' | tr '\n' ' ' | median
}
column_of() { # body target conns column -> median over the rounds
  echo "${samples[$1,$2,$3]}" | tr ';' '\n' | awk -v c="$4" 'NF {print $c}' | tr '\n' ' ' | median
}

out="$work/results.txt"
{
  echo "Spillway benchmark — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r);" \
    "load average (1/5/15 min) $load_at_start at the start, $load_at_end at the end"
  echo "wrk ${duration} x ${rounds} rounds (median) after ${warmup} of warm-up, interleaved; Spillway to the upstream over $upstream_protocol;" \
    "CPU/req = the process's user + system time during the run / requests answered (direct: the upstream nginx's workers," \
    "nginx: the proxy nginx's workers, spillway and before: the JVM)"
  for b in "${bodies[@]}"; do
    echo "  $b: $(wc -c < "${body_file[$b]}") bytes, ${body_kind[$b]}, POST ${body_path[$b]}"
  done
  echo
  printf "%-13s %-6s %-9s %9s %9s %9s %11s %7s\n" body conns target "req/s" "p50 µs" "p99 µs" "CPU µs/req" errors
  for b in "${bodies[@]}"; do
    for conns in 64 1; do
      for t in "${targets[@]}"; do
        errs=$(echo "${samples[$b,$t,$conns]}" | tr ';' '\n' | awk 'NF {s += $4 + $5} END {print s + 0}')
        printf "%-13s %-6s %-9s %9.0f %9.0f %9.0f %11.1f %7s\n" "$b" "$conns" "$t" \
          "$(column_of "$b" "$t" "$conns" 1)" "$(column_of "$b" "$t" "$conns" 2)" \
          "$(column_of "$b" "$t" "$conns" 3)" "$(column_of "$b" "$t" "$conns" 6)" "$errs"
      done
    done
  done
  echo
  for b in "${bodies[@]}"; do
    case "$b" in
      chat-1k) rps_target=0.60; cpu_target=2.0; p50_target=100 ;;
      codex-chat) rps_target=0.50; cpu_target=2.5; p50_target=250 ;;
      *) rps_target=; cpu_target=; p50_target= ;;
    esac
    for g in spillway before; do
      [ -n "${port_of[$g]:-}" ] || continue
      awk -v b="$b" -v g="$g" -v rt="$rps_target" -v ct="$cpu_target" -v lt="$p50_target" \
          -v sr="$(column_of "$b" "$g" 64 1)" -v nr="$(column_of "$b" nginx 64 1)" \
          -v sc="$(column_of "$b" "$g" 64 6)" -v nc="$(column_of "$b" nginx 64 6)" \
          -v s50="$(column_of "$b" "$g" 1 2)" -v d50="$(column_of "$b" direct 1 2)" -v n50="$(column_of "$b" nginx 1 2)" \
          -v s99="$(column_of "$b" "$g" 1 3)" -v d99="$(column_of "$b" direct 1 3)" 'BEGIN {
        printf "%s, %s/nginx at 64 connections: throughput %.2f x%s, CPU per request %.1f x%s;", b, g,
          (nr > 0 ? sr / nr : 0), (rt != "" ? " (target >= " rt ")" : ""),
          (nc > 0 ? sc / nc : 0), (ct != "" ? " (target <= " ct ")" : "")
        printf " added latency at 1 connection over direct: p50 %+d µs%s, p99 %+d µs (nginx proxy_pass adds p50 %+d µs)\n",
          s50 - d50, (lt != "" ? " (target <= " lt ")" : ""), s99 - d99, n50 - d50
      }'
    done
  done
  if [ -n "$starts" ]; then
    echo "start to ready: $(starts_column "$starts" 1) ms median of 3 from a cold JVM (target <= 1500; includes JVM start)," \
      "$(starts_column "$starts" 2) ms of JVM CPU (user + sys) up to ready; each (ms wall, ms CPU): $(echo "$starts" | sed -e 's/;$//' -e 's/;/, /g')"
    if [ -n "$aot_starts" ]; then
      echo "start to ready with an AOT cache: $(starts_column "$aot_starts" 1) ms median of 3," \
        "$(starts_column "$aot_starts" 2) ms of JVM CPU; each: $(echo "$aot_starts" | sed -e 's/;$//' -e 's/;/, /g')"
    else
      echo "start to ready with an AOT cache: not measured (needs JDK 25+ and the packaged jar)"
    fi
  else
    echo "start to ready: not measured (BENCH_STARTS=0)"
  fi
  echo "Spillway RSS: idle ${idle_rss} MiB (target <= 256), after load ${load_rss} MiB"
} | tee "$out"
results_dir=${BENCH_RESULTS_DIR:-$root/bench/results}
mkdir -p "$results_dir"
cp "$out" "$results_dir/$(date -u +%Y%m%dT%H%M%SZ).txt"
