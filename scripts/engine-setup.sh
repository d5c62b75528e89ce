#!/usr/bin/env bash
# engine-setup.sh — make sure a Docker engine answers and the sandbox image exists.
#
# Used by `npm run setup`, by `npm start` / `npm test` when something is missing,
# and by CI. Safe to run any number of times: every step first checks whether
# its work is already done.
#
# Usage:
#   scripts/engine-setup.sh            # ensure engine + sandbox image
#   scripts/engine-setup.sh --check    # exit 0 iff engine answers AND image exists;
#                                      # 1 = no engine, 2 = no image; no side effects
#                                      # (fast "is anything missing?" probe)
#
# Environment:
#   SKILL_ENGINE_IMAGE   sandbox image name (default skill-engine-sandbox:latest)
#   DOCKER_HOST          if set, that engine is used as-is; we never start a local daemon
#   DOCKERD_LOG          dockerd log file when we start it (default /var/log/dockerd.log)
#   DOCKERD_WAIT_SECS    how long to wait for a started dockerd (default 60)
set -euo pipefail

readonly TAG='[engine-setup]'
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
readonly SCRIPT_DIR REPO_ROOT
readonly IMAGE="${SKILL_ENGINE_IMAGE:-skill-engine-sandbox:latest}"
readonly DOCKERD_LOG="${DOCKERD_LOG:-/var/log/dockerd.log}"
readonly DOCKERD_WAIT_SECS="${DOCKERD_WAIT_SECS:-60}"
readonly PID_FILE=/var/run/docker.pid
# Pid file of the containerd that dockerd starts and supervises itself.
readonly CONTAINERD_PID_FILE=/var/run/docker/containerd/containerd.pid

log() { printf '%s %s\n' "${TAG}" "$*" >&2; }
die() { printf '%s ERROR: %s\n' "${TAG}" "$*" >&2; exit 1; }

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

CHECK_ONLY=0
for arg in "$@"; do
  case "${arg}" in
    --check) CHECK_ONLY=1 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '${arg}' (try --help)" ;;
  esac
done

have() { command -v "$1" >/dev/null 2>&1; }

# True when a Docker *server* answers. `docker version` prints the client part
# even without a daemon, so ask for the server version explicitly. The timeout
# keeps a hung socket / unreachable DOCKER_HOST from blocking npm forever.
engine_answers() {
  have docker || return 1
  local v
  v="$(timeout 15 docker version --format '{{.Server.Version}}' 2>/dev/null)" || return 1
  [[ -n "${v}" ]]
}

image_exists() {
  docker image inspect "${IMAGE}" >/dev/null 2>&1
}

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# "Debian" here means: we can use Debian's apt and its docker.io package.
# Derivatives (Ubuntu etc.) ship docker.io too, but we only promise Debian.
is_debian() {
  [[ -r /etc/debian_version ]] || return 1
  have apt-get || return 1
  local id="" id_like=""
  # shellcheck disable=SC1091 # os-release is a runtime file, not part of the repo
  if [[ -r /etc/os-release ]]; then id="$(. /etc/os-release && echo "${ID:-}")"; id_like="$(. /etc/os-release && echo "${ID_LIKE:-}")"; fi
  [[ "${id}" == debian || " ${id_like} " == *" debian "* ]]
}

manual_instructions() {
  cat >&2 <<MSG
${TAG} No Docker engine answers, and this script can only install/start one
${TAG} automatically when run as root on Debian. Please:
${TAG}   1. Install Docker Engine (https://docs.docker.com/engine/install/ or your
${TAG}      distribution's package, e.g. 'docker.io' on Debian/Ubuntu).
${TAG}   2. Start it (e.g. 'sudo systemctl enable --now docker', or 'sudo dockerd &').
${TAG}   3. Give this user access: 'sudo usermod -aG docker \$USER' and log in again,
${TAG}      or point DOCKER_HOST at a reachable engine (e.g. unix:///run/user/\$UID/docker.sock).
${TAG}   4. Re-run: npm run setup
MSG
}

# ---------------------------------------------------------------- --check ----
if [[ "${CHECK_ONLY}" -eq 1 ]]; then
  # Pure probe: nothing is installed, started, removed or built.
  if ! engine_answers; then
    log "missing: no Docker engine answers${DOCKER_HOST:+ at DOCKER_HOST=${DOCKER_HOST}} (run: npm run setup)"
    exit 1
  fi
  if ! image_exists; then
    log "missing: sandbox image ${IMAGE} (run: npm run setup)"
    exit 2
  fi
  log "ok: engine answers and ${IMAGE} exists"
  exit 0
fi

# ----------------------------------------------------------- engine part ----

# True if the process exists and is not a zombie. kill -0 alone is not enough:
# a SIGKILLed dockerd stays a zombie until init reaps it (some inits, e.g. in
# micro-VMs, reap lazily), and kill -0 succeeds on zombies.
pid_alive() {
  local stat state
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  state="${stat##*) }"      # field 3, after "pid (comm) "; comm may contain spaces
  state="${state%% *}"
  [[ -n "${state}" && "${state}" != Z && "${state}" != X ]]
}

# Print the pid recorded in pid file $1 if that process is alive and its name
# is $2; print nothing otherwise. Pids are recycled, so the name check matters.
live_pid_from_file() {
  local file="$1" name="$2" pid comm
  [[ -f "${file}" ]] || return 0
  pid="$(tr -cd '0-9' <"${file}" 2>/dev/null || true)"
  [[ -n "${pid}" ]] || return 0
  pid_alive "${pid}" || return 0
  comm="$(cat "/proc/${pid}/comm" 2>/dev/null || true)"
  [[ "${comm}" == "${name}" ]] && echo "${pid}"
  return 0
}

# Remove pid file $1 unless it names a live process called $2.
remove_stale_pidfile() {
  local file="$1" name="$2"
  [[ -e "${file}" ]] || return 0
  [[ -z "$(live_pid_from_file "${file}" "${name}")" ]] || return 0
  log "removing stale ${file} (pid '$(tr -cd '0-9' <"${file}" 2>/dev/null || true)' is not a live ${name})"
  rm -f "${file}"
}

install_docker_io() {
  log "dockerd not found; installing Debian's docker.io with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  # Skip the (slow) index refresh when the cached lists already suffice.
  if ! apt-get install -y docker.io; then
    log "install failed with the cached package lists; running apt-get update and retrying"
    apt-get update
    apt-get install -y docker.io
  fi
  have dockerd || die "docker.io installed but 'dockerd' is still not on PATH"
}

# Wait until the engine answers; if the daemon dies or the timeout passes,
# show the log tail so the cause is visible in npm/CI output.
wait_for_engine() {
  local pid="$1" waited=0
  while ! engine_answers; do
    if [[ -n "${pid}" ]] && ! pid_alive "${pid}"; then
      log "dockerd (pid ${pid}) exited during start-up; last lines of ${DOCKERD_LOG}:"
      tail -n 40 "${DOCKERD_LOG}" >&2 || true
      die "dockerd failed to start"
    fi
    if (( waited >= DOCKERD_WAIT_SECS )); then
      log "dockerd did not answer within ${DOCKERD_WAIT_SECS}s; last lines of ${DOCKERD_LOG}:"
      tail -n 40 "${DOCKERD_LOG}" >&2 || true
      die "dockerd is not answering"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  log "engine answers (after ${waited}s)"
}

start_local_dockerd() {
  have dockerd || install_docker_io
  # The Debian client lives in docker.io too; without any client we cannot even probe.
  have docker || install_docker_io

  local pid
  pid="$(live_pid_from_file "${PID_FILE}" dockerd)"
  if [[ -n "${pid}" ]]; then
    # A real dockerd is alive but not answering yet (e.g. still starting,
    # or started by someone else moments ago): wait for it instead of
    # launching a second daemon that would fight over the same state.
    log "dockerd already running (pid ${pid}) but not answering yet; waiting for it"
    wait_for_engine "${pid}"
    return 0
  fi
  # A killed dockerd leaves its pid file behind and a new dockerd refuses to
  # start while it exists.
  remove_stale_pidfile "${PID_FILE}" dockerd
  # Its managed containerd leaves one too. If that pid is still "alive" as an
  # unreaped zombie, the new dockerd believes containerd is running, waits for
  # its socket and gives up ("timeout waiting for containerd to start").
  # A genuinely live orphaned containerd is left alone: dockerd reuses it.
  remove_stale_pidfile "${CONTAINERD_PID_FILE}" containerd

  mkdir -p "$(dirname "${DOCKERD_LOG}")"
  log "starting dockerd in the background (log: ${DOCKERD_LOG})"
  printf '\n===== %s dockerd started by engine-setup.sh =====\n' "$(date -Is)" >>"${DOCKERD_LOG}"
  # setsid + nohup: new session, no controlling terminal, immune to SIGHUP, so
  # the daemon outlives the npm/CI shell that ran this script. stdin from
  # /dev/null and all output to the log so no pipe of the caller stays open.
  # 9>&-: do not hand our run lock (fd 9, see bottom) to the long-lived daemon,
  # or the lock would stay held until dockerd exits.
  setsid nohup dockerd >>"${DOCKERD_LOG}" 2>&1 </dev/null 9>&- &
  local started=$!
  disown "${started}" 2>/dev/null || true
  wait_for_engine "${started}"
}

ensure_engine() {
  if engine_answers; then
    # Someone else's engine (systemd, Docker Desktop, ours from an earlier run):
    # never touch it.
    log "Docker engine answers (server $(docker version --format '{{.Server.Version}}' 2>/dev/null)); leaving it alone"
    return 0
  fi

  if [[ -n "${DOCKER_HOST:-}" ]]; then
    # The user chose a specific engine; starting a local one would not help.
    die "DOCKER_HOST=${DOCKER_HOST} is set but no engine answers there.
${TAG}   Start the engine behind DOCKER_HOST (and check 'docker version' works),
${TAG}   or unset DOCKER_HOST to let this script start a local dockerd (root on Debian),
${TAG}   then re-run: npm run setup"
  fi

  if is_root && is_debian; then
    start_local_dockerd
    return 0
  fi

  manual_instructions
  if [[ -S /var/run/docker.sock && ! -w /var/run/docker.sock ]]; then
    # Most common non-root case: the engine runs, but this user may not use it.
    log "note: /var/run/docker.sock exists but is not writable by $(id -un 2>/dev/null || id -u);"
    log "      an engine is probably running and step 3 (docker group or DOCKER_HOST) is what is missing."
  fi
  if ! is_root; then
    log "(not running as root, so no daemon was installed or started)"
  else
    log "(not Debian, so no daemon was installed or started)"
  fi
  exit 1
}

ensure_image() {
  if image_exists; then
    log "sandbox image ${IMAGE} present"
    return 0
  fi
  log "sandbox image ${IMAGE} missing; building it with sandbox-image/build.sh"
  SKILL_ENGINE_IMAGE="${IMAGE}" "${REPO_ROOT}/sandbox-image/build.sh"
}

# Serialise concurrent runs (e.g. `npm start` and `npm test` started together):
# two scripts racing would start two dockerds, and the loser fails on the pid
# file. The second run waits here, then finds everything ready. Best effort:
# skipped if flock is missing or the lock file is not writable by this user.
LOCK_FILE="${TMPDIR:-/tmp}/skill-engine-setup.lock"
if have flock && { exec 9>>"${LOCK_FILE}"; } 2>/dev/null; then
  if ! flock -n 9; then
    log "another engine-setup run holds ${LOCK_FILE}; waiting for it"
    flock -w 1800 9 || die "timed out waiting for ${LOCK_FILE}"
  fi
fi

ensure_engine
ensure_image
log "ready: engine answers, sandbox image ${IMAGE} present"
