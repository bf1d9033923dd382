#!/usr/bin/env bash
# The test command: installs what is missing, then format check, clippy, the docs' links and
# the whole suite
# (unit tests and the one integration binary, which generates the fixtures for real).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
echo "== models"
ensure_model
ensure_embedder

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --quiet -- -D warnings
echo "== cargo doc (the developers' docs: no broken link)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items --quiet
echo "== cargo test"
# The HTML report's Chromium test keeps its screenshot here (reports/report-html.png is one).
export ZEROREPO_REPORT_SCREENSHOT="$ZEROREPO_CACHE/report-html.png"
cargo test --all-targets
echo "the HTML report's screenshot from this run: $ZEROREPO_REPORT_SCREENSHOT"

echo "== the nightly benchmark's engine run (zerorepo bench, scripted; the real run is the nightly's)"
# It must produce its report; the report goes to a scratch directory, not reports/.
BENCH_REPORTS="$(mktemp -d)"
"$CARGO_TARGET_DIR/debug/zerorepo" bench --reports "$BENCH_REPORTS" | sed -n '/^## Engine run/,/^## Against/p'
ls "$BENCH_REPORTS"/*.json >/dev/null
rm -rf "$BENCH_REPORTS"

echo "== fuzz (short runs)"
# Each fuzz target for 30 s after one build of them all (two minutes of fuzzing): enough to
# replay the committed seeds and catch a regression early; long runs are scripts/fuzz.sh by
# hand. Without the nightly toolchain it says why and skips, or fails under CI=true.
scripts/fuzz.sh all 30
