#!/usr/bin/env bash
# The rate and CPU cost of one GQLDevServer build under wrk: runs the server ServerBench runs (`ServerBench --serve`,
# a temporary SQLite file), warms it for a second, then drives it RUNS times for SECONDS each and prints, per run,
# requests per second, the server's CPU time per request (from /proc) and the wall time per request. For comparing
# two builds turn about (SERVERBENCH=path/to/other/ServerBench); the figures of record are ServerBench's.
#
#   bash Benchmarks/server-rate.sh get|create [CONNECTIONS] [SECONDS] [RUNS]
#
# Needs a release build of ServerBench (make bench-server builds one) and wrk (apt install wrk). Every create makes
# a new object (each wrk run has a key prefix of its own); a non-2xx answer is printed by wrk.
set -euo pipefail
kind=${1:-get}; connections=${2:-1}; seconds=${3:-2}; runs=${4:-3}
case "$kind" in get|create) ;; *) echo "usage: $0 get|create [CONNECTIONS] [SECONDS] [RUNS]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
bench=${SERVERBENCH:-"$here/.build/release/ServerBench"}
[ -x "$bench" ] || { echo "build ServerBench first: cd Benchmarks && swift build -c release --product ServerBench" >&2; exit 1; }
work=$(mktemp -d)
server=""
trap 'kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
source "$here/server-load.sh"
start_server
threads=$(( connections < 2 ? connections : 2 ))
RUN=w$RANDOM wrk -t1 -c1 -d1s -s "$work/load.lua" "$url" >/dev/null
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
for n in $(seq "$runs"); do
  before=$(cpu)
  out=$(RUN=$n$RANDOM wrk -t"$threads" -c"$connections" -d"${seconds}s" -s "$work/load.lua" "$url")
  after=$(cpu)
  echo "$out" | grep -E 'Non-2xx' || true
  rate=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  awk -v rate="$rate" -v cpu="$(( after - before ))" -v ticks="$ticks" -v secs="$seconds" 'BEGIN {
    printf "%s %d connection(s): %.0f requests/s, %.1f µs server CPU per request, %.1f µs per request\n",
      "'"$kind"'", '"$connections"', rate, cpu / ticks / (rate * secs) * 1e6, 1e6 / rate * '"$connections"' }'
done
