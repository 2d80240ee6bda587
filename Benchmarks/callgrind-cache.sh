#!/bin/bash
# Instructions of CacheBench's reads, counted by valgrind's callgrind: a cold read (a fresh GQLCache on the file,
# SQLite only), a warm read (the memory layer) and the floor (parsing the answer's JSON bytes), per read. Steady
# where wall time on this shared machine swings by 10-30 %. SECTIONS=write.cache,write.raw counts the writes
# instead (parse + cache.write, and the floor's parse + rows by hand), per write; any list of CacheBench's
# sections works.
#
#   bash Benchmarks/callgrind-cache.sh [BINARY]
#
# Without BINARY it builds this tree's CacheBench (release). The reads of the warm-up round and of ROUNDS measured
# rounds (default 2) are each one section (BenchKit's CallgrindSection: a dump at its start and one at its end);
# the figure is the mean of a section's dumps. KEEP=1 keeps the dumps for `callgrind_annotate` and says where.
# CACHE_SIM=1 adds callgrind's cache simulation (first-level and last-level misses, reads and writes: what the
# instruction count leaves out) and counts the calls to malloc per read. valgrind takes the host's caches as
# given, and on this VM it is given a 512 MiB last level: CACHE_SIM_ARGS sets the geometry instead, e.g.
# "--D1=49152,12,64 --LL=1048576,8,64" (the EPYC's first level and its 1 MiB second level as the last).
set -euo pipefail
binary=${1:-}
cd "$(dirname "$0")"
if [ -z "$binary" ]; then
    SQLITE_ENABLE_PREUPDATE_HOOK=1 swift build -c release --disable-build-manifest-caching --product CacheBench >/dev/null
    binary=.build/release/CacheBench
fi
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "dumps kept in $work"; else trap 'rm -rf "$work"' EXIT; fi
# An async main ends in dispatch_main(), which valgrind 3.19 cannot follow (callgrind-mainshim.c); and valgrind
# 3.19 cannot read the DWARF 5 that Swift 6 writes: the symbol table is enough to name functions.
${CC:-clang} -O1 -shared -fPIC -o "$work/mainshim.so" callgrind-mainshim.c
strip --strip-debug -o "$work/CacheBench" "$binary"
changes=$(git status --porcelain --untracked-files=no -- ../Sources . 2>/dev/null || true)
echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${changes:+ +changes}"
echo "$(valgrind --version), load average $(cut -d' ' -f1-3 /proc/loadavg)"
simulate=()
if [ -n "${CACHE_SIM:-}" ]; then simulate=(--cache-sim=yes ${BRANCH_SIM:+--branch-sim=yes} ${CACHE_SIM_ARGS:-}); fi
sections=${SECTIONS:-read.cold,read.warm,read.parse}
LD_PRELOAD=$work/mainshim.so BENCH_CALLGRIND=$sections valgrind --tool=callgrind \
    "${simulate[@]}" --callgrind-out-file="$work/cg" "--dump-before=*benchkitCallgrindStart*" "--dump-before=*benchkitCallgrindStop*" \
    "$work/CacheBench" --only read --rounds "${ROUNDS:-2}" >"$work/stdout" 2>"$work/stderr" || {
    tail -20 "$work/stderr" >&2
    exit 1
}
# Each stop's dump is one section, in the order the benchmark printed them.
stops=()
n=1
while [ -f "$work/cg.$n" ]; do
    if grep -q '^desc: Trigger: --dump-before=.*benchkitCallgrindStop' "$work/cg.$n"; then stops+=("$work/cg.$n"); fi
    n=$((n + 1))
done
grep '^callgrind-section ' "$work/stderr" | cut -d' ' -f2 >"$work/sections"
if [ "${#stops[@]}" -ne "$(wc -l <"$work/sections")" ]; then
    echo "callgrind-cache.sh: ${#stops[@]} dumps for $(wc -l <"$work/sections") sections" >&2
    exit 1
fi
index=0
while read -r section; do
    echo "$section $(awk '/^summary:/ {print $2; exit}' "${stops[$index]}") ${stops[$index]}"
    index=$((index + 1))
done <"$work/sections" >"$work/pairs"
printf '%-12s %16s %8s\n' section "instructions" reads
for section in ${sections//,/ }; do
    awk -v s="$section" '$1 == s { total += $2; n++ } END { if (n) printf "%-12s %16d %8d\n", s, total / n, n }' \
        "$work/pairs"
done
if [ -n "${CACHE_SIM:-}" ]; then
    # Every event of the summary (Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw), and the calls to malloc, per read.
    echo
    printf '%-12s %s\n' section "$(awk '/^events:/ {$1 = ""; print; exit}' "${stops[0]}") malloc-calls"
    for section in ${sections//,/ }; do
        files=$(awk -v s="$section" '$1 == s { print $3 }' "$work/pairs")
        [ -n "$files" ] || continue
        # shellcheck disable=SC2086
        awk -v s="$section" '
            FNR == 1 { file++ }
            /^summary:/ { for (i = 2; i <= NF; i++) total[i] += $i; if (NF > width) width = NF }
            # Function names are compressed: "(id) name" the first time in a file, "(id)" after.
            /^c?fn=/ {
                spec = substr($0, index($0, "=") + 1)
                id = spec; sub(/ .*/, "", id)
                name = spec; if (sub(/^\([0-9]+\) /, "", name)) names[file, id] = name; else name = names[file, id]
                inmalloc = ($0 ~ /^cfn=/ && name == "malloc")
                next
            }
            inmalloc && /^calls=/ { split($1, c, "="); calls += c[2]; inmalloc = 0; next }
            END {
                line = sprintf("%-12s", s)
                for (i = 2; i <= width; i++) line = line sprintf(" %d", total[i] / file)
                printf "%s %d\n", line, calls / file
            }' $files
    done
fi
if [ -n "${KEEP:-}" ]; then cat "$work/pairs"; fi
