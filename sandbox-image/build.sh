#!/usr/bin/env bash
# build.sh — build the skill-engine sandbox image (Python 3 only).
#
# Base image selection, first match wins:
#   1. the upstream base ($SANDBOX_UPSTREAM_BASE, default python:3.11-slim-bookworm)
#      is already in the local image store;
#   2. the locally built base skill-engine-sandbox-base:bookworm already exists
#      (from an earlier debootstrap run; keeps re-runs fast and offline);
#   3. `docker pull` of the upstream base succeeds (normal, online machines);
#   4. otherwise build the base from Debian packages: debootstrap a minimal
#      bookworm with python3 from the mirror the host's apt already uses, trim
#      it, and `docker import` it (needs root and Debian's debootstrap).
# Then `docker build` the Dockerfile on that base, tag it, and smoke-test it
# with the same restrictions the engine uses.
#
# Usage: sandbox-image/build.sh [--rebuild-base] [--no-pull]
#   --rebuild-base  ignore an existing skill-engine-sandbox-base:bookworm and
#                   debootstrap it again (implies skipping steps 1-3)
#   --no-pull       skip the docker pull attempt (step 3)
#
# Environment:
#   SKILL_ENGINE_IMAGE     result tag (default skill-engine-sandbox:latest)
#   SANDBOX_UPSTREAM_BASE  base to pull (default python:3.11-slim-bookworm)
#   SANDBOX_PULL_TIMEOUT   seconds allowed for the pull (default 60)
#   DEBIAN_MIRROR          mirror URL for debootstrap (default: read from apt sources)
set -euo pipefail

readonly TAG='[sandbox-image]'
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
readonly IMAGE="${SKILL_ENGINE_IMAGE:-skill-engine-sandbox:latest}"
readonly UPSTREAM_BASE="${SANDBOX_UPSTREAM_BASE:-python:3.11-slim-bookworm}"
readonly LOCAL_BASE='skill-engine-sandbox-base:bookworm'
readonly SUITE='bookworm'
readonly PULL_TIMEOUT="${SANDBOX_PULL_TIMEOUT:-60}"
# Same PATH as the official images; `docker import` sets no ENV at all.
readonly IMAGE_PATH='/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

log() { printf '%s %s\n' "${TAG}" "$*" >&2; }
die() { printf '%s ERROR: %s\n' "${TAG}" "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

REBUILD_BASE=0
NO_PULL=0
for arg in "$@"; do
  case "${arg}" in
    --rebuild-base) REBUILD_BASE=1 ;;
    --no-pull) NO_PULL=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '${arg}' (try --help)" ;;
  esac
done

have docker || die "docker CLI not found; run scripts/engine-setup.sh first"
timeout 15 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
  || die "no Docker engine answers; run scripts/engine-setup.sh (npm run setup) first"

# Serialise concurrent builds (e.g. `npm start` and `npm test` started together)
# so two debootstraps do not race. Best effort: skipped if flock/lock file unavailable.
LOCK_FILE="${TMPDIR:-/tmp}/skill-engine-sandbox-build.lock"
if have flock && { exec 9>>"${LOCK_FILE}"; } 2>/dev/null; then
  flock -w 1800 9 || die "timed out waiting for another build holding ${LOCK_FILE}"
fi

# ------------------------------------------------------ mirror detection ----
# Print the first Debian archive URI (not the security archive) that the host's
# apt is configured with for ${SUITE}, or for any suite as a second choice.
# Reading it at run time keeps mirror/proxy choices out of the repository.
detect_mirror() {
  local files=() f
  for f in /etc/apt/sources.list.d/*.sources; do [[ -r "${f}" ]] && files+=("${f}"); done
  local list_files=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do [[ -r "${f}" ]] && list_files+=("${f}"); done

  {
    # deb822: one stanza per paragraph; emit "<uri> <suites...>" for each
    # enabled stanza that has binary ("deb") entries.
    if ((${#files[@]})); then
      awk '
        function flush() {
          if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no")
            for (i = 1; i <= nu; i++) print u[i], suites
          types = ""; suites = ""; enabled = ""; nu = 0; field = ""
        }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        /^[ \t]/ { if (field == "uris") { for (i = 1; i <= NF; i++) u[++nu] = $i } next }
        {
          key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, ""); field = key
          if (key == "types") types = $0
          else if (key == "uris") { n = split($0, a, " "); for (i = 1; i <= n; i++) u[++nu] = a[i] }
          else if (key == "suites") suites = $0
          else if (key == "enabled") enabled = $0
        }
        END { flush() }
      ' "${files[@]}"
    fi
    # one-line format: deb [options] uri suite components...
    if ((${#list_files[@]})); then
      awk '
        $1 == "deb" {
          i = 2
          if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
          if (i + 1 <= NF) print $i, $(i + 1)
        }
      ' "${list_files[@]}"
    fi
  } | awk -v suite="${SUITE}" '
      # Skip the security archive and schemes debootstrap cannot fetch from.
      $1 ~ /security/ || $1 !~ /^(https?|file):/ { next }
      {
        sub(/\/+$/, "", $1)
        for (i = 2; i <= NF; i++) if ($i == suite) { if (!exact) exact = $1 }
        if (!any && $1 ~ /\/debian$/) any = $1
      }
      END { if (exact) print exact; else if (any) print any }
    '
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  # Only refresh package lists when the install fails with the cached ones.
  apt-get install -y "$@" || { apt-get update && apt-get install -y "$@"; }
}

# --------------------------------------------------- debootstrap a base ----
ROOTFS_WORK=""
cleanup_rootfs() {
  [[ -n "${ROOTFS_WORK}" && -d "${ROOTFS_WORK}" ]] || return 0
  # debootstrap bind-mounts /proc, /sys (and /dev inside containers); if it was
  # interrupted they may still be mounted. Unmount, deepest first, BEFORE
  # deleting anything so rm can never reach into the host's /dev or /proc.
  local m
  while read -r m; do
    umount -l "${m}" 2>/dev/null || true
  done < <(awk -v root="${ROOTFS_WORK}/" 'index($2, root) == 1 { print $2 }' /proc/mounts | sort -r)
  rm -rf --one-file-system "${ROOTFS_WORK}"
}

build_local_base() {
  [[ "$(id -u)" -eq 0 ]] || die "cannot pull ${UPSTREAM_BASE} and building the base with debootstrap needs root.
${TAG}   Either make a registry reachable (docker pull ${UPSTREAM_BASE}) or re-run as root."
  if ! have debootstrap; then
    have apt-get || die "debootstrap is not installed and apt-get is unavailable; install debootstrap"
    log "installing debootstrap with apt-get"
    apt_install debootstrap
  fi
  [[ -r /usr/share/keyrings/debian-archive-keyring.gpg ]] || {
    log "installing debian-archive-keyring (debootstrap verifies the archive with it)"
    apt_install debian-archive-keyring
  }

  local mirror="${DEBIAN_MIRROR:-}"
  [[ -n "${mirror}" ]] || mirror="$(detect_mirror)"
  [[ -n "${mirror}" ]] || die "could not find a Debian archive in /etc/apt/sources.list{,.d/*}; set DEBIAN_MIRROR=<url of a Debian mirror>"
  log "building ${LOCAL_BASE} with debootstrap (${SUITE}, minbase + python3) from ${mirror}; this takes a few minutes"

  # /var/tmp rather than /tmp: /tmp is often a small, noexec or nodev tmpfs and
  # debootstrap needs to chroot into and execute from the tree.
  ROOTFS_WORK="$(mktemp -d "${SANDBOX_WORKDIR:-/var/tmp}/skill-engine-rootfs.XXXXXX")"
  trap cleanup_rootfs EXIT
  # Turn INT/TERM into a normal exit so the EXIT trap (cleanup) also runs then.
  trap 'log "interrupted; removing ${ROOTFS_WORK}"; exit 130' INT
  trap 'log "terminated; removing ${ROOTFS_WORK}"; exit 143' TERM
  local rootfs="${ROOTFS_WORK}/rootfs" dlog="${ROOTFS_WORK}/debootstrap.log"
  local t0=${SECONDS}
  if ! debootstrap --variant=minbase --include=python3 "${SUITE}" "${rootfs}" "${mirror}" >"${dlog}" 2>&1; then
    log "debootstrap failed; last lines of its log:"
    tail -n 30 "${dlog}" >&2 || true
    [[ -r "${rootfs}/debootstrap/debootstrap.log" ]] && tail -n 30 "${rootfs}/debootstrap/debootstrap.log" >&2
    die "debootstrap failed"
  fi
  log "debootstrap done in $((SECONDS - t0))s; trimming"

  # Trim what a non-interactive python3 runtime never needs. Keep
  # /usr/share/locale/locale.alias (glibc reads it) and Python's __pycache__
  # (precompiled stdlib = faster start-up on a read-only root).
  rm -rf "${rootfs}"/var/lib/apt/lists/* "${rootfs}"/var/cache/apt/* \
         "${rootfs}"/var/cache/debconf/*-old "${rootfs}"/var/lib/dpkg/*-old \
         "${rootfs}"/usr/share/doc/* "${rootfs}"/usr/share/man/* \
         "${rootfs}"/usr/share/info/* "${rootfs}"/usr/share/lintian \
         "${rootfs}"/usr/share/common-licenses \
         "${rootfs}"/tmp/* "${rootfs}"/var/tmp/* "${rootfs}"/debootstrap
  find "${rootfs}/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  find "${rootfs}/var/log" -type f -exec truncate -s 0 {} +
  # Keep later `apt-get install` inside derived images just as lean.
  cat >"${rootfs}/etc/dpkg/dpkg.cfg.d/skill-engine-nodoc" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
CFG
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
    >"${rootfs}/etc/apt/apt.conf.d/99skill-engine-norecommends"
  chmod 1777 "${rootfs}/tmp" "${rootfs}/var/tmp"

  log "importing rootfs ($(du -sh --one-file-system "${rootfs}" | cut -f1)) as ${LOCAL_BASE}"
  # Device nodes, /proc and /sys contents are provided by the runtime; keep the
  # empty directories only. --numeric-owner: ownership must not depend on the
  # host's passwd/group names.
  tar -C "${rootfs}" --numeric-owner --one-file-system \
      --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . \
    | docker import \
        --change "ENV PATH=${IMAGE_PATH}" \
        --change 'LABEL io.skill-engine.image="sandbox-base"' \
        --change "LABEL io.skill-engine.debian-suite=\"${SUITE}\"" \
        --change 'CMD ["/bin/bash"]' \
        --message "debootstrap --variant=minbase --include=python3 ${SUITE}" \
        - "${LOCAL_BASE}" >/dev/null
  log "base ${LOCAL_BASE} built in $((SECONDS - t0))s (debootstrap + trim + import)"
  cleanup_rootfs
  ROOTFS_WORK=""
  trap - EXIT INT TERM
}

# Image id behind a tag, or empty.
image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }

# Remove image id $1 if a rebuild left it without any tag, so repeated
# rebuilds do not pile up ~100 MB dangling images. Failure (e.g. a container
# still uses it) is harmless.
drop_if_dangling() {
  local id="$1"
  [[ -n "${id}" ]] || return 0
  local tags
  tags="$(docker image inspect --format '{{len .RepoTags}}' "${id}" 2>/dev/null || echo gone)"
  if [[ "${tags}" == 0 ]]; then
    if docker rmi "${id}" >/dev/null 2>&1; then log "removed superseded image ${id:7:12}"; fi
  fi
}

OLD_IMAGE_ID="$(image_id "${IMAGE}")"
OLD_BASE_ID="$(image_id "${LOCAL_BASE}")"

# -------------------------------------------------------- choose a base ----
choose_base() {
  if ((REBUILD_BASE)); then
    build_local_base
    BASE="${LOCAL_BASE}"
  elif image_exists "${UPSTREAM_BASE}"; then
    log "using local ${UPSTREAM_BASE} as base"
    BASE="${UPSTREAM_BASE}"
  elif image_exists "${LOCAL_BASE}"; then
    log "using existing ${LOCAL_BASE} as base (from an earlier debootstrap; --rebuild-base to redo)"
    BASE="${LOCAL_BASE}"
  elif ((!NO_PULL)) && log "pulling ${UPSTREAM_BASE} (timeout ${PULL_TIMEOUT}s)" \
       && timeout "${PULL_TIMEOUT}" docker pull "${UPSTREAM_BASE}"; then
    BASE="${UPSTREAM_BASE}"
  else
    log "cannot pull ${UPSTREAM_BASE} (no registry reachable?); building a base from Debian packages instead"
    build_local_base
    BASE="${LOCAL_BASE}"
  fi
}

BASE=""
choose_base

log "building ${IMAGE} FROM ${BASE}"
# The Dockerfile has no RUN steps, so the legacy builder and BuildKit behave the
# same. DOCKER_BUILDKIT=0 unless the caller chose otherwise: a recent CLI without
# the buildx plugin (or an old daemon) then still builds, and a locally imported
# base is never looked up in a registry.
if ! DOCKER_BUILDKIT="${DOCKER_BUILDKIT:-0}" docker build \
      --build-arg "BASE_IMAGE=${BASE}" \
      --tag "${IMAGE}" \
      "${SCRIPT_DIR}" 2>&1 | sed "s/^/${TAG} | /" >&2; then
  die "docker build of ${IMAGE} failed (see output above)"
fi

# Smoke test with the same confinement the engine applies to skills.
log "verifying ${IMAGE}"
out="$(docker run --rm --network none --read-only --user 10001:10001 --cap-drop ALL \
        --security-opt no-new-privileges "${IMAGE}" \
        python3 -c 'import json,sys; print(json.dumps({"ok": True}))')" \
  || die "verification run of ${IMAGE} failed"
[[ "${out}" == '{"ok": true}' ]] || die "verification of ${IMAGE} printed '${out}', expected '{\"ok\": true}'"

drop_if_dangling "${OLD_IMAGE_ID}"
drop_if_dangling "${OLD_BASE_ID}"

size="$(docker image inspect --format '{{.Size}}' "${IMAGE}")"
log "ok: ${IMAGE} (base ${BASE}, $((size / 1000 / 1000)) MB) runs python3 confined"
