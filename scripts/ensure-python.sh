#!/usr/bin/env bash
# Intake parses skill code with Debian's CPython (SKILL_ENGINE_PYTHON, default /usr/bin/python3).
# Installs it when missing and we may; otherwise says what to do. Idempotent and fast.
set -euo pipefail
readonly TAG='[ensure-python]'
readonly PYTHON="${SKILL_ENGINE_PYTHON:-/usr/bin/python3}"

if "${PYTHON}" -I -S -c 'import ast, json, resource, struct' >/dev/null 2>&1; then
  exit 0
fi
if [[ "${PYTHON}" == /usr/bin/python3 && "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "${TAG} installing Debian's python3" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 >/dev/null; }
  exit 0
fi
echo "${TAG} ${PYTHON} is missing or incomplete: install Debian's python3 (sudo apt-get install python3)" \
  "or point SKILL_ENGINE_PYTHON at a CPython 3.11+ interpreter" >&2
exit 1
