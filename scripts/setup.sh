#!/usr/bin/env bash
# Installs what zerorepo needs, idempotently; sourced by demo.sh and test.sh.
# Everything heavy lives outside the clone, under ~/.cache/zerorepo (cargo target dir, Python
# venv), so a second run on the same machine rebuilds nothing.
set -euo pipefail

ZEROREPO_CACHE="${ZEROREPO_CACHE:-$HOME/.cache/zerorepo}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ZEROREPO_CACHE/target}"
VENV="$ZEROREPO_CACHE/venv"
mkdir -p "$ZEROREPO_CACHE"

say() { printf '[setup] %s\n' "$*" >&2; }

apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    say "apt-get not found: please install $* yourself"; return 1
  fi
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing $* (apt-get)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

command -v cargo >/dev/null 2>&1 || { say "cargo is missing: install Rust (rustup) first"; exit 1; }

# The sandbox: bubblewrap, and Debian's Python with pytest inside it (only /usr is mounted).
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

if [ ! -x "$VENV/bin/python" ]; then
  say "creating the Python venv for generated tests in $VENV"
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import pytest' >/dev/null 2>&1; then
  say "installing pytest into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check 'pytest>=8,<10'
fi
export ZEROREPO_PYTHON="$VENV/bin/python"
