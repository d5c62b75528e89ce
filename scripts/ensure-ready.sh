#!/usr/bin/env bash
# Runs before `npm start` and `npm test`: does only what is missing, so each command works on
# its own on a fresh machine and costs a fraction of a second when everything is in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly TAG='[ensure-ready]'

if [[ ! -d node_modules/.bin || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "${TAG} npm dependencies missing or stale: installing" >&2
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
fi

if ! bash scripts/engine-setup.sh --check >/dev/null 2>&1; then
  echo "${TAG} Docker engine or sandbox image missing: setting up" >&2
  bash scripts/engine-setup.sh
fi

bash scripts/ensure-python.sh

# Rebuild when dist/ is missing or older than any source file.
if [[ ! -f dist/main.js ]] || [[ -n "$(find src proto -newer dist/main.js -print -quit)" ]]; then
  echo "${TAG} building" >&2
  npm run --silent build
fi
