#!/usr/bin/env bash
# Where GQLDevServer's CPU time goes under load: runs the server ServerBench runs (`ServerBench --serve`, a temporary
# SQLite file), drives it with wrk and samples it with `perf record`, then prints the shared objects and the
# GQLDevServer, GQLStore and GQLCore frames by inclusive share.
#
#   bash Benchmarks/profile-server.sh get|create [CONNECTIONS] [SECONDS]
#
# It prints the shared objects by self share, the project frames by inclusive share, then the top symbols by self share.
#
# Needs a release build of ServerBench (make bench-server builds one), wrk and perf (apt install wrk linux-perf).
# Sampling slows the server; the rates it prints are for orientation, the figures are ServerBench's.
set -euo pipefail
kind=${1:-get}; connections=${2:-16}; seconds=${3:-8}
case "$kind" in get|create) ;; *) echo "usage: $0 get|create [CONNECTIONS] [SECONDS]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
bench="$here/.build/release/ServerBench"
[ -x "$bench" ] || { echo "build ServerBench first: cd Benchmarks && swift build -c release --product ServerBench" >&2; exit 1; }
work=$(mktemp -d)
server=""
trap 'kill -INT "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
source "$here/server-load.sh"
start_server
threads=$(( connections < 2 ? connections : 2 ))
RUN=$RANDOM$RANDOM wrk -t1 -c1 -d1s -s "$work/load.lua" "$url" >/dev/null
perf record -F 2000 -g -p "$server" -o "$work/perf.data" -- sleep "$seconds" >/dev/null 2>&1 &
recorder=$!
RUN=$RANDOM$RANDOM wrk -t"$threads" -c"$connections" -d"${seconds}s" -s "$work/load.lua" "$url" | grep -E 'Requests/sec|Non-2xx'
wait "$recorder" || true
set +o pipefail  # head closes the reports early
echo "--- shared objects (self)"
perf report -i "$work/perf.data" --no-children --sort dso -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8
echo "--- project frames (inclusive)"
perf report -i "$work/perf.data" --children --sort sym -g none 2>/dev/null | grep -v '^#' \
  | grep -E 'GQLDevServer|GQLStore|GQLCore' | head -40 | swift demangle --simplified | cut -c1-160
echo "--- symbols (self)"
perf report -i "$work/perf.data" --no-children --sort dso,sym -g none 2>/dev/null | grep -v '^#' | grep -v '^$' \
  | head -30 | swift demangle --simplified | cut -c1-160
