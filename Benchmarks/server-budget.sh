#!/usr/bin/env bash
# The CPU each query costs the server and the load generator, for GQLDevServer (`ServerBench --serve`), nginx (the same
# answer bytes from a `return 200`) and Strawberry ×2 (uvicorn, Benchmarks/Server/strawberry_server.py), at 1 and 16
# connections, driven by checkload (Benchmarks/loadgen/checkload.c) on one thread as ServerBench's query rows are:
# the generator's CPU from `perf stat -e task-clock`, each server's from /proc (user and system time of all its
# processes). Every answer is checked (status 200, the exact body, and for the browser set
# `Access-Control-Allow-Origin`); a wrong one or an error fails the run. When the two cores are the limit, the rate
# is about 2 cores ÷ (server + generator) per query, so the ratio of two servers is the ratio of those sums.
#
#   bash Benchmarks/server-budget.sh [SECONDS]
#
# HEADERS=bare|python|browser picks the header set every server's requests carry (ServerBench's --wrk-headers lines);
# SERVERBENCH=path another build. Needs a release build of ServerBench, cc, perf, curl, nginx and the project's
# .venv (Tests/Interop/setup-venv.sh).
set -uo pipefail
seconds=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bench=${SERVERBENCH:-"$here/.build/release/ServerBench"}
[ -x "$bench" ] || { echo "build ServerBench first: cd Benchmarks && swift build -c release --product ServerBench" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tck=$(getconf CLK_TCK)
headers=${HEADERS:-bare}
cc -O2 -pthread -o "$work/checkload" "$here/loadgen/checkload.c" || exit 1
answer='{"data":{"getObjects":{"objectId":"seed-0","text":"benchmark","number":0,"double":null,"boolean":true}}}'
body='{"query":"query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }","variables":{"id":"seed-0"}}'
printf '%s' "$answer" > "$work/expected"
# The header set's lines, as ServerBench sends them (`--wrk-headers` prints wrk's Lua for them).
"$bench" --wrk-headers "$headers" > "$work/headers.lua" || exit 2
lines=$(sed -E 's/^wrk\.headers\["(.*)"\] = "(.*)"$/\1: \2/' "$work/headers.lua" | perl -pe 's/\\(\d{3})/chr($1)/ge; s/\n/\r\n/' | sed '$ s/\r$//')
cpu_of() { local total=0; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0))); done; echo "$total"; }
measure() { # NAME URL PID...
  local name=$1 target=$2; shift 2
  local port path allow=()
  port=$(echo "$target" | sed -E 's#http://[^:]+:([0-9]+).*#\1#'); path=$(echo "$target" | sed -E 's#http://[^/]+##')
  { printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\n' "$path" "$port"
    [ -z "$lines" ] || printf '%s\r\n' "$lines"
    printf 'Content-Length: %d\r\n\r\n%s' ${#body} "$body"; } > "$work/request"
  # nginx answers without CORS headers: only GQLDevServer's browser answers are checked for the allowed origin.
  [ "$headers" = browser ] && [ "$name" = GQLDevServer ] && allow=(-a "Access-Control-Allow-Origin: http://app.example")
  "$work/checkload" -c 1 -t 1 -d 1 -r "$work/request" -e "$work/expected" "${allow[@]}" 127.0.0.1 "$port" > /dev/null
  for connections in 1 16; do
    local before; before=$(cpu_of "$@")
    perf stat -x, -e task-clock -o "$work/generator.stat" \
      "$work/checkload" -c "$connections" -t 1 -d "$seconds" -r "$work/request" -e "$work/expected" "${allow[@]}" \
      127.0.0.1 "$port" > "$work/load.out"
    local after; after=$(cpu_of "$@")
    grep -q 'wrong=0 errors=0' "$work/load.out" || { echo "server-budget.sh: $name: $(cat "$work/load.out")" >&2; exit 1; }
    awk -v name="$name" -v c="$connections" -v cpu=$((after - before)) -v tck="$tck" -v secs="$seconds" \
      -v n="$(sed -E 's/.*requests=([0-9]+).*/\1/' "$work/load.out")" \
      -v generator="$(awk -F, '/task-clock/ {print $1}' "$work/generator.stat")" 'BEGIN {
        server = cpu / tck / n * 1e6; client = generator * 1000 / n
        printf "%-14s %2d connection(s): %7.0f queries/s, server %6.1f µs, checkload %5.1f µs per query; 2 cores ÷ sum = %.0f/s\n",
          name, c, n / secs, server, client, 2e6 / (server + client) }'
  done
}
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), headers $headers, ${seconds}s per turn, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# nginx
port=$((20000 + RANDOM % 20000)); mkdir -p "$work/nginx-temp"
cat > "$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000; keepalive_timeout 60s; client_body_temp_path $work/nginx-temp;
  server { listen 127.0.0.1:$port reuseport; location = /graphql { default_type application/json; return 200 '$answer'; } } }
CONF
nginx -p "$work" -c "$work/nginx.conf" -g "daemon off; master_process on;" & nginx_pid=$!
sleep 0.5
measure nginx "http://127.0.0.1:$port/graphql" "$nginx_pid" $(pgrep -P "$nginx_pid")
kill -QUIT "$nginx_pid"; wait "$nginx_pid" 2>/dev/null
# GQLDevServer
kind=get; server=""
source "$here/server-load.sh"
start_server
measure GQLDevServer "$url" "$server"
kill -INT "$server"; wait "$server" 2>/dev/null
# Strawberry ×2
port=$((20000 + RANDOM % 20000))
"$root/.venv/bin/python3" "$here/Server/strawberry_server.py" --port "$port" --workers 2 --database "$work/objects.sqlite" > /dev/null 2>&1 &
strawberry=$!
target="http://127.0.0.1:$port/graphql"
for _ in $(seq 100); do curl -s -o /dev/null "$target" -X POST -H 'Content-Type: application/json' -d '{"query":"{__typename}"}' && break; sleep 0.1; done
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "$target" \
  -d '{"query":"mutation { createObjects(input: {objectId: \"seed-0\", text: \"benchmark\", number: 0, boolean: true}) { objectId } }"}'
measure "Strawberry ×2" "$target" "$strawberry" $(pgrep -P "$strawberry")
kill -INT "$strawberry"; wait "$strawberry" 2>/dev/null
