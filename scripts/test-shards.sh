#!/usr/bin/env bash
# `make test`: the test targets in JOBS processes side by side, each process running one target's tests one at a
# time (the Makefile says why). The tests must be built; BIN_PATH is `swift build --show-bin-path`. The XCTest
# cases run first, alone; then each target's Swift Testing tests run in a process of the test bundle, started
# directly as `swift test` starts it (two `swift test`s at once fight over .build's build database). Each target's
# output is printed whole when it ends (never interleaved with another's), then one line per target with its time;
# exits 1 when any target failed.
#
#   scripts/test-shards.sh JOBS BIN_PATH
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/test-shards.sh JOBS BIN_PATH" >&2; exit 64; }
jobs=$1
# Only on Linux is the test bundle an executable that runs its tests when started (on macOS it is a bundle that
# xctest and swiftpm-testing-helper load), and flock is a Linux tool: elsewhere, the one-process run.
if [ "$(uname -s)" != Linux ]; then
    echo "test-shards: the targets run side by side on Linux only; here, one process (make test-serial)" >&2
    exec "${SWIFT:-swift}" test --skip-build --no-parallel
fi
bundle=$(find "$2" -maxdepth 1 -name '*PackageTests.xctest' | head -1)
[ -n "$bundle" ] || { echo "test-shards: no *PackageTests.xctest in $2 (build the tests first)" >&2; exit 66; }

# The longest first, so that the short ones fill in at the end; a target not named here runs too, after them.
# Side by side in CI (2026-11-28, /tmp/ci-m1.log): DevServer 102 s, Services 96, CLI 89, Net 44, Core 33 (30 of
# them one test), Sync 33, Emulators 28 (unnamed here then, so it ran last), Cache 11, Store 10, Crypto 2, Codegen
# 1, CodegenPlugin 0.4. Played out on two workers this order ends at 225 s with those figures (as the old one) and
# stays within 1 s of the ideal half of the sum when Core's long test is cut (the old order: 13 s over it).
longest_first=(GQLDevServerTests GQLServicesTests GQLCLITests GQLNetTests GQLCoreTests GQLSyncTests GQLEmulatorsTests
    GQLCacheTests GQLStoreTests GQLCryptoTests GQLCodegenTests GQLCodegenPluginTests)
targets=()
for target in "${longest_first[@]}"; do
    if [ -d "Tests/$target" ]; then targets+=("$target"); fi
done
for directory in Tests/*Tests; do
    target=$(basename "$directory")
    if [[ " ${targets[*]} " != *" $target "* ]]; then targets+=("$target"); fi
done

# TEST_SHARD_TARGETS="A B" runs only those targets (to try the runner itself).
if [ -n "${TEST_SHARD_TARGETS:-}" ]; then read -r -a targets <<<"$TEST_SHARD_TARGETS"; fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export TEST_SHARD_LOGS=$logs TEST_SHARD_BUNDLE=$bundle

# One target: its tests one at a time, its output into its log, printed whole at the end under a lock.
run_target() {
    local target=$1 log=$TEST_SHARD_LOGS/$1.log started status
    started=$(date +%s)
    "$TEST_SHARD_BUNDLE" --no-parallel --filter "^$target\\." --testing-library swift-testing >"$log" 2>&1
    status=$?
    echo "$target $status $(($(date +%s) - started))" >"$TEST_SHARD_LOGS/$target.result"
    {
        flock 9
        echo "==== $target (exit $status, $(($(date +%s) - started)) s) ===="
        cat "$log"
    } 9>"$TEST_SHARD_LOGS/print.lock"
}
export -f run_target

started=$(date +%s)
echo "==== XCTest cases ===="
"$bundle" || xctest_failed=1
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_target "$1"' _ {}

failed=${xctest_failed:-0}
[ "$failed" = 0 ] || echo "FAILED  the XCTest cases"
echo "==== test targets, $jobs side by side: $(($(date +%s) - started)) s in all ===="
for target in "${targets[@]}"; do
    if [ -f "$logs/$target.result" ]; then
        read -r _ status seconds <"$logs/$target.result"
    else
        status=missing seconds=0
    fi
    if [ "$status" = 0 ]; then
        echo "passed  $target ($seconds s)"
    else
        echo "FAILED  $target ($seconds s, exit $status)"
        failed=1
    fi
done
exit $failed
