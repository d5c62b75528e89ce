#!/usr/bin/env bash
# Intake parses skill code with Debian's CPython (SKILL_ENGINE_PYTHON, default /usr/bin/python3), and
# skills' requirements are installed with pip of SKILL_ENGINE_PIP_PYTHON (default /usr/bin/python3,
# docs/packages.md#runtimes). Installs Debian's python3 and python3-pip when missing and we may;
# otherwise says what to do. Idempotent and fast.
set -euo pipefail
readonly TAG='[ensure-python]'
readonly PYTHON="${SKILL_ENGINE_PYTHON:-/usr/bin/python3}"
readonly PIP_PYTHON="${SKILL_ENGINE_PIP_PYTHON:-/usr/bin/python3}"

apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
}
may_apt() {
  [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1
}

if ! "${PYTHON}" -I -S -c 'import ast, json, resource, struct' >/dev/null 2>&1; then
  if [[ "${PYTHON}" == /usr/bin/python3 ]] && may_apt; then
    echo "${TAG} installing Debian's python3" >&2
    apt_install python3
  else
    echo "${TAG} ${PYTHON} is missing or incomplete: install Debian's python3 (sudo apt-get install python3)" \
      "or point SKILL_ENGINE_PYTHON at a CPython 3.11+ interpreter" >&2
    exit 1
  fi
fi

if ! "${PIP_PYTHON}" -m pip --version >/dev/null 2>&1; then
  if [[ "${PIP_PYTHON}" == /usr/bin/python3 ]] && may_apt; then
    echo "${TAG} installing Debian's python3-pip (installs skills' requirements)" >&2
    apt_install python3 python3-pip
  else
    echo "${TAG} ${PIP_PYTHON} has no pip: skills that declare requirements cannot be built; install Debian's" \
      "python3-pip (sudo apt-get install python3-pip) or point SKILL_ENGINE_PIP_PYTHON at a Python with pip" >&2
  fi
fi
