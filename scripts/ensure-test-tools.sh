#!/usr/bin/env bash
# Tools only the test suite needs (runs before `npm test`): Debian's docker-compose, which the
# deployment test uses to validate docker-compose.yml. Installs it when missing and we may.
set -euo pipefail
readonly TAG='[ensure-test-tools]'

if command -v docker-compose >/dev/null 2>&1; then
  exit 0
fi
if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "${TAG} installing Debian's docker-compose (validates docker-compose.yml in the tests)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-compose >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-compose >/dev/null; }
  exit 0
fi
echo "${TAG} docker-compose is missing: install it (sudo apt-get install docker-compose) to run the deployment test" >&2
exit 1
