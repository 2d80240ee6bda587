#!/usr/bin/env bash
# Where the two cores' time goes while checkload (Benchmarks/loadgen/checkload.c, one thread, every answer checked)
# drives GQLDevServer (`ServerBench --serve`, the server callgrind-server.sh counts) for SECONDS per header set: per
# query, the user and kernel time of each server thread (from /proc), checkload's CPU (`perf stat`), the machine's
# idle share (/proc/stat), and the server's system calls, context switches and CPU migrations (`perf stat`
# tracepoints, which slow nothing the way strace does). PERF=1 adds a system-wide `perf record -a -g` of 2 s per set
# and prints its split by thread and library and its largest kernel symbols. Needs root for the tracepoints.
#
#   bash Benchmarks/server-cores.sh [SERVERBENCH] [CONNECTIONS] [SECONDS]
#
# HEADERS (default "bare browser") picks the header sets (ServerBench's --wrk-headers lines).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${1:-"$here/.build/release/ServerBench"}; connections=${2:-16}; seconds=${3:-3}
[ -x "$bench" ] || { echo "build ServerBench first: cd Benchmarks && swift build -c release --product ServerBench" >&2; exit 1; }
work=$(mktemp -d)
server=""
trap 'kill -INT "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/checkload" "$here/loadgen/checkload.c" || exit 1
answer='{"data":{"getObjects":{"objectId":"seed-0","text":"benchmark","number":0,"double":null,"boolean":true}}}'
body='{"query":"query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }","variables":{"id":"seed-0"}}'
printf '%s' "$answer" > "$work/expected"
kind=get
source "$here/server-load.sh"
start_server
port=$(echo "$url" | sed -E 's#http://[^:]+:([0-9]+).*#\1#'); path=$(echo "$url" | sed -E 's#http://[^/]+##')
tck=$(getconf CLK_TCK)
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), $connections connection(s), ${seconds}s per set, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# tid name utime stime voluntary involuntary, per thread of the server
threads() {
  for t in /proc/"$server"/task/*; do
    echo "$(basename "$t") $(tr ' ' _ < "$t/comm") $(awk '{print $14, $15}' "$t/stat")" \
      "$(awk '/^voluntary_ctxt/ {v = $2} /^nonvoluntary_ctxt/ {n = $2} END {print v, n}' "$t/status")"
  done | sort
}
machine() { awk '/^cpu / {print $2 + $3, $4, $5, $7 + $8}' /proc/stat; }  # user+nice, system, idle, irq+softirq
for headers in ${HEADERS:-bare browser}; do
  "$bench" --wrk-headers "$headers" > "$work/headers.lua" || exit 2
  lines=$(sed -E 's/^wrk\.headers\["(.*)"\] = "(.*)"$/\1: \2/' "$work/headers.lua" | perl -pe 's/\\(\d{3})/chr($1)/ge; s/\n/\r\n/' | sed '$ s/\r$//')
  allow=(); [ "$headers" = browser ] && allow=(-a "Access-Control-Allow-Origin: http://app.example")
  { printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\n' "$path" "$port"
    [ -z "$lines" ] || printf '%s\r\n' "$lines"
    printf 'Content-Length: %d\r\n\r\n%s' ${#body} "$body"; } > "$work/request"
  load() { "$work/checkload" -c "$connections" -t 1 -d "$1" -r "$work/request" -e "$work/expected" "${allow[@]}" 127.0.0.1 "$port"; }
  load 1 > /dev/null
  threads > "$work/before"; read -r u0 s0 i0 q0 < <(machine)
  perf stat -x, -e task-clock -o "$work/generator.stat" "$work/checkload" -c "$connections" -t 1 -d "$seconds" \
    -r "$work/request" -e "$work/expected" "${allow[@]}" 127.0.0.1 "$port" > "$work/load.out" &
  generator=$!
  perf stat -x, -o "$work/server.stat" -p "$server" -e 'syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_fcntl,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_wait,context-switches,cpu-migrations' -- sleep "$seconds" &
  counter=$!
  wait "$generator"; wait "$counter"
  threads > "$work/after"; read -r u1 s1 i1 q1 < <(machine)
  grep -q 'wrong=0 errors=0' "$work/load.out" || { echo "server-cores.sh: $(cat "$work/load.out")" >&2; exit 1; }
  n=$(sed -E 's/.*requests=([0-9]+).*/\1/' "$work/load.out")
  echo "== $headers: $((n / seconds)) queries/s"
  awk -v n="$n" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v i=$((i1 - i0)) -v q=$((q1 - q0)) -v tck="$tck" 'BEGIN {
    t = u + s + i + q; printf "  machine: user %.0f %%, system %.0f %%, irq %.0f %%, idle %.0f %%; %.1f µs of CPU a query\n",
      100 * u / t, 100 * s / t, 100 * q / t, 100 * i / t, (u + s + q) / tck / n * 1e6 }'
  awk -F, -v n="$n" '/task-clock/ {printf "  checkload: %.1f µs a query\n", $1 * 1000 / n}' "$work/generator.stat"
  join "$work/before" "$work/after" | awk -v n="$n" -v tck="$tck" '{
    u = ($8 - $3) / tck / n * 1e6; s = ($9 - $4) / tck / n * 1e6
    if (u + s > 0.05) printf "  thread %-7s %-16s user %4.1f µs, kernel %4.1f µs, switches %.3f + %.3f a query\n",
      $1, $2, u, s, ($10 - $5) / n, ($11 - $6) / n }'
  awk -F, -v n="$n" '$1 ~ /^[0-9]/ {sub("syscalls:sys_enter_", "", $3); printf "  %s %.3f", $3, $1 / n} END {print " a query"}' \
    "$work/server.stat"
  if [ -n "${PERF:-}" ]; then
    load $((seconds + 2)) > "$work/load2.out" &
    generator=$!
    sleep 1
    perf record -a -g -F 1999 -o "$work/perf.data" -- sleep 2 > /dev/null 2>&1
    wait "$generator"
    perf report -i "$work/perf.data" --no-children --sort comm,dso --stdio -g none 2>/dev/null | grep '%' | head -16
    perf report -i "$work/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null | grep '\[k\]' | head -12
  fi
done
