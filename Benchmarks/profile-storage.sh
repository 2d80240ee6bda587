#!/usr/bin/env bash
# Where GQLStorage's streamed download spends its time: nginx (Debian's nginx-light) serves a file of pseudo-random
# bytes at /bench/ours.bin on 127.0.0.1 (sendfile, as StorageBench's second download server does), StorageBench's
# `--download-child` downloads it ROUNDS times with `download(_:_:to:)` under `perf record`, and the report lists the
# shared objects and the symbols by self share, then the project's frames by inclusive share.
#
#   bash Benchmarks/profile-storage.sh [MEGABYTES] [ROUNDS] [MODE]       (defaults 64, 8, gqlstorage)
#
# Each round's seconds and CPU seconds are printed first (also with `PERF=0`, which runs the child without perf, for
# a quick timing). MODE `drain` or `write` downloads with AsyncHTTPClient alone instead (the body dropped, or
# written to the file), the floors under GQLStorage; curl's time into /dev/null is printed before the rounds. Needs a release build of StorageBench (`cd Benchmarks && swift build -c release --product
# StorageBench`), nginx and perf (apt install nginx-light linux-perf). Sampling slows the child; the rates are for
# orientation, the figures are StorageBench's.
set -euo pipefail
megabytes=${1:-64}; rounds=${2:-8}; mode=${3:-gqlstorage}
here=$(cd "$(dirname "$0")" && pwd)
bench="$here/.build/release/StorageBench"
[ -x "$bench" ] || { echo "build StorageBench first: cd Benchmarks && swift build -c release --product StorageBench" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
work=$(mktemp -d)
chmod 755 "$work"  # nginx's workers (nobody when started as root) read the file
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
head -c $((megabytes << 20)) /dev/urandom >"$work/source.bin"
chmod 644 "$work/source.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/temp"
cat >"$work/nginx.conf" <<EOF
worker_processes auto;
pid $work/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/temp;
  sendfile on;
  server {
    listen 127.0.0.1:$port;
    location = /bench/ours.bin { alias $work/source.bin; default_type application/octet-stream; }
  }
}
EOF
"$nginx" -p "$work" -c "$work/nginx.conf" -g 'daemon off; master_process on;' &
server=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/bench/ours.bin" && break; sleep 0.05; done
echo "curl from nginx: $(curl -sS --fail -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port/bench/ours.bin") s"
child=("$bench" --download-child "http://127.0.0.1:$port" bench ours.bin "$work/down.bin" "$rounds" "$mode")
if [ "${PERF:-1}" = 0 ]; then
    touch "$work/down.bin"
    "${child[@]}"
    [ "$mode" = drain ] || cmp "$work/source.bin" "$work/down.bin"
    exit 0
fi
touch "$work/down.bin"
perf record -F 4000 -g -o "$work/perf.data" -- "${child[@]}" 2>/dev/null
[ "$mode" = drain ] || cmp "$work/source.bin" "$work/down.bin"
echo "--- threads (self)"
perf report -i "$work/perf.data" --no-children --sort comm -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8
set +o pipefail  # head closes the reports early
echo "--- shared objects (self)"
perf report -i "$work/perf.data" --no-children --sort dso -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -10
echo "--- symbols (self)"
perf report -i "$work/perf.data" --no-children --sort dso,sym -g none 2>/dev/null | grep -v '^#' | grep -v '^$' \
  | head -40 | swift demangle --simplified | cut -c1-170
echo "--- project frames (inclusive)"
perf report -i "$work/perf.data" --children --sort sym -g none 2>/dev/null | grep -v '^#' \
  | grep -E 'GQLServices|GQLHTTP|GQLCrypto' | head -25 | swift demangle --simplified | cut -c1-170
