#!/usr/bin/env bash
# Creates <package root>/.venv with the pinned Python test peers of Tests/Interop/requirements.txt:
# the `gql` client library (HTTP, graphql-transport-ws, graphql-ws, AppSync transports) and graphql-core
# for the interoperability test, Strawberry + uvicorn for the server benchmark, moto's S3 server and botocore
# for the GQLStorage tests, the AWS CLI against the S3 emulator.
#
# `setup-venv.sh VENV REQUIREMENTS IMPORTS` makes another venv the same way (CodegenBench's .venv-codegen:
# ariadne-codegen needs a graphql-core older than the one pinned here), checking that IMPORTS (comma-separated) import.
#
# Idempotent: a stamp file holds the hash of the requirements and the Python version; when it matches,
# the script prints nothing and exits 0. Run it again after editing requirements.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/${1:-.venv}"
requirements="$root/${2:-Tests/Interop/requirements.txt}"
imports="${3:-gql, graphql, strawberry, uvicorn, websockets, aiohttp, moto, boto3, botocore, flask, awscli}"
python="${PYTHON:-python3}"

want="$( { sha256sum "$requirements" | cut -d' ' -f1; "$python" --version 2>&1; } | tr '\n' ' ')"
stamp="$venv/.requirements-stamp"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

echo "Setting up $venv (Python peers of $requirements)"
if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    echo "'$python -m venv' failed; on Debian install python3-venv (apt-get install python3-venv)" >&2
    exit 1
  fi
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --requirement "$requirements"
"$venv/bin/python" -c "import $imports"
echo "$want" >"$stamp"
echo "Installed $(grep -c '==' "$requirements") pinned packages into $(basename "$venv")"
