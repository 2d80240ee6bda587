#!/usr/bin/env bash
# checkload with one thread against two at 16 connections, in turns, on the server ServerBench runs (`ServerBench
# --serve`, the bare query): queries/s, the server's CPU per query (/proc), the generator's CPU and context
# switches per answer (`perf stat`). Every answer is checked (a wrong one or an error is printed in its line).
#
#   bash Benchmarks/checkload-threads.sh [TURNS]
#
# Needs a release build of ServerBench, cc, perf and curl.
set -uo pipefail
turns=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
bench=${SERVERBENCH:-"$here/.build/release/ServerBench"}
[ -x "$bench" ] || { echo "build ServerBench first: cd Benchmarks && swift build -c release --product ServerBench" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kind=get
cc -O2 -pthread -o "$work/checkload" "$here/loadgen/checkload.c" || exit 1
source "$here/server-load.sh"
start_server
port=$(echo "$url" | sed -E 's#http://[^:]+:([0-9]+).*#\1#'); path=$(echo "$url" | sed -E 's#http://[^/]+##')
body='{"query":"query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }","variables":{"id":"seed-0"}}'
printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
  "$path" "$port" ${#body} "$body" > "$work/request"
printf '%s' "$seeded_answer" > "$work/expected"
tck=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
"$work/checkload" -c 16 -t 2 -d 1 -r "$work/request" -e "$work/expected" 127.0.0.1 "$port" > /dev/null  # warm-up
for _ in $(seq "$turns"); do
  for threads in 2 1; do
    before=$(cpu_of "$server")
    out=$(perf stat -x, -e task-clock,context-switches -o "$work/generator.stat" \
      "$work/checkload" -c 16 -t "$threads" -d 3 -r "$work/request" -e "$work/expected" 127.0.0.1 "$port")
    after=$(cpu_of "$server")
    n=$(echo "$out" | sed -E 's/.*requests=([0-9]+).*/\1/')
    failed=$(echo "$out" | sed -E 's/.*wrong=([0-9]+) errors=([0-9]+).*/wrong \1, errors \2/')
    awk -v t="$threads" -v n="$n" -v s=$((after - before)) -v tck="$tck" -v f="$failed" \
      -v g="$(awk -F, '/task-clock/ {print $1}' "$work/generator.stat")" \
      -v cs="$(awk -F, '/context-switches/ {print $1}' "$work/generator.stat")" 'BEGIN {
        printf "-t%d -c16: %6.0f queries/s, server %5.1f µs, generator %4.1f µs per query, %.2f generator context switches per answer; %s\n",
          t, n / 3, s / tck / n * 1e6, g * 1000 / n, cs / n, f }'
  done
done
kill -INT "$server"; wait "$server" 2>/dev/null
