#!/bin/bash
# Instructions per query of GQLDevServer's HTTP path, counted by valgrind's callgrind in the server ServerBench runs
# (`ServerBench --serve`: the default configuration `gql-cli serve` runs, a temporary SQLite file) while wrk sends
# it the benchmark's query, for each header set: steady where wall time on this shared machine swings by 10–30 %.
# Every thread of the server is counted (its event loops, SQLite); the kernel's side of the system calls is not
# (count those with `strace -c -f -p`).
#
#   bash Benchmarks/callgrind-server.sh [SERVERBENCH ...]
#
# Each SERVERBENCH is a release build of ServerBench (default: Benchmarks/.build/release/ServerBench), e.g. one built
# before a change and one after. Per build and header set (HEADERS, default "bare python browser") the server starts
# under callgrind with instrumentation off, is warmed by wrk for WARM seconds (default 3), then counted over COUNTED
# seconds (default 6) of wrk at CONNECTIONS (default 1) connection(s); the figures are the counted instructions divided by
# the queries wrk completed, in total and inside the parts of the request path (inclusive, callees counted):
#   read+answer  DirectHTTPHandler.channelRead: everything from the bytes read to the answer written (not flushed)
#   parse        DirectRequestParser.parse: the request line and header block
#   body JSON    HTTPRequestDecoder.decodeBody: the body's JSON into a request (since issue 25's seventh session
#                the direct path's HTTPRequestDecoder.singleRequest, or where that is inlined GQLValue.forEachMember,
#                the body's parse without the request made of its members)
#   plan lookup  DevEngine.prepare: the cached document, the operation, the limits (since issue 25's twelfth
#                session DevEngine.prepared, which the direct path calls)
#   run          DevEngine.runNow: arguments, the store read and the response's JSON, of it
#     SQLite       the read connection, the statement, the row: GQLDatabaseContext.fetchAll(sql:) (the row as a
#                  dictionary), or since a getT is written from its columns GQLDatabaseContext.forEachRow, which
#                  includes the next column's work (its row callback)
#     item         the row into an item (ModelCodec.item; 0 where inlined), or since then the getT's answer
#                  written from the columns (DevEngine.written's row callback, inside forEachRow)
#     encode       the response's JSON
#   head+write   DirectHTTPHandler.write: the answer's head and body into a buffer, queued on the channel
#   flush        DirectHTTPHandler.channelReadComplete: the flush, the socket write
#   the rest     the event loop, socket reads, the connection guard: the total less read+answer and flush
# KEEP=1 keeps the dumps (for callgrind_annotate) and says where.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("$here/.build/release/ServerBench")
seconds=${COUNTED:-6}
warm=${WARM:-3}
connections=${CONNECTIONS:-1}
threads=$(( connections < 2 ? connections : 2 ))
work=$(mktemp -d)
server=""
cleanup() { kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
[ -z "${KEEP:-}" ] || echo "dumps kept in $work"
# An async main ends in dispatch_main(), which valgrind 3.19 cannot follow: see callgrind-mainshim.c.
${CC:-clang} -O1 -shared -fPIC -o "$work/mainshim.so" "$here/callgrind-mainshim.c"
source "$here/server-load.sh"
kind=get
startup=180

# part FILE PATTERN: the inclusive instructions of the function whose (mangled) name matches PATTERN: the largest
# of the matches, since a function's specializations and thunks call one another.
part() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
        awk -v pattern="$2" '$0 ~ pattern { gsub(",", "", $1); if ($1 + 0 > max) max = $1 + 0 } END { printf "%.0f", max }'
}

echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:  $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown) (the script's)"
echo "$(valgrind --version), load average $(cut -d' ' -f1-3 /proc/loadavg); $connections connection(s), ${seconds}s counted"
printf '%-12s %-8s %8s %11s %8s %8s %8s %8s %8s %8s %8s %9s %8s %8s\n' build headers queries total read+ans parse \
    body plan run SQLite item encode write flush
index=0
for build in "${builds[@]}"; do
    index=$((index + 1))
    # Valgrind 3.19 cannot read the DWARF 5 that Swift 6 writes: the symbol table is enough to name functions.
    bench=$work/ServerBench$index
    strip --strip-debug -o "$bench" "$build"
    for headers in ${HEADERS:-bare python browser}; do
        out=$work/$index-$headers.cg
        launch="env LD_PRELOAD=$work/mainshim.so valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$out"
        HEADERS=$headers start_server
        [ -n "${url:-}" ] || { echo "callgrind-server.sh: the server did not start:" >&2; tail "$work/serve.out" >&2; exit 1; }
        RUN=w$RANDOM wrk -t1 -c1 -d"${warm}s" -s "$work/load.lua" "$url" >/dev/null
        callgrind_control -i on "$server" >/dev/null
        # load.lua fails wrk (exit 1, the count on stderr) when an answer is not the seeded item's.
        result=$(RUN=m$RANDOM wrk -t"$threads" -c"$connections" -d"${seconds}s" -s "$work/load.lua" "$url") ||
            { echo "callgrind-server.sh: wrong answers ($build, $headers)" >&2; exit 1; }
        callgrind_control -d "$server" >/dev/null
        callgrind_control -i off "$server" >/dev/null
        kill -INT "$server"; wait "$server" 2>/dev/null || true; server=""
        if echo "$result" | grep -q 'Non-2xx'; then echo "callgrind-server.sh: wrong answers: $result" >&2; exit 1; fi
        queries=$(echo "$result" | awk '/requests in/ {print $1}')
        dump=$(ls -t "$out".* 2>/dev/null | grep -v '\.0$' | head -1 || true)
        [ -n "$dump" ] || dump=$(ls -t "$out"* | head -1)
        total=$(awk '/^summary:/ {print $2; exit}' "$dump")
        row=()
        for pattern in \
            'DirectHTTPHandlerC11channelRead7context4data' \
            'DirectRequestParserV5parse' \
            'HTTPRequestDecoderO10decodeBodyys6Result.*Says5UInt8VGFZ|HTTPRequestDecoderO13singleRequest|HTTPRequestDecoderO12singleObject|GQLValueO13forEachMember12ofJSONObject' \
            'DevEngineC7prepareys6Result|DevEngineC8preparedyAC8Prepared' \
            'DevEngineC6runNow__9formatter' \
            'GQLDatabaseContextPAAE8fetchAll3sql_|GQLDatabaseContextPAAE10forEachRow3sql' \
            'ModelCodecV4itemy|DevEngineC7written__3key6budget.*GQLColumnsVXEfU_' \
            'DevEngineC8response.*OperationPlanV_Says6Result' \
            'DirectHTTPHandlerC5write.*HTTPResponseV6Status' \
            'DirectHTTPHandlerC7NIOCore22_ChannelInboundHandlerAadEP19channelReadComplete7context'; do
            row+=("$(( $(part "$dump" "$pattern") / queries ))")
        done
        printf '%-12s %-8s %8s %11s %8s %8s %8s %8s %8s %8s %8s %9s %8s %8s\n' "$(basename "$build")#$index" \
            "$headers" "$queries" "$(( total / queries ))" "${row[@]}"
    done
done
