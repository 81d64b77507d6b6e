# Shared helpers of the scripts in this directory (sourced, not run).
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
# Ansible leaves a piped stdout block-buffered: unbuffered, a CI log ends where a run stopped.
export PYTHONUNBUFFERED=1
# Debian 12's own interpreter: what a fresh machine has, and what the roles target.
SYSTEM_PYTHON=/usr/bin/python3

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# Run a named stage and report how long it took (kept when it fails): stage NAME CMD ARGS...
stage() {
    local name=$1 start=$SECONDS status=0
    shift
    "$@" || status=$?
    printf '==> stage %s: %ds (exit %d)\n' "$name" "$((SECONDS - start))" "$status" >&2
    # Also one line per stage for a summary table (.ci/run sets the file).
    [ -z "${HOPSHIVE_STAGE_LOG:-}" ] ||
        printf '%s\t%d\t%d\n' "$name" "$((SECONDS - start))" "$status" >>"$HOPSHIVE_STAGE_LOG"
    return "$status"
}

# Run a command as root (directly, or through sudo when available).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "need root (or sudo) to run: $*"
    fi
}

# Install the Debian packages given as arguments when any of them is missing.
apt_ensure() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    log "installing Debian packages: ${missing[*]}"
    # Another installer (a deploy running beside this script) may hold dpkg's lock: wait.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}

# venv_ensure DIR FILE... -- PIP_ARGS... : create DIR from the system Python and run
# `pip install PIP_ARGS` in it, skipping pip while the FILEs (requirements, pyproject) and
# the arguments are unchanged since the last successful install.  Two scripts may want the
# same venv at once (.ci/run runs the cluster's stages beside this host's): one installs,
# the other waits and then finds it done.
venv_ensure() {
    mkdir -p "$(dirname "$1")"
    ( flock 9 && _venv_ensure "$@" ) 9>"$1.lock"
}
_venv_ensure() {
    local venv="$1"; shift
    local inputs=() stamp want
    stamp="$venv/.hopshive-inputs"
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do inputs+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    want="$(cd "$ROOT" && { printf '%s\n' "$*"; cat "${inputs[@]}"; } | sha256sum | cut -d' ' -f1)"
    if [ ! -x "$venv/bin/python" ]; then
        apt_ensure python3-venv
        log "creating $venv"
        "$SYSTEM_PYTHON" -m venv "$venv"
    fi
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        log "installing into $venv: $*"
        # Stamped only once the install succeeded (callers may run this where set -e is off).
        (cd "$ROOT" && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@") || return
        printf '%s\n' "$want" > "$stamp"
    fi
}
