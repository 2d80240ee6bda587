#!/usr/bin/env bash
# The CPU each query costs the server and wrk, for GQLDevServer (`ServerBench --serve`), nginx (the same answer bytes
# from a `return 200`) and Strawberry ×2 (uvicorn, Benchmarks/Server/strawberry_server.py), at 1 and 16 connections:
# wrk's CPU from `perf stat -e task-clock`, each server's from /proc (user and system time of all its processes).
# When the two cores are the limit, the rate is about 2 cores ÷ (server + wrk) per query, so the ratio of two servers
# is the ratio of those sums.
#
#   bash Benchmarks/server-budget.sh [SECONDS]
#
# HEADERS=bare|python|browser picks GQLDevServer's header set (server-load.sh); SERVERBENCH=path another build.
# Needs a release build of ServerBench, wrk, perf, nginx and the project's .venv (Tests/Interop/setup-venv.sh).
set -uo pipefail
seconds=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bench=${SERVERBENCH:-"$here/.build/release/ServerBench"}
[ -x "$bench" ] || { echo "build ServerBench first: cd Benchmarks && swift build -c release --product ServerBench" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tck=$(getconf CLK_TCK)
answer='{"data":{"getObjects":{"objectId":"seed-0","text":"benchmark","number":0,"double":null,"boolean":true}}}'
cat > "$work/query.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"query":"query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }","variables":{"id":"seed-0"}}'
LUA
cpu_of() { local total=0; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0))); done; echo "$total"; }
measure() { # NAME LUA URL PID...
  local name=$1 lua=$2 target=$3; shift 3
  wrk -t1 -c1 -d1s -s "$lua" "$target" > /dev/null
  for connections in 1 16; do
    local threads=$(( connections < 2 ? 1 : 2 ))
    local before; before=$(cpu_of "$@")
    perf stat -x, -e task-clock -o "$work/wrk.stat" wrk -t"$threads" -c"$connections" -d"${seconds}s" -s "$lua" "$target" > "$work/wrk.out"
    grep -q Non-2xx "$work/wrk.out" && { echo "server-budget.sh: $name answered non-2xx" >&2; exit 1; }
    local after; after=$(cpu_of "$@")
    awk -v name="$name" -v c="$connections" -v cpu=$((after - before)) -v tck="$tck" \
      -v n="$(awk '/requests in/ {print $1}' "$work/wrk.out")" -v rate="$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")" \
      -v wrk="$(awk -F, '/task-clock/ {print $1}' "$work/wrk.stat")" 'BEGIN {
        server = cpu / tck / n * 1e6; client = wrk * 1000 / n
        printf "%-14s %2d connection(s): %7.0f queries/s, server %6.1f µs, wrk %5.1f µs per query; 2 cores ÷ sum = %.0f/s\n",
          name, c, rate, server, client, 2e6 / (server + client) }'
  done
}
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
measure nginx "$work/query.lua" "http://127.0.0.1:$port/graphql" "$nginx_pid" $(pgrep -P "$nginx_pid")
kill -QUIT "$nginx_pid"; wait "$nginx_pid" 2>/dev/null
# GQLDevServer
kind=get; server=""
source "$here/server-load.sh"
start_server
measure GQLDevServer "$work/load.lua" "$url" "$server"
kill -INT "$server"; wait "$server" 2>/dev/null
# Strawberry ×2
port=$((20000 + RANDOM % 20000))
"$root/.venv/bin/python3" "$here/Server/strawberry_server.py" --port "$port" --workers 2 --database "$work/objects.sqlite" > /dev/null 2>&1 &
strawberry=$!
target="http://127.0.0.1:$port/graphql"
for _ in $(seq 100); do curl -s -o /dev/null "$target" -X POST -H 'Content-Type: application/json' -d '{"query":"{__typename}"}' && break; sleep 0.1; done
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "$target" \
  -d '{"query":"mutation { createObjects(input: {objectId: \"seed-0\", text: \"benchmark\", number: 0, boolean: true}) { objectId } }"}'
measure "Strawberry ×2" "$work/query.lua" "$target" "$strawberry" $(pgrep -P "$strawberry")
kill -INT "$strawberry"; wait "$strawberry" 2>/dev/null
