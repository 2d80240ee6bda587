#!/usr/bin/env bash
# emulator-memory.sh [MiB]: puts one object of MiB mebibytes (default 1024: 1 GiB) through the storage emulator of
# `gql-cli serve --storage` and gets it back, then reports the emulator process's resident memory: before (after a
# small warm-up object), its peak over the whole run (VmHWM), and the highest RSS sampled during the upload and
# during the download. The object is compared with the source. A server that held the object in memory would peak
# above its size; the emulator streams it to and from disk, a buffer per transfer.
#
# The client is `gql-cli storage upload|download` in processes of their own (multipart upload, one streamed GET),
# so only the emulator's memory is in the emulator's process. Uses .build/release/gql-cli when it exists, else
# .build/debug/gql-cli (GQL_CLI overrides); run under the machine's lock, e.g.
#   /work/bin/wt-run DIR 'swift build -c release --product gql-cli && Benchmarks/emulator-memory.sh'
# Everything listens on 127.0.0.1; the scratch folder is under TMPDIR (the object and its copy: twice MiB on disk,
# plus the emulator's copy).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mib="${1:-1024}"
cli="${GQL_CLI:-}"
if [ -z "$cli" ]; then
  for candidate in "$root/.build/release/gql-cli" "$root/.build/debug/gql-cli"; do
    if [ -x "$candidate" ]; then cli="$candidate"; break; fi
  done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "gql-cli is not built (swift build --product gql-cli), or set GQL_CLI" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/emulator-memory.XXXXXX")"
pid=""
sampler=""
cleanup() {
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null || true
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$cli" serve --port 0 --storage --storage-port 0 --storage-bucket memory --data "$work/data" \
  --endpoints-file "$work/endpoints.json" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$work/endpoints.json" ] && break; sleep 0.1; done
[ -s "$work/endpoints.json" ] || { echo "the emulator did not start:"; cat "$work/serve.log"; exit 1; } >&2
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/endpoints.json" "$1"; }
flags=(--endpoint "$(field storage)" --access-key "$(field storageAccessKey)" --secret-key "$(field storageSecretKey)")

# kB of a /proc/PID/status line (VmRSS, VmHWM).
status() { awk -v name="$1:" '$1 == name { print $2 }' "/proc/$pid/status"; }
mib_of() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }
# Samples VmRSS every 0.1 s into FILE until killed.
sample() { while :; do status VmRSS >>"$1" 2>/dev/null || true; sleep 0.1; done; }
highest() { sort -n "$1" | tail -1; }

head -c 100000 /dev/urandom >"$work/small.bin"
"$cli" storage upload "$work/small.bin" s3://memory/small.bin "${flags[@]}" >/dev/null
"$cli" storage download memory/small.bin "$work/small-back.bin" "${flags[@]}" >/dev/null
baseline="$(status VmRSS)"

head -c "$((mib << 20))" /dev/urandom >"$work/big.bin"
sample "$work/up.rss" & sampler=$!
started=$(date +%s.%N)
"$cli" storage upload "$work/big.bin" s3://memory/big.bin "${flags[@]}" >/dev/null
uploaded=$(date +%s.%N)
kill "$sampler"; wait "$sampler" 2>/dev/null || true
sample "$work/down.rss" & sampler=$!
"$cli" storage download memory/big.bin "$work/big-back.bin" "${flags[@]}" >/dev/null
downloaded=$(date +%s.%N)
kill "$sampler"; wait "$sampler" 2>/dev/null || true
sampler=""
peak="$(status VmHWM)"
cmp -s "$work/big.bin" "$work/big-back.bin" || { echo "the object came back different" >&2; exit 1; }

echo "emulator-memory: ${mib} MiB through $(basename "$(dirname "$cli")") gql-cli serve --storage, $(nproc) cores"
echo "  upload   $(awk -v a="$started" -v b="$uploaded" -v m="$mib" 'BEGIN { printf "%.1f s (%.0f MiB/s)", b - a, m / (b - a) }')"
echo "  download $(awk -v a="$uploaded" -v b="$downloaded" -v m="$mib" 'BEGIN { printf "%.1f s (%.0f MiB/s)", b - a, m / (b - a) }')"
echo "  emulator RSS before:            $(mib_of "$baseline") MiB"
echo "  emulator RSS highest, upload:   $(mib_of "$(highest "$work/up.rss")") MiB"
echo "  emulator RSS highest, download: $(mib_of "$(highest "$work/down.rss")") MiB"
echo "  emulator peak (VmHWM), whole run: $(mib_of "$peak") MiB; grown by $(mib_of $((peak - baseline))) MiB for a ${mib} MiB object"
