# Sourced by profile-server.sh and server-rate.sh: starts the server ServerBench runs (`ServerBench --serve`, a
# temporary SQLite file) and writes the wrk script of a workload. Needs `$bench` (the ServerBench binary), `$work`
# (a temporary directory) and `$kind` (get or create); sets `$server` (its pid) and `$url`, and writes
# "$work/load.lua". Every create makes a new object: each wrk run has a key prefix of its own (RUN in its
# environment). HEADERS=bare (default), python or browser picks the request's header set, as ServerBench's rows do
# (browser: with the origin the server allows); PLANS=off starts the server with every document on the executor.
# `$launch` (optional) is a command the server runs under, e.g. valgrind (it must exec the server, keeping its pid),
# and `$startup` (default 10) the seconds to wait for it to listen.
start_server() {
  if [ "${PLANS:-on}" = off ]; then export GQL_DEV_SERVER_PLANS=off; fi
  ${launch:-} "$bench" --serve --db "$work/server.sqlite" > "$work/serve.out" 2>&1 &
  server=$!
  for _ in $(seq $(( ${startup:-10} * 10 ))); do grep -q '^HTTP' "$work/serve.out" && break; sleep 0.1; done
  url=$(grep -o 'http://[^ ]*' "$work/serve.out" | head -1)
  curl -s -X POST -H 'Content-Type: application/json' "$url" \
    -d '{"query":"mutation { createObjects(input: {objectId: \"seed-0\", text: \"benchmark\", number: 0, boolean: true}) { objectId } }"}' >/dev/null
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
  else
    cat "$work/headers.lua" - > "$work/load.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
counter = 0
run = os.getenv("RUN") or "0"
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{"query":"mutation Create($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text number } }","variables":{"input":{"objectId":"p-' .. run .. '-' .. tid .. '-' .. counter .. '","text":"benchmark","number":1,"boolean":true}}}')
end
LUA
  fi
}
