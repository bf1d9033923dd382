#!/usr/bin/env bash
# The main job: generate the ml_lib fixture (71 nodes, 50 functions) node by node, then run
# the hidden reference tests against the result.
#
#   scripts/demo.sh [--out DIR] [--fresh]
#
# Running it again on the same DIR resumes from the checkpoint (try kill -9 halfway).
# The model is the deterministic scripted provider until the embedded local model lands.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="out/ml_lib"
FRESH=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
ZEROREPO_NO_DOCKER=1 . scripts/setup.sh

cargo build --quiet
ZR="$CARGO_TARGET_DIR/debug/zerorepo"
[ "$FRESH" -eq 0 ] || rm -rf "$OUT"

echo "== plan"
"$ZR" plan fixtures/ml_lib/rpg.json | head -n 12
echo "   ..."
echo "== generate -> $OUT"
set +e
"$ZR" generate fixtures/ml_lib/rpg.json --out "$OUT" --llm scripted:fixtures/ml_lib/script.jsonl
code=$?
set -e
[ "$code" -eq 0 ] || { echo "generation exited with $code; run the same command again to resume" >&2; exit "$code"; }

echo "== status"
"$ZR" status "$OUT"
echo "== hidden reference tests against the generated repository"
(cd "$OUT" && PYTHONPATH=src PYTHONDONTWRITEBYTECODE=1 "$ZEROREPO_PYTHON" -m pytest -q -p no:cacheprovider "$OLDPWD/fixtures/ml_lib/reference/tests")
