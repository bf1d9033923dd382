//! Read-only views of an output directory: `zerorepo status` (the generation report in
//! `assemble::report` builds on the same counts).
//!
//! It reads the compact checkpoint and the RPG copy the engine keeps in `.zerorepo/rpg.json`,
//! so it works while a generation is running and after it crashed.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::checkpoint::{CheckpointMap, NodeStatus, load_compact};
use crate::rpg::Rpg;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StatusCounts {
    pub total: usize,
    pub passed: usize,
    pub needs_review: usize,
    pub failed: usize,
    pub skipped: usize,
    pub in_progress: usize,
    pub pending: usize,
}

impl StatusCounts {
    fn add(&mut self, status: NodeStatus) {
        self.total += 1;
        match status {
            NodeStatus::Passed => self.passed += 1,
            NodeStatus::NeedsReview => self.needs_review += 1,
            NodeStatus::Failed => self.failed += 1,
            NodeStatus::Skipped => self.skipped += 1,
            NodeStatus::InProgress => self.in_progress += 1,
            NodeStatus::Pending => self.pending += 1,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FailedNode {
    pub id: String,
    pub status: NodeStatus,
    pub reason: String,
    pub retry_count: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StatusReport {
    pub overall: StatusCounts,
    pub subgraphs: BTreeMap<String, StatusCounts>,
    pub failed: Vec<FailedNode>,
    /// Mean time of the nodes that passed, times the nodes still to do.
    pub eta_seconds: Option<u64>,
    /// Model tokens spent, per role, over every node's latest record.
    pub tokens: crate::usage::UsageByRole,
    /// What the node loops did, over the records that say (function nodes).
    pub work: WorkSummary,
}

/// The loop's figures over a run: first-try rate, rounds, answers, and where time went.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WorkSummary {
    /// Nodes whose record says what their loop did.
    pub nodes: usize,
    /// Of them, those whose first round's chosen candidate passed every test.
    pub first_try: usize,
    /// Rounds, answers, sandbox runs and times summed over them (see
    /// [`crate::checkpoint::NodeWork`]).
    pub totals: crate::checkpoint::NodeWork,
    /// Their wall time: what is neither model nor sandbox is the engine's own.
    pub node_ms: u64,
}

impl WorkSummary {
    pub fn add(&mut self, work: &crate::checkpoint::NodeWork, duration_ms: u64) {
        self.nodes += 1;
        self.first_try += usize::from(work.first_try);
        let first_try = self.totals.first_try;
        self.totals.add(work);
        self.totals.first_try = first_try;
        self.node_ms += duration_ms;
    }

    /// One line for `status` and the report; `None` when no record says.
    pub fn render(&self) -> Option<String> {
        if self.nodes == 0 {
            return None;
        }
        let t = &self.totals;
        let per = |x: u32| f64::from(x) / self.nodes as f64;
        let engine_ms = self.node_ms.saturating_sub(t.model_ms + t.sandbox_ms);
        Some(format!(
            "{} nodes ran the loop: {} passed on the first try ({}); {:.1} rounds and {:.1} answers per node; {} sandbox runs; time: model {:.0} s, sandbox {:.0} s, engine {:.0} s",
            self.nodes,
            self.first_try,
            percent(self.first_try, self.nodes),
            per(t.rounds),
            per(t.answers),
            t.sandbox_runs,
            t.model_ms as f64 / 1000.0,
            t.sandbox_ms as f64 / 1000.0,
            engine_ms as f64 / 1000.0,
        ))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("{0} has no checkpoint: run `zerorepo generate RPG --out {0}` first")]
    NoCheckpoint(String),
    #[error("{0}")]
    Unreadable(#[source] crate::checkpoint::CompactError),
}

pub fn status(out: &Path) -> Result<StatusReport, StatusError> {
    let records = load_compact(out)
        .map_err(StatusError::Unreadable)?
        .ok_or_else(|| StatusError::NoCheckpoint(out.display().to_string()))?;
    let rpg: Option<Rpg> = std::fs::read_to_string(out.join(crate::layout::RPG_COPY))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    Ok(summarize(rpg.as_ref(), &records))
}

/// Counts per status and subgraph, failures, tokens and an ETA, from the RPG (when known) and
/// the checkpoint's records.
pub fn summarize(rpg: Option<&Rpg>, records: &CheckpointMap) -> StatusReport {
    let nodes: Vec<(String, String)> = match rpg {
        Some(rpg) => rpg
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.subgraph().to_string()))
            .collect(),
        None => records
            .keys()
            .map(|id| (id.clone(), "default".to_string()))
            .collect(),
    };
    let mut overall = StatusCounts::default();
    let mut subgraphs: BTreeMap<String, StatusCounts> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut durations = Vec::new();
    let mut tokens = crate::usage::UsageByRole::new();
    let mut work = WorkSummary::default();
    for (id, subgraph) in &nodes {
        let record = records.get(id);
        let status = record.map_or(NodeStatus::Pending, |r| r.status);
        overall.add(status);
        subgraphs.entry(subgraph.clone()).or_default().add(status);
        if let Some(r) = record {
            for (role, usage) in &r.tokens {
                tokens.entry(*role).or_default().add(*usage);
            }
            if let Some(w) = &r.work {
                work.add(w, r.duration_ms.unwrap_or_default());
            }
            if matches!(
                status,
                NodeStatus::Failed | NodeStatus::Skipped | NodeStatus::NeedsReview
            ) {
                failed.push(FailedNode {
                    id: id.clone(),
                    status,
                    reason: r.failure_reason.clone().unwrap_or_default(),
                    retry_count: r.retry_count,
                });
            }
            if status.is_usable() {
                durations.extend(r.duration_ms);
            }
        }
    }
    let remaining = (overall.pending + overall.in_progress) as u64;
    let eta_seconds = (!durations.is_empty() && remaining > 0)
        .then(|| durations.iter().sum::<u64>() / durations.len() as u64 * remaining / 1000);
    StatusReport {
        overall,
        subgraphs,
        failed,
        eta_seconds,
        tokens,
        work,
    }
}

pub(crate) fn percent(part: usize, total: usize) -> String {
    (part * 100)
        .checked_div(total)
        .map_or_else(|| "-".into(), |p| format!("{p}%"))
}

pub fn render_text(report: &StatusReport) -> String {
    let o = &report.overall;
    let review = if o.needs_review > 0 {
        format!("{} need review, ", o.needs_review)
    } else {
        String::new()
    };
    let mut out = format!(
        "{} nodes: {} passed ({}), {review}{} failed, {} skipped, {} in progress, {} pending\n",
        o.total,
        o.passed,
        percent(o.passed, o.total),
        o.failed,
        o.skipped,
        o.in_progress,
        o.pending
    );
    if !report.tokens.is_empty() {
        let parts: Vec<String> = report
            .tokens
            .iter()
            .map(|(role, u)| {
                format!(
                    "{} {} in / {} out",
                    role.as_str(),
                    u.prompt_tokens,
                    u.completion_tokens
                )
            })
            .collect();
        out.push_str(&format!("model tokens: {}\n", parts.join(", ")));
    }
    if let Some(work) = report.work.render() {
        out.push_str(&work);
        out.push('\n');
    }
    if let Some(eta) = report.eta_seconds {
        out.push_str(&format!(
            "ETA for the rest: about {}m{:02}s\n",
            eta / 60,
            eta % 60
        ));
    }
    out.push_str("\n| Subgraph | Nodes | Passed | Review | Failed | Skipped | Pending | Pass Rate |\n|---|---|---|---|---|---|---|---|\n");
    for (name, c) in &report.subgraphs {
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.total,
            c.passed,
            c.needs_review,
            c.failed,
            c.skipped,
            c.pending + c.in_progress,
            percent(c.passed, c.total)
        ));
    }
    if !report.failed.is_empty() {
        out.push_str("\nNot passed:\n");
        for f in &report.failed {
            out.push_str(&format!(
                "- {} [{}] {}\n",
                f.id,
                f.status.as_str(),
                f.reason
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::NodeWork;

    #[test]
    fn the_loop_line_gives_the_first_try_rate_and_the_time_split() {
        let mut work = WorkSummary::default();
        assert_eq!(work.render(), None);
        let node = |first_try, rounds| NodeWork {
            rounds,
            answers: 3 * rounds,
            first_try,
            sandbox_runs: 4,
            model_ms: 40_000,
            sandbox_ms: 1_000,
            ..NodeWork::default()
        };
        work.add(&node(true, 1), 42_000);
        work.add(&node(false, 3), 45_000);
        assert_eq!(
            work.render().unwrap(),
            "2 nodes ran the loop: 1 passed on the first try (50%); 2.0 rounds and 6.0 answers \
             per node; 8 sandbox runs; time: model 80 s, sandbox 2 s, engine 5 s"
        );
    }
}
