#!/bin/bash
# Instructions per row of each StoreBench workload, counted by valgrind's callgrind: steadier than wall-clock
# time on a shared machine. `make bench-callgrind` runs it; ROWS (default 20000) sets the table size.
# Each (implementation, workload) pair is its own run with collection switched on only inside that workload's
# method, and the observed-insert workload is skipped so no method runs inside another. WORKLOADS (default: all
# five) picks some of insert fetchAll fetchAllByRow fetchOne fetchOneInRead, to split a long run into shorter ones.
set -euo pipefail
cd "$(dirname "$0")"
rows=${ROWS:-20000}
SQLITE_ENABLE_PREUPDATE_HOOK=1 swift build -c release --disable-build-manifest-caching --product StoreBench >/dev/null
binary=.build/release/StoreBench
lookups=10000
# What was measured, as every benchmark's header says it (BenchKit's BenchEnvironment).
changes=$(git status --porcelain --untracked-files=no -- ../Sources . 2>/dev/null || true)
echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${changes:+ +changes}"
echo "$(valgrind --version), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %12s %12s %12s   (instructions per row; fetchOne per lookup; %d rows)\n' workload GQLStore GRDB "raw C" "$rows"
for workload in ${WORKLOADS:-insert fetchAll fetchAllByRow fetchOne fetchOneInRead}; do
    case "$workload" in
        insert | fetchAll | fetchAllByRow | fetchOne | fetchOneInRead) ;;
        *) echo "callgrind-store.sh: unknown workload $workload" >&2; exit 2 ;;
    esac
    line=$(printf '%-16s' "$workload")
    for pair in "gqlstore 13BenchGQLStore" "grdb 9BenchGRDB" "raw 14BenchRawSQLite"; do
        set -- $pair
        # The workload's method in this implementation's module: `<module>…C<len><name>SiyKF`.
        symbol=$(nm "$binary" | awk '{print $NF}' | grep -E "^\\\$s$2.*C${#workload}${workload}SiyKF\$" | head -1)
        out=$(mktemp)
        valgrind --tool=callgrind --callgrind-out-file="$out" "--toggle-collect=$symbol" \
            "$binary" --rows "$rows" --rounds 1 --no-warmup --only "$1" --no-observers >/dev/null 2>&1
        total=$(awk '/^summary:/ {print $2}' "$out")
        rm -f "$out"
        case "$workload" in fetchOne*) per=$(( total / lookups )) ;; *) per=$(( total / rows )) ;; esac
        line+=$(printf ' %12d' "$per")
    done
    echo "$line"
done
