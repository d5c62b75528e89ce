#!/usr/bin/env bash
# Tools only the test suite needs (runs before `npm test`), installed from Debian when missing
# and we may: docker-compose (the deployment test validates docker-compose.yml), openssl
# (the TLS test makes a self-signed certificate) and chromium (the console's browser tests drive
# Debian's Chromium with puppeteer-core; no browser is downloaded) and nats-server (the execution-host
# tests start a real bus); and Debian's python3-venv, python3-wheel, python3-grpcio and python3-protobuf
# (the Python client's test builds clients/python offline into a virtual environment that uses them).
set -euo pipefail
readonly TAG='[ensure-test-tools]'

# command → Debian package
declare -A NEEDED=([docker-compose]=docker-compose [openssl]=openssl [chromium]=chromium [nats-server]=nats-server)
missing=()
for tool in "${!NEEDED[@]}"; do
  command -v "${tool}" >/dev/null 2>&1 || missing+=("${NEEDED[${tool}]}")
done
# Python module of Debian's python3 → Debian package
declare -A PYTHON_NEEDED=([ensurepip]=python3-venv [wheel]=python3-wheel [grpc]=python3-grpcio [google.protobuf]=python3-protobuf)
for module in "${!PYTHON_NEEDED[@]}"; do
  /usr/bin/python3 -c "import ${module}" >/dev/null 2>&1 || missing+=("${PYTHON_NEEDED[${module}]}")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "${TAG} installing Debian's ${missing[*]} (the tests need them)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
  exit 0
fi
echo "${TAG} missing: ${missing[*]}: install them (sudo apt-get install ${missing[*]}) to run the whole test suite" >&2
exit 1
