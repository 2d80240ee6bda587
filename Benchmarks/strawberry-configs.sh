#!/usr/bin/env bash
# Is ServerBench's Strawberry at its best on this machine? Runs Strawberry (Benchmarks/Server/strawberry_server.py)
# in each configuration given and drives ServerBench's query with wrk at 1 and 16 connections, RUNS times each.
# A configuration is SERVER WORKERS: `uvicorn N` (uvloop + httptools, what ServerBench runs), `granian N` (granian's
# ASGI interface on uvloop) or `granian-st N` (its single-threaded runtime). granian is not in requirements.txt:
# install it into .venv first (`.venv/bin/python3 -m pip install granian`); its configurations are skipped without it.
#
#   bash Benchmarks/strawberry-configs.sh ["uvicorn 1" "uvicorn 2" ...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python="$(dirname "$here")/.venv/bin/python3"
runs=${RUNS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/query.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"query":"query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }","variables":{"id":"seed-0"}}'
LUA
[ $# -gt 0 ] || set -- "uvicorn 1" "uvicorn 2" "uvicorn 3" "uvicorn 4" "granian 1" "granian 2" "granian-st 1" "granian-st 2"
for configuration in "$@"; do
  read -r kind workers <<< "$configuration"
  database="$work/$kind-$workers.sqlite"; port=$((20000 + RANDOM % 20000))
  case "$kind" in
    uvicorn)
      "$python" "$here/Server/strawberry_server.py" --port "$port" --workers "$workers" --database "$database" > /dev/null 2>&1 & ;;
    granian|granian-st)
      "$python" -c "import granian" 2>/dev/null || { echo "$configuration: granian is not installed, skipped"; continue; }
      "$python" -c "import sys; sys.path.insert(0, '$here/Server'); import strawberry_server as s; s.open_database('$database').close()"
      mode=""; [ "$kind" = granian-st ] && mode="--runtime-mode st"
      (cd "$here/Server" && STRAWBERRY_BENCH_DATABASE="$database" exec "$python" -m granian --interface asgi \
        --host 127.0.0.1 --port "$port" --workers "$workers" --loop uvloop --log-level warning $mode strawberry_server:app) \
        > /dev/null 2>&1 & ;;
    *) echo "unknown configuration: $configuration" >&2; exit 2 ;;
  esac
  pid=$!
  url="http://127.0.0.1:$port/graphql"
  for _ in $(seq 100); do curl -s -o /dev/null "$url" -X POST -H 'Content-Type: application/json' -d '{"query":"{__typename}"}' && break; sleep 0.1; done
  curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "$url" \
    -d '{"query":"mutation { createObjects(input: {objectId: \"seed-0\", text: \"benchmark\", number: 0, boolean: true}) { objectId } }"}'
  wrk -t1 -c1 -d1s -s "$work/query.lua" "$url" > /dev/null
  for run in $(seq "$runs"); do
    one=$(wrk -t1 -c1 -d2s -s "$work/query.lua" "$url" | awk '/Requests\/sec/ {print $2}')
    sixteen=$(wrk -t2 -c16 -d2s -s "$work/query.lua" "$url" | awk '/Requests\/sec/ {print $2}')
    echo "$configuration, run $run: $one queries/s at 1 connection, $sixteen at 16"
  done
  kill -INT "$pid"; sleep 0.5; kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
done
