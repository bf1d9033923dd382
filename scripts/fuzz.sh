#!/usr/bin/env bash
# Coverage-guided fuzzing of the engine's parsers (fuzz/): scripts/fuzz.sh TARGET|all SECONDS
#
# Targets: rpg, answer, journal, overlay_path, change_plan (fuzz/fuzz_targets/*.rs says what each checks).
# Runs each for SECONDS under libFuzzer, prints its executions per second, and exits non-zero
# if any found a crash, a hang or a stack overflow, naming the input that shows it.
#
# New corpus entries go to ~/.cache/zerorepo/fuzz-corpus/TARGET; the committed seeds in
# fuzz/corpus/TARGET are only read. FUZZ_UPDATE_CORPUS=1 writes new entries into the committed
# corpus instead (minimise it before committing: cargo +nightly fuzz cmin TARGET).
#
# Needs the nightly toolchain (libFuzzer's instrumentation is nightly-only). Without it the
# script says so and skips, except under CI=true, where it fails: CI must not pass silently
# without having fuzzed.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(rpg answer journal overlay_path change_plan)
usage() {
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS   (targets: ${ALL_TARGETS[*]})" >&2
  exit 2
}
[ $# -eq 2 ] || usage
case "$2" in '' | *[!0-9]*) usage ;; esac
if [ "$1" = all ]; then
  targets=("${ALL_TARGETS[@]}")
else
  [[ " ${ALL_TARGETS[*]} " == *" $1 "* ]] || usage
  targets=("$1")
fi
seconds=$2

say() { printf '[fuzz] %s\n' "$*" >&2; }

if ! cargo +nightly --version >/dev/null 2>&1; then
  say "################################################################"
  say "no nightly toolchain (cargo +nightly): libFuzzer's instrumentation"
  say "needs it. Install it with: rustup toolchain install nightly"
  if [ "${CI:-}" = true ]; then
    say "CI=true: FAILING instead of skipping the fuzz runs"
    say "################################################################"
    exit 1
  fi
  say "SKIPPING the fuzz runs: nothing was fuzzed"
  say "################################################################"
  exit 0
fi

CACHE="${ZEROREPO_CACHE:-$HOME/.cache/zerorepo}"
TOOLS="$CACHE/tools"
# Its own target dir: nightly with coverage instrumentation shares nothing with the main
# crate's stable builds (an inherited CARGO_TARGET_DIR would make them rebuild each other).
export CARGO_TARGET_DIR="$CACHE/target-fuzz"
export PATH="$TOOLS/bin:$PATH"

if ! cargo fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz into $TOOLS"
  cargo install --locked cargo-fuzz --root "$TOOLS"
fi

# Release with debug assertions: integer overflow panics instead of wrapping silently. No
# sanitizer: the library forbids unsafe code, and on two cores the speed matters more.
BUILD_FLAGS=(-O -a -s none --target-dir "$CARGO_TARGET_DIR")
say "building ${targets[*]}"
if [ ${#targets[@]} -gt 1 ]; then
  cargo +nightly fuzz build "${BUILD_FLAGS[@]}"
else
  cargo +nightly fuzz build "${BUILD_FLAGS[@]}" "${targets[0]}"
fi

LOGS="$CACHE/fuzz-logs"
mkdir -p "$LOGS"
failed=()
for target in "${targets[@]}"; do
  scratch="$CACHE/fuzz-corpus/$target"
  mkdir -p "$scratch" "fuzz/artifacts/$target"
  # libFuzzer adds new entries to the first directory and only reads the others.
  corpora=("$scratch" "fuzz/corpus/$target")
  [ "${FUZZ_UPDATE_CORPUS:-}" = 1 ] && corpora=("fuzz/corpus/$target")
  log="$LOGS/$target.log"
  say "== $target for ${seconds}s (log: $log)"
  status=0
  # -timeout: one input taking 10 s is a hang. -rss_limit_mb: 2 GiB is far above what any of
  # these inputs needs, and leaves room for a build beside it on a 24 GiB machine.
  cargo +nightly fuzz run "${BUILD_FLAGS[@]}" "$target" "${corpora[@]}" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  say "$target: ${execs:-?} executions, ${rate:-?} exec/s, ${units:-?} new corpus entries, peak RSS ${rss:-?} MB"
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    grep -E '^==[0-9]+== ERROR|panicked at|^thread .* panicked|overflowed its stack|ERROR: libFuzzer' "$log" | head -5 >&2 || true
    artifact=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log" | tail -1)
    if [ -n "$artifact" ]; then
      say "$target FAILED: the input is $artifact"
      say "reproduce: cargo +nightly fuzz run ${BUILD_FLAGS[*]} $target $artifact"
    else
      say "$target FAILED (exit $status) without writing an input: see $log"
      tail -20 "$log" >&2
    fi
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  say "failed: ${failed[*]}"
  exit 1
fi
say "no crash, hang or overflow in ${targets[*]} (${seconds}s each)"
