#!/usr/bin/env bash
# Runs the whole test suite (`npm test`, arguments passed on) on a machine kept busy: one CPU-bound
# loop pinned to each of cores 0 and 1, at the suite's own priority (nice 0), for as long as the suite
# runs. A 2-core CI machine shared with other jobs is this busy; every wait in a test must hold here
# (each waits for its event with a ceiling sized for it, never a library's one-second default).
# The loops end with the script, however it ends; it exits with npm test's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly TAG='[test-under-load]'

busy=()
stop_busy() {
  local pid
  for pid in "${busy[@]}"; do
    kill "${pid}" 2>/dev/null || true
  done
  for pid in "${busy[@]}"; do
    wait "${pid}" 2>/dev/null || true
  done
  busy=()
}
trap stop_busy EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for core in 0 1; do
  # taskset runs the loop in its own process (it execs the shell), so $! is the loop itself. Without
  # taskset, or on a machine with one core, the loop is simply not pinned.
  if command -v taskset >/dev/null 2>&1 && taskset -c "${core}" true 2>/dev/null; then
    nice -n 0 taskset -c "${core}" sh -c 'while :; do :; done' &
  else
    nice -n 0 sh -c 'while :; do :; done' &
  fi
  busy+=("$!")
done
echo "${TAG} busy loops on cores 0 and 1 (pids ${busy[*]}) beside npm test" >&2

status=0
if [[ $# -gt 0 ]]; then
  npm test -- "$@" || status=$?
else
  npm test || status=$?
fi
echo "${TAG} npm test exited ${status}" >&2
exit "${status}"
