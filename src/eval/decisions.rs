//! The loop's decisions scored: for every node whose kept code is not the greedy answer (what
//! asking once gives), was leaving it right?
//!
//! The checkpoint records, per node, what moved it off the greedy answer (another candidate, a
//! fix, a fresh start, a stub) and the greedy answer's code ([`crate::records::Departure`]).
//! Here that code is merged back into a scratch copy of the output, in place of the kept one,
//! and the reference tests run again: the node's tests passed by the kept code against those
//! passed by the greedy answer make the decision better, worse or the same. Summed per kind of
//! decision, this is the matrix that says which kinds earn their place (issue 39's part 3).

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{EvalError, Evaluation, Reference};
use crate::records::{Departure, DepartureKind};
use crate::sandbox::TestRunner;

/// One node's departure from the greedy answer, scored by its reference tests.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScoredDeparture {
    pub node: crate::rpg::NodeId,
    /// `candidate`, `fix`, `fresh_start` or `stub`.
    pub kind: String,
    /// The node's reference tests.
    pub total: u32,
    /// Passed by the kept code.
    pub kept: u32,
    /// Passed with the greedy answer put back.
    pub greedy: u32,
}

/// One kind of decision over a run: how many of its departures helped, hurt or changed
/// nothing, and the reference tests they gained in all (negative: lost).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct DecisionRow {
    pub kind: String,
    pub better: u32,
    pub worse: u32,
    pub same: u32,
    pub tests_gained: i64,
}

/// Every departure scored, and the matrix by kind.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Decisions {
    pub nodes: Vec<ScoredDeparture>,
    pub matrix: Vec<DecisionRow>,
}

/// Scores the departures the checkpoint records against `kept`, the evaluation of the output
/// as generated; `None` when no node departed from its greedy answer.
pub(super) async fn score(
    reference: &Reference,
    kept: &Evaluation,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Option<Decisions>, EvalError> {
    let Some(records) = &reference.records else {
        return Ok(None);
    };
    let mut nodes = Vec::new();
    for (id, departure) in records
        .iter()
        .filter_map(|(id, r)| r.departure.as_ref().map(|d| (id, d)))
    {
        let Some(score) = kept.nodes.iter().find(|n| &n.id == id) else {
            continue; // no reference test names the node: nothing to score
        };
        let Some(file) = reference
            .rpg
            .nodes
            .iter()
            .find(|n| &n.id == id)
            .and_then(|n| n.file_path.clone())
        else {
            continue;
        };
        let greedy = with_greedy(reference, &file, departure, runner, cancel).await?;
        let greedy = greedy.nodes.iter().find(|n| &n.id == id);
        nodes.push(ScoredDeparture {
            node: id.clone(),
            kind: departure.kind.as_str().to_string(),
            total: score.tally.total,
            kept: score.tally.passed,
            greedy: greedy.map_or(0, |g| g.tally.passed),
        });
    }
    if nodes.is_empty() {
        return Ok(None);
    }
    let matrix = matrix(&nodes);
    Ok(Some(Decisions { nodes, matrix }))
}

/// The evaluation of the output with the greedy answer of one node merged back into `file`.
async fn with_greedy(
    reference: &Reference,
    file: &str,
    departure: &Departure,
    runner: &dyn TestRunner,
    cancel: &CancellationToken,
) -> Result<Evaluation, EvalError> {
    let scratch = super::scratch::prepare(&reference.out, &reference.dir.join("tests"))?;
    let path = scratch.path().join(file);
    let fail = |source| EvalError::Scratch {
        path: path.clone(),
        source,
    };
    let module = std::fs::read_to_string(&path).map_err(fail)?;
    let merged = crate::edit::merge_python(&module, &departure.prior);
    std::fs::write(&path, merged).map_err(fail)?;
    let (runs, sandbox) = super::run_files(reference, scratch.path(), runner, cancel).await?;
    Ok(super::score::score(reference, &runs, sandbox))
}

/// Rows in a fixed order, every kind present.
pub fn matrix(nodes: &[ScoredDeparture]) -> Vec<DecisionRow> {
    let kinds = [
        DepartureKind::Candidate,
        DepartureKind::Fix,
        DepartureKind::FreshStart,
        DepartureKind::Stub,
    ];
    kinds
        .iter()
        .map(|kind| {
            let mut row = DecisionRow {
                kind: kind.as_str().to_string(),
                ..DecisionRow::default()
            };
            for n in nodes.iter().filter(|n| n.kind == kind.as_str()) {
                match n.kept.cmp(&n.greedy) {
                    std::cmp::Ordering::Greater => row.better += 1,
                    std::cmp::Ordering::Less => row.worse += 1,
                    std::cmp::Ordering::Equal => row.same += 1,
                }
                row.tests_gained += i64::from(n.kept) - i64::from(n.greedy);
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_counts_each_kind_against_the_greedy_answer() {
        let n = |kind: &str, kept, greedy| ScoredDeparture {
            node: "n".into(),
            kind: kind.into(),
            total: 5,
            kept,
            greedy,
        };
        let rows = matrix(&[
            n("candidate", 3, 1),
            n("candidate", 1, 2),
            n("fix", 2, 2),
            n("stub", 0, 4),
        ]);
        let row = |kind: &str| rows.iter().find(|r| r.kind == kind).unwrap().clone();
        assert_eq!(
            (
                row("candidate").better,
                row("candidate").worse,
                row("candidate").tests_gained
            ),
            (1, 1, 1)
        );
        assert_eq!((row("fix").same, row("fix").tests_gained), (1, 0));
        assert_eq!((row("stub").worse, row("stub").tests_gained), (1, -4));
        assert_eq!(
            row("fresh_start"),
            DecisionRow {
                kind: "fresh_start".into(),
                ..Default::default()
            }
        );
        assert_eq!(rows.len(), 4);
    }
}
