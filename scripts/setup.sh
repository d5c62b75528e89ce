#!/usr/bin/env bash
# npm run setup: everything a fresh machine needs, idempotent.
#   1. a Docker engine that answers, and the sandbox image (scripts/engine-setup.sh), and Debian's
#      python3, whose parser gates intake (scripts/ensure-python.sh)
#   2. npm dependencies (npm ci, from the committed lockfile). onnxruntime-node's install script
#      would only download GPU libraries we do not use (its CPU library is inside the package):
#      package.json's allowScripts denies it to npm 11, ONNXRUNTIME_NODE_INSTALL=skip to older npm.
#   3. the compiled service (dist/)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly TAG='[setup]'

bash scripts/engine-setup.sh
bash scripts/ensure-python.sh
echo "${TAG} installing npm dependencies" >&2
ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
echo "${TAG} building" >&2
npm run --silent build
echo "${TAG} ready: npm start runs the service, npm test runs the tests" >&2
