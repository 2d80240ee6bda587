#!/bin/bash
# Instructions per operation of the network-side workloads that GQLValue's object representation touches, counted
# by valgrind's callgrind across every thread of the process (client, in-process GQLDevServer, event loops): steady
# where wall time on a shared machine swings by 10–30 %. `make bench-callgrind-values` runs it.
#
#   bash Benchmarks/callgrind-values.sh [DIR ...]
#
# Each DIR holds release builds of NetBench and SyncBench (DIR/NetBench, DIR/SyncBench) with BenchKit's
# CallgrindSection markers, e.g. one built from a commit before a change and one after; without a DIR the script
# builds this tree's and counts those. Each benchmark runs once per DIR under
#   valgrind --tool=callgrind --dump-before='*benchkitCallgrindStart*' --dump-before='*benchkitCallgrindStop*'
# with BENCH_CALLGRIND naming its measured sections (one round after the warm-up): every section becomes one dump,
# and a figure is the sum of its section's dumps divided by the operations the benchmark reports for them.
# Figures: NetBench's query round trip through GQLServer.query (1 and 16 clients) and through raw AsyncHTTPClient
# parsing with GQLValue(json:), with the in-process server's share of the one-client figure (its first handler's
# channelRead with everything it calls: reading the request, the plan, the answer's write); SyncBench's drain, one
# mutation per request and 50 per request, and the mutation loop by hand, per mutation; its pull and the
# hand-written dictionary pull, per row. QUERIES (default 500), MUTATIONS (default 1000) and ROWS (default 5000) set
# the sizes: a DIR takes 5–10 minutes at them, 2–3 minutes at QUERIES=250 MUTATIONS=100 ROWS=500.
# KEEP=1 keeps the dumps (for callgrind_annotate) and says where.
set -euo pipefail
dirs=()
for dir in "$@"; do dirs+=("$(cd "$dir" && pwd)"); done
cd "$(dirname "$0")"
queries=${QUERIES:-500}
mutations=${MUTATIONS:-1000}
rows=${ROWS:-5000}
if [ ${#dirs[@]} -eq 0 ]; then
    for product in NetBench SyncBench; do
        SQLITE_ENABLE_PREUPDATE_HOOK=1 swift build -c release --disable-build-manifest-caching --product "$product" \
            >/dev/null
    done
    dirs=(.build/release)
fi
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "dumps kept in $work"; else trap 'rm -rf "$work"' EXIT; fi
# An async main ends in dispatch_main(), which valgrind 3.19 cannot follow: see callgrind-mainshim.c.
${CC:-clang} -O1 -shared -fPIC -o "$work/mainshim.so" callgrind-mainshim.c

# count DIR NAME BINARY SECTIONS ARGS...: runs BINARY under callgrind with SECTIONS, leaving in $work/NAME/pairs one
# "section operations dump-file" line per section: each start and each stop of a section dumps (the first dump
# holds what ran before the section, the second the section), and the Nth dump its stop triggered is the Nth
# section the benchmark reported.
count() {
    local out=$work/$2 binary=$work/$2/$3 sections=$4
    mkdir -p "$out"
    # Valgrind 3.19 cannot read the DWARF 5 that Swift 6 writes ("ensure_valid failed"): the symbol table is
    # enough to name functions.
    strip --strip-debug -o "$binary" "$1/$3"
    shift 4
    LD_PRELOAD=$work/mainshim.so BENCH_CALLGRIND=$sections valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
        "--dump-before=*benchkitCallgrindStart*" "--dump-before=*benchkitCallgrindStop*" \
        "$binary" "$@" >"$out/stdout" 2>"$out/stderr" || {
        echo "callgrind-values.sh: $binary $* failed:" >&2
        tail -20 "$out/stderr" >&2
        exit 1
    }
    local stops=() n=1
    while [ -f "$out/cg.$n" ]; do
        if grep -q '^desc: Trigger: --dump-before=.*benchkitCallgrindStop' "$out/cg.$n"; then stops+=("$out/cg.$n"); fi
        n=$((n + 1))
    done
    grep '^callgrind-section ' "$out/stderr" | cut -d' ' -f2,3 | {
        local index=0 section operations
        while read -r section operations; do
            echo "$section $operations ${stops[$index]:-missing}"
            index=$((index + 1))
        done
    } >"$out/pairs"
    if [ "${#stops[@]}" -ne "$(wc -l <"$out/pairs")" ]; then
        echo "callgrind-values.sh: $3 reported $(wc -l <"$out/pairs") sections but callgrind dumped ${#stops[@]}" >&2
        exit 1
    fi
}

# per NAME SECTION: the section's instructions per operation, from its dumps.
per() {
    local total=0 ops=0 section operations file
    while read -r section operations file; do
        [ "$section" = "$2" ] || continue
        total=$((total + $(awk '/^summary:/ {print $2; exit}' "$file")))
        ops=$((ops + operations))
    done <"$work/$1/pairs"
    if [ "$ops" -gt 0 ]; then echo $((total / ops)); else echo "-"; fi
}

# inclusive NAME SECTION PATTERN: the instructions per operation spent inside functions matching PATTERN (their
# callees included) within the section's dumps: callgrind_annotate's inclusive count of each matching function,
# summed (the patterns name functions that do not call one another).
inclusive() {
    local total=0 ops=0 section operations file value
    while read -r section operations file; do
        [ "$section" = "$2" ] || continue
        value=$(callgrind_annotate --inclusive=yes --threshold=100 "$file" 2>/dev/null |
            awk -v pattern="$3" '$0 ~ pattern { gsub(",", "", $1); sum += $1 } END { print sum + 0 }')
        total=$((total + value))
        ops=$((ops + operations))
    done <"$work/$1/pairs"
    if [ "$ops" -gt 0 ]; then echo $((total / ops)); else echo "-"; fi
}

changes=$(git status --porcelain --untracked-files=no -- ../Sources . 2>/dev/null || true)
echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${changes:+ +changes} (the script's)"
echo "$(valgrind --version), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sizes:   NetBench --queries $queries, SyncBench --mutations $mutations, --rows $rows; one measured round"
index=0
for dir in "${dirs[@]}"; do
    index=$((index + 1))
    count "$dir" net$index NetBench query.gqlserver.1,query.raw.1,query.gqlserver.16 \
        --only query --queries "$queries" --rounds 1
    count "$dir" drain$index SyncBench drain.single,drain.loop,drain.batched \
        --only drain --contenders single,batched,loop --mutations "$mutations" --rounds 1 --chunks 2
    count "$dir" pull$index SyncBench pull.sync,pull.dictionary \
        --only pull --rows "$rows" --rounds 1
done

printf '%-44s' "instructions per operation"
for dir in "${dirs[@]}"; do printf ' %16s' "$(basename "$(dirname "$dir/x")")"; done
echo
# The server's first handler, ConnectionGuard.channelRead (not its protocol witness, which calls it).
guard='ConnectionGuardC11channelRead7context4datay7NIOCore21ChannelHandlerContextC_AG6NIOAnyVtF '
row() {
    printf '%-44s' "$1"
    local index=0
    for dir in "${dirs[@]}"; do
        index=$((index + 1))
        case "$2" in
            server) value=$(inclusive net$index query.gqlserver.1 "$guard") ;;
            *) value=$(per "$3$index" "$2") ;;
        esac
        printf ' %16s' "$value"
    done
    echo
}
row "query, GQLServer, 1 client (whole process)" query.gqlserver.1 net
row "  of it the server's pipeline, inclusive" server net
row "query, GQLServer, 16 clients" query.gqlserver.16 net
row "query, raw AHC + GQLValue, 1 client" query.raw.1 net
row "drain, one per request (per mutation)" drain.single drain
row "drain, 50 per request (per mutation)" drain.batched drain
row "drain, mutation loop by hand (per mutation)" drain.loop drain
row "pull (per row)" pull.sync pull
row "pull by hand, dictionary API (per row)" pull.dictionary pull
