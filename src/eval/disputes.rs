//! The vote measured: every disputed test of a generation run against the reference
//! implementation.
//!
//! When a node's kept code passes the gates and a model-written test fails, the engine votes
//! on which side is wrong (`engine::vote`) and records the test's source with the decision.
//! A reference that holds an implementation (`DIR/src/`) settles it: a disputed test that the
//! reference passes was right, so the code was wrong (the truth is A); one the reference
//! fails was wrong (the truth is B). Decisions against truths make the vote's confusion
//! matrix. Each test runs alone, in the sandbox, in a scratch copy of the reference.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::EvalError;
use crate::records::NodeRecords;
use crate::records::Verdict;
use crate::rpg::NodeId;
use crate::sandbox::TestRunner;

/// Where the disputed tests go in the scratch copy of the reference.
const DISPUTED_DIR: &str = "disputed_tests";

/// One disputed test, with the decision of the vote and the reference's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JudgedTest {
    pub node: crate::rpg::NodeId,
    pub test: String,
    /// What the vote decided; `null`: no majority.
    pub decision: Option<Verdict>,
    /// `true`: the reference passes the test (the code was wrong); `false`: it fails it (the
    /// test was wrong); `null`: it did not run to a verdict (an import or collection error).
    pub test_was_right: Option<bool>,
}

/// The vote's confusion matrix: a row per decision, counts per truth.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct MatrixRow {
    /// `implementation`, `test`, `environment` or `none` (no majority).
    pub decision: String,
    /// Disputed tests the reference passes: the code was wrong, A was right.
    pub test_right: u32,
    /// Disputed tests the reference fails: the test was wrong, B was right.
    pub test_wrong: u32,
    /// Disputed tests that did not run to a verdict against the reference.
    pub unknown: u32,
}

/// Every disputed test judged, and the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Disputes {
    pub tests: Vec<JudgedTest>,
    pub matrix: Vec<MatrixRow>,
}

/// The disputed tests recorded in `records`, in node order, with their sources.
fn recorded(records: &NodeRecords) -> Vec<(NodeId, String, Option<Verdict>, String)> {
    records
        .iter()
        .filter_map(|(id, r)| r.diagnosis.as_ref().map(|d| (id, d)))
        .flat_map(|(id, d)| {
            d.disputed
                .iter()
                .map(|t| (id.clone(), t.name.clone(), d.outcome, t.source.clone()))
        })
        .collect()
}

/// Judges the disputed tests of `records` against the implementation in `reference`
/// (a directory with `src/`); `None` when there is none to judge or nothing was disputed.
pub(super) async fn judge(
    reference: &Path,
    records: &NodeRecords,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Option<Disputes>, EvalError> {
    let disputed = recorded(records);
    if disputed.is_empty() || !reference.join("src").is_dir() {
        return Ok(None);
    }
    let scratch = super::scratch::prepare_reference(reference)?;
    let mut tests = Vec::new();
    for (i, (node, test, decision, source)) in disputed.into_iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(EvalError::Interrupted);
        }
        let rel = format!("{DISPUTED_DIR}/test_disputed_{i}.py");
        let path = scratch.path().join(&rel);
        std::fs::write(&path, &source).map_err(|source| EvalError::Scratch {
            path: path.clone(),
            source,
        })?;
        let run = runner
            .run_tests(scratch.path(), &rel, cancel)
            .await
            .map_err(|source| EvalError::Sandbox {
                file: rel.clone(),
                source,
            })?;
        if run.cancelled {
            return Err(EvalError::Interrupted);
        }
        let test_was_right = match (run.passed, run.failed, run.errors) {
            (p, 0, 0) if p > 0 => Some(true),
            (_, f, _) if f > 0 => Some(false),
            _ => None,
        };
        tests.push(JudgedTest {
            node,
            test,
            decision,
            test_was_right,
        });
    }
    let matrix = matrix(&tests);
    Ok(Some(Disputes { tests, matrix }))
}

/// The confusion matrix of `tests`: rows A, B, C, none, in that order, every row present.
pub fn matrix(tests: &[JudgedTest]) -> Vec<MatrixRow> {
    let decisions = [
        Some(Verdict::Implementation),
        Some(Verdict::Test),
        Some(Verdict::Environment),
        None,
    ];
    decisions
        .iter()
        .map(|decision| {
            let mut row = MatrixRow {
                decision: decision.map_or("none", Verdict::as_str).to_string(),
                ..MatrixRow::default()
            };
            for t in tests.iter().filter(|t| t.decision == *decision) {
                match t.test_was_right {
                    Some(true) => row.test_right += 1,
                    Some(false) => row.test_wrong += 1,
                    None => row.unknown += 1,
                }
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_counts_decisions_against_the_reference() {
        let judged = |decision, right| JudgedTest {
            node: "n".into(),
            test: "t".into(),
            decision,
            test_was_right: right,
        };
        let rows = matrix(&[
            judged(Some(Verdict::Test), Some(false)),
            judged(Some(Verdict::Test), Some(false)),
            judged(Some(Verdict::Test), Some(true)),
            judged(Some(Verdict::Implementation), Some(true)),
            judged(None, None),
        ]);
        let row = |d: &str| rows.iter().find(|r| r.decision == d).unwrap().clone();
        assert_eq!((row("test").test_right, row("test").test_wrong), (1, 2));
        assert_eq!(row("implementation").test_right, 1);
        assert_eq!(
            row("environment"),
            MatrixRow {
                decision: "environment".into(),
                ..MatrixRow::default()
            }
        );
        assert_eq!(row("none").unknown, 1);
        assert_eq!(rows.len(), 4);
        // The rows are named as the checkpoint names the decisions.
        for v in [Verdict::Implementation, Verdict::Test, Verdict::Environment] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
    }
}
