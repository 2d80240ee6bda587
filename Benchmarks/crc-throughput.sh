#!/usr/bin/env bash
# GQLCrypto's CRC64NVME and CRC32 in MB/s on one core (Benchmarks/crc-throughput.swift, compiled with the CRC sources,
# -O), beside libcrypto's MD5 (openssl speed), the other per-byte work of the storage emulator's uploads.
# Usage: bash Benchmarks/crc-throughput.sh [MiB, default 256] [passes, default 5]. Run it alone (the machine's lock).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
swiftc -O -wmo -parse-as-library -package-name GraphQLite -module-name CRCThroughput -o "$out/crc-throughput" \
  "$root/Benchmarks/crc-throughput.swift" "$root/Sources/GQLCrypto/CRC64NVME.swift" \
  "$root/Sources/GQLCrypto/CRC32.swift" "$root/Sources/GQLCrypto/ReflectedCRC.swift"
"$out/crc-throughput" "${1:-256}" "${2:-5}"
openssl speed -evp md5 -bytes 1048576 -seconds 3 2>/dev/null | tail -1 | awk '{ printf "MD5 (libcrypto, openssl speed, 1 MiB blocks): %.0f MB/s\n", $2 / 1000 }'
