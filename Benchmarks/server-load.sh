# Sourced by profile-server.sh and server-rate.sh: starts the server ServerBench runs (`ServerBench --serve`, a
# temporary SQLite file) and writes the wrk script of a workload. Needs `$bench` (the ServerBench binary), `$work`
# (a temporary directory) and `$kind` (get or create); sets `$server` (its pid) and `$url`, and writes
# "$work/load.lua". Every create makes a new object: each wrk run has a key prefix of its own (RUN in its
# environment). HEADERS=bare (default), python or browser picks the request's header set, as ServerBench's rows do
# (browser: with the origin the server allows); PLANS=off starts the server with every document on the executor.
# `$launch` (optional) is a command the server runs under, e.g. valgrind (it must exec the server, keeping its pid),
# and `$startup` (default 10) the seconds to wait for it to listen. The seed object every get reads must be created
# (curl -f, its answer checked) or start_server exits; load.lua checks every answer too (a get's body is exactly
# `$seeded_answer`, a create's holds its new object) and at the end wrk prints the count of wrong ones to stderr and
# exits 1 if there are any, so a script under `set -e` stops: a 200 with a null or an error is not a measured query.
seeded_answer='{"data":{"getObjects":{"objectId":"seed-0","text":"benchmark","number":0,"double":null,"boolean":true}}}'
start_server() {
  if [ "${PLANS:-on}" = off ]; then export GQL_DEV_SERVER_PLANS=off; fi
  # A fresh file each start, so the seed is created, not refused as already there (callgrind-server.sh starts many).
  rm -f "$work/server.sqlite" "$work/server.sqlite-wal" "$work/server.sqlite-shm"
  ${launch:-} "$bench" --serve --db "$work/server.sqlite" > "$work/serve.out" 2>&1 &
  server=$!
  for _ in $(seq $(( ${startup:-10} * 10 ))); do grep -q '^HTTP' "$work/serve.out" && break; sleep 0.1; done
  url=$(grep -o 'http://[^ ]*' "$work/serve.out" | head -1)
  local seed
  seed=$(curl -fsS -X POST -H 'Content-Type: application/json' "$url" \
    -d '{"query":"mutation { createObjects(input: {objectId: \"seed-0\", text: \"benchmark\", number: 0, boolean: true}) { objectId } }"}') ||
    { echo "server-load.sh: the seed mutation failed" >&2; exit 1; }
  [ "$seed" = '{"data":{"createObjects":{"objectId":"seed-0"}}}' ] ||
    { echo "server-load.sh: the seed mutation answered $seed" >&2; exit 1; }
  case "${HEADERS:-bare}" in
    bare) : > "$work/headers.lua" ;;
    python) "$bench" --wrk-headers python > "$work/headers.lua" ;;
    browser) "$bench" --wrk-headers browser > "$work/headers.lua" ;;
    *) echo "HEADERS is bare, python or browser" >&2; exit 2 ;;
  esac
  if [ "$kind" = get ]; then
    cat "$work/headers.lua" - > "$work/load.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"query":"query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }","variables":{"id":"seed-0"}}'
LUA
    printf 'expected = [==[%s]==]\n' "$seeded_answer" >> "$work/load.lua"
    cat >> "$work/load.lua" <<'LUA'
function response(status, headers, body) if body ~= expected then wrong = wrong + 1 end end
LUA
  else
    cat "$work/headers.lua" - > "$work/load.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
counter = 0
run = os.getenv("RUN") or "0"
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{"query":"mutation Create($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text number } }","variables":{"input":{"objectId":"p-' .. run .. '-' .. tid .. '-' .. counter .. '","text":"benchmark","number":1,"boolean":true}}}')
end
function response(status, headers, body)
  if not string.find(body, '{"data":{"createObjects":{"objectId":"p-' .. run .. '-', 1, true) then wrong = wrong + 1 end
end
LUA
  fi
  # Shared by both kinds: each wrk thread counts its wrong answers; done() adds them up and fails the run.
  cat >> "$work/load.lua" <<'LUA'
wrong = 0
local threads = {}
function setup(thread) table.insert(threads, thread); thread:set("tid", #threads) end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + (thread:get("wrong") or 0) end
  if total > 0 then io.stderr:write("wrong answers: " .. total .. " of " .. summary.requests .. "\n"); os.exit(1) end
end
LUA
}
